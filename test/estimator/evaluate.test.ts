import { describe, expect, test } from 'bun:test'
import { parseLabels, parseUtkFaceFields } from '../../src/estimator/eval-labels.ts'
import { formatEvaluation } from '../../src/estimator/eval-report.ts'
import { evaluateEstimates, gridCutoffs, intervalRuleBuffer, policyCutoffs, type Sample } from '../../src/estimator/evaluate.ts'
import { measureProportion, wilsonInterval } from '../../src/estimator/proportion.ts'

describe('wilsonInterval', () => {
  // Reference values: Newcombe, "Two-sided confidence intervals for the single proportion", Stat. Med. 1998, table I.
  test.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ])('%i of %i: [%d, %d]', (count, n, low, high) => {
    const interval = wilsonInterval(count, n)!
    expect(interval.low).toBeCloseTo(low, 4)
    expect(interval.high).toBeCloseTo(high, 4)
  })

  test('is exactly 0 or 1 at the edges and null without any trial', () => {
    expect(wilsonInterval(0, 10)!.low).toBe(0)
    expect(wilsonInterval(10, 10)!.high).toBe(1)
    expect(wilsonInterval(5, 10)!.low).toBeCloseTo(1 - wilsonInterval(5, 10)!.high, 12)
    expect(wilsonInterval(0, 0)).toBeNull()
  })

  test('a proportion counts only the ages in its range, both ends included', () => {
    const rows = [12, 13, 15, 17, 18].map((trueAge) => ({ trueAge }))
    expect(measureProportion(rows, 13, 17, (row) => row.trueAge > 14)).toMatchObject({ from: 13, to: 17, n: 3, count: 2 })
    expect(measureProportion(rows, 30, null, () => true)).toEqual({ from: 30, to: null, n: 0, count: 0, rate: null, low: null, high: null })
  })
})

