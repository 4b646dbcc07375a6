import { describe, expect, test } from 'bun:test'
import { evaluateEstimates, formatEvaluation, parseLabels } from '../../src/estimator/evaluate.ts'

describe('evaluateEstimates', () => {
  const samples = [
    { trueAge: 15, estimate: 19 },
    { trueAge: 16, estimate: 27 },
    { trueAge: 17, estimate: null },
    { trueAge: 20, estimate: 24 },
    { trueAge: 30, estimate: 28 },
    { trueAge: 40, estimate: 46 },
  ]

  test('mean absolute error overall and by band, photos without one face counted apart', () => {
    const result = evaluateEstimates(samples, [18], [0])
    expect(result).toMatchObject({ samples: 6, estimated: 5, noSingleFace: 1 })
    expect(result.mae).toBeCloseTo((4 + 11 + 4 + 2 + 6) / 5)
    expect(result.bands.find((b) => b.label === '13-17')).toEqual({ label: '13-17', n: 2, mae: 7.5 })
    expect(result.bands.find((b) => b.label === 'under 13')).toEqual({ label: 'under 13', n: 0, mae: null })
  })

  test('false accepts are minors whose estimate clears threshold + buffer; false rejects adults who do not', () => {
    const [noBuffer, buffer7] = evaluateEstimates(samples, [18], [0, 7]).rates
    expect(noBuffer).toMatchObject({ under: 2, falseAccepts: 2, far: 1, over: 3, falseRejects: 0, frr: 0 })
    // Cut-off 25: the 16-year-old estimated at 27 still passes; the 20-year-old estimated at 24 does not.
    expect(buffer7).toMatchObject({ under: 2, falseAccepts: 1, far: 0.5, over: 3, falseRejects: 1 })
    expect(buffer7!.frr).toBeCloseTo(1 / 3)
  })

  test('the report prints every row', () => {
    const text = formatEvaluation(evaluateEstimates(samples, [18, 21], [0, 7]))
    expect(text).toContain('mean absolute error: 5.40 years')
    expect(text.split('\n').filter((line) => /^\s+(18|21)\s+/.test(line))).toHaveLength(4)
  })
})

describe('parseLabels', () => {
  test('reads path,age with or without a header, skipping blanks and comments', () => {
    expect(parseLabels('path,age\nphotos/a.jpg,17\n\n# note\n"b, c.jpg",42\n')).toEqual([
      { path: 'photos/a.jpg', age: 17 },
      { path: 'b, c.jpg', age: 42 },
    ])
  })

  test('a malformed line names its number', () => {
    expect(() => parseLabels('a.jpg,17\nb.jpg,old\n')).toThrow('line 2')
  })
})
