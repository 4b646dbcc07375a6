import { describe, expect, test } from 'bun:test'
import { AA_TEXT_CONTRAST, accentContrast, contrastRatio, darken, formatRatio, readHexColour, relativeLuminance, type HexColour } from '../../src/branding/contrast.ts'

/**
 * WCAG 2.2's relative luminance and contrast ratio against published values: the definition's own end points
 * (black on white is 21:1, a colour on itself 1:1), and the ratios WebAIM's contrast checker publishes for
 * these pairs (webaim.org/resources/contrastchecker: #767676 on white 4.54:1, the lightest grey that passes;
 * #777777 4.47:1; pure blue 8.59:1; web green #008000 5.13:1).
 */
describe('WCAG 2.2 contrast ratio', () => {
  test('black on white is 21:1 and a colour on itself 1:1, in either order', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBe(21)
    expect(contrastRatio('#ffffff', '#000000')).toBe(21)
    expect(contrastRatio('#1d4ed8', '#1d4ed8')).toBe(1)
    expect(relativeLuminance('#ffffff')).toBe(1)
    expect(relativeLuminance('#000000')).toBe(0)
  })

  test.each([
    ['#767676', 4.54],
    ['#777777', 4.47],
    ['#0000ff', 8.59],
    ['#008000', 5.13],
  ] as [HexColour, number][])('%s on white is WebAIM’s %d:1 (to the hundredth, cut as WebAIM cuts)', (colour, published) => {
    expect(formatRatio(contrastRatio(colour, '#ffffff'))).toBe(`${published.toFixed(2)}:1`)
  })

  test('AA for text is 4.5:1 with no rounding up: #767676 passes on white and #777777 does not', () => {
    expect(AA_TEXT_CONTRAST).toBe(4.5)
    expect(contrastRatio('#767676', '#ffffff')).toBeGreaterThanOrEqual(4.5)
    expect(contrastRatio('#777777', '#ffffff')).toBeLessThan(4.5)
  })
})

describe('the accent colour', () => {
  test('passes only when white text on it and it as link text on every light background of the page reach 4.5:1', () => {
    // Our own blue passes everywhere; pure black too.
    expect(accentContrast('#1d4ed8').passes).toBe(true)
    expect(accentContrast('#000000')).toEqual({ ratio: contrastRatio('#000000', '#fdecea'), passes: true })
    // #767676 passes on white but not on the page's grey background or an alert's pink: the lowest decides.
    expect(accentContrast('#767676')).toEqual({ ratio: contrastRatio('#767676', '#fdecea'), passes: false })
    expect(accentContrast('#ffff00').passes).toBe(false)
    expect(accentContrast('#ff0000').passes).toBe(false)
  })

  test('reads #rrggbb in either case, with spaces around it, and nothing else', () => {
    expect(readHexColour(' #1D4ED8 ')).toBe('#1d4ed8')
    for (const text of ['1d4ed8', '#1d4ed', '#1d4ed8ff', '#xyzxyz', 'blue', 'rgb(0,0,0)', '#1d4ed8;}body{', '']) expect(readHexColour(text)).toBeUndefined()
  })

  test('the hover colour is darker, so white text on it stays readable', () => {
    expect(darken('#1d4ed8')).toBe('#1942b8')
    for (const colour of ['#1d4ed8', '#14632c', '#595959'] as HexColour[]) {
      expect(contrastRatio(darken(colour), '#ffffff')).toBeGreaterThan(contrastRatio(colour, '#ffffff'))
    }
  })

  test('a ratio is shown cut, never rounded up to a pass', () => {
    expect(formatRatio(4.4999)).toBe('4.49:1')
    expect(formatRatio(21)).toBe('21.00:1')
  })
})