describe('evaluateEstimates', () => {
  const samples: Sample[] = [
    { trueAge: 15, estimate: 19 },
    { trueAge: 16, estimate: 27 },
    { trueAge: 17, estimate: null },
    { trueAge: 10, estimate: 26 },
    { trueAge: 20, estimate: 24 },
    { trueAge: 30, estimate: 28 },
    { trueAge: 40, estimate: 46 },
  ]

  test('mean absolute error overall and by band, photos without one face counted apart', () => {
    const result = evaluateEstimates(samples, [{ threshold: 18, buffer: 0 }])
    expect(result).toMatchObject({ samples: 7, estimated: 6, noSingleFace: 1 })
    expect(result.mae).toBeCloseTo((4 + 11 + 16 + 4 + 2 + 6) / 6)
    expect(result.bands.find((b) => b.label === '13-17')).toEqual({ label: '13-17', n: 2, mae: 7.5 })
    expect(result.bands.find((b) => b.label === '25-34')).toEqual({ label: '25-34', n: 1, mae: 2 })
  })

  test('false accepts are people under the threshold whose estimate reaches threshold + buffer', () => {
    const [row] = evaluateEstimates(samples, [{ threshold: 18, buffer: 8 }]).decisions
    expect(row).toMatchObject({ threshold: 18, buffer: 8, cutoff: 26 })
    // 13-17: the 16-year-old estimated 27 passes, the 15-year-old does not; the 10-year-old at 26 passes too.
    expect(row!.falseAccepts.fiveYearsUnder).toMatchObject({ from: 13, to: 17, n: 2, count: 1, rate: 0.5 })
    expect(row!.falseAccepts.allUnder).toMatchObject({ from: 0, to: 17, n: 3, count: 2 })
  })

  test('false rejects are split into threshold..+6, +7 and over, +12 and over', () => {
    const [row] = evaluateEstimates(samples, [{ threshold: 18, buffer: 8 }]).decisions
    expect(row!.falseRejects.allOver).toMatchObject({ from: 18, to: null, n: 3, count: 1 })
    expect(row!.falseRejects.nearThreshold).toMatchObject({ from: 18, to: 24, n: 1, count: 1, rate: 1 })
    expect(row!.falseRejects.sevenYearsOver).toMatchObject({ from: 25, to: null, n: 2, count: 0, rate: 0 })
    expect(row!.falseRejects.twelveYearsOver).toMatchObject({ from: 30, to: null, n: 2, count: 0 })
    expect(row!.falseRejects.sevenYearsOver.high).toBeCloseTo(wilsonInterval(0, 2)!.high)
  })

  test('the policy gives one row per threshold with its own buffer; a grid crosses thresholds and buffers', () => {
    const bufferFor = (threshold: number) => (threshold >= 21 ? 7 : 8)
    expect(policyCutoffs([18, 21, 25], bufferFor)).toEqual([
      { threshold: 18, buffer: 8 },
      { threshold: 21, buffer: 7 },
      { threshold: 25, buffer: 7 },
    ])
    expect(gridCutoffs([18, 21], [0, 7])).toHaveLength(4)
    const result = evaluateEstimates(samples, policyCutoffs([18, 21, 25], bufferFor))
    expect(result.decisions.map((row) => row.cutoff)).toEqual([26, 28, 32])
  })

  test('without gender and group in the samples there is no group table', () => {
    expect(evaluateEstimates(samples, [{ threshold: 18, buffer: 8 }]).groups).toBeNull()
  })

  test('per gender and group: false accepts of the 5 years under, false rejects of threshold + 7 and over', () => {
    const tagged: Sample[] = [
      { trueAge: 16, estimate: 27, gender: 'female', group: 'black' },
      { trueAge: 15, estimate: 19, gender: 'male', group: 'black' },
      { trueAge: 30, estimate: 22, gender: 'female', group: 'asian' },
      { trueAge: 40, estimate: 46, gender: 'male', group: 'white' },
      { trueAge: 20, estimate: 24, gender: 'male', group: 'white' },
    ]
    const grid = evaluateEstimates(tagged, gridCutoffs([18], [0, 8]), [{ threshold: 18, buffer: 8 }])
    expect(grid.decisions).toHaveLength(2)
    expect(grid.groups).toHaveLength(1)
    const rows = grid.groups![0]!.rows
    const find = (label: string) => rows.find((row) => row.label === label)!
    expect(rows.map((row) => row.label)).toEqual(['all', 'male', 'female', 'white', 'black', 'asian', 'indian', 'other'])
    expect(find('all')).toMatchObject({ dimension: 'all', n: 5, falseAccepts: { n: 2, count: 1 }, falseRejects: { from: 25, n: 2, count: 1 } })
    expect(find('black')).toMatchObject({ dimension: 'group', n: 2, falseAccepts: { n: 2, count: 1, rate: 0.5 } })
    expect(find('asian')).toMatchObject({ n: 1, mae: 8, falseRejects: { n: 1, count: 1, rate: 1 } })
    expect(find('female')).toMatchObject({ dimension: 'gender', falseAccepts: { count: 1 }, falseRejects: { count: 1 } })
    expect(find('indian')).toMatchObject({ n: 0, mae: null, falseAccepts: { n: 0, rate: null } })
  })

  test('the report prints every decision row with counts and intervals', () => {
    const text = formatEvaluation(evaluateEstimates(samples, gridCutoffs([18, 21], [0, 7])), 0.6)
    expect(text).toContain('mean absolute error: 7.17 years')
    expect(text.split('\n').filter((line) => line.startsWith('threshold '))).toHaveLength(4)
    expect(text).toMatch(/13-17 +1\/2 +50.0% \(9.5-90.5%\)/)
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

describe('parseUtkFaceFields', () => {
  test('reads gender and group from age_gender_race_datetime file names, in folders too', () => {
    expect(parseUtkFaceFields('16_1_1_made-up.jpg')).toEqual({ gender: 'female', group: 'black' })
    expect(parseUtkFaceFields('faces/34_0_2_2017.jpg.chip.jpg')).toEqual({ gender: 'male', group: 'asian' })
    expect(parseUtkFaceFields('70_0_4_x.jpg')).toEqual({ gender: 'male', group: 'other' })
  })

  test('any other name carries no group', () => {
    for (const name of ['a.jpg', '16_2_1_x.jpg', '16_1_5_x.jpg', '16_1.jpg', 'x16_1_1_y.jpg']) expect(parseUtkFaceFields(name)).toBeNull()
  })
})

describe('intervalRuleBuffer', () => {
  // With no false accept in n photos the Wilson upper bound is z²/(n + z²): at most 5% from n = 73 on
  // (3.8415 / 76.8415 = 0.04999), over it at n = 72 (0.0506).
  const teens = (n: number): Sample[] => Array.from({ length: n }, (_, i) => ({ trueAge: 13 + (i % 5), estimate: 20 + (i % 5) }))

  test('chooses the smallest buffer whose upper bound, not the point estimate, of 13-17 approved is at most 5%', () => {
    // Estimates reach 24: cut-off 25 (buffer 7) approves none of 73, whose upper bound is just under 5%.
    expect(intervalRuleBuffer(teens(73), 18)).toBe(7)
    // At buffer 6 the point estimate is already 20% (the estimates of 24), so the bound cannot be met below 7.
    expect(evaluateEstimates(teens(73), [{ threshold: 18, buffer: 6 }]).decisions[0]!.falseAccepts.fiveYearsUnder.count).toBeGreaterThan(0)
  })

  test('with too few photos of the five years under, no buffer meets it, however large', () => {
    expect(intervalRuleBuffer(teens(72), 18)).toBeNull()
    expect(intervalRuleBuffer([{ trueAge: 40, estimate: 10 }], 18)).toBeNull()
  })

  test('only the five years under count: adults and younger children leave it unchanged', () => {
    const others: Sample[] = [
      { trueAge: 40, estimate: 12 },
      { trueAge: 8, estimate: 30 },
      { trueAge: 12, estimate: 40 },
      { trueAge: 15, estimate: null },
    ]
    expect(intervalRuleBuffer([...teens(73), ...others], 18)).toBe(7)
  })
})
