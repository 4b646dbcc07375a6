/**
 * Contrast of colours as WCAG 2.2 defines it (§ "contrast ratio", "relative luminance"): the accent colour a
 * client picks must keep the page readable, so it is refused when its text would fall under AA.
 */

/** `#rrggbb`, the only form of colour a client gives us. */
export type HexColour = `#${string}`

/** WCAG 2.2 SC 1.4.3 (Contrast, Minimum), level AA: "at least 4.5:1" for text, with no rounding up. */
export const AA_TEXT_CONTRAST = 4.5

/**
 * Where the accent meets text on the hosted page (public/ofage.css, and the rules of src/branding/theme.ts):
 * white text on an accent-coloured button, and the accent as link text on the card, on the page around it
 * (the language switch) and in an alert. The lowest of these decides.
 */
export const ACCENT_PAIRS: readonly { against: HexColour; where: string }[] = [
  { against: '#ffffff', where: 'white text on an accent button; accent links on the card' },
  { against: '#eef1f5', where: 'accent links on the page background (the language switch)' },
  { against: '#fdecea', where: 'an accent link inside an alert' },
]

/** The colour as `#rrggbb` in lower case, or undefined when it is not six hex digits after `#`. */
export function readHexColour(text: string): HexColour | undefined {
  const trimmed = text.trim()
  return /^#[0-9a-fA-F]{6}$/.test(trimmed) ? (trimmed.toLowerCase() as HexColour) : undefined
}

/** WCAG 2.2 "relative luminance": sRGB channels linearised, weighted 0.2126, 0.7152, 0.0722. */
export function relativeLuminance(colour: HexColour): number {
  const value = Number.parseInt(colour.slice(1), 16)
  const linear = (channel: number) => {
    const c = channel / 255
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * linear(value >> 16) + 0.7152 * linear((value >> 8) & 0xff) + 0.0722 * linear(value & 0xff)
}

/** WCAG 2.2 "contrast ratio": (L1 + 0.05) / (L2 + 0.05), the lighter colour's luminance over the darker's; from 1 to 21. */
export function contrastRatio(a: HexColour, b: HexColour): number {
  const [lighter, darker] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number]
  return (lighter + 0.05) / (darker + 0.05)
}

/** The accent's lowest contrast with the colours it meets on the page, and whether that reaches AA. */
export function accentContrast(accent: HexColour): { ratio: number; passes: boolean } {
  const ratio = Math.min(...ACCENT_PAIRS.map(({ against }) => contrastRatio(accent, against)))
  return { ratio, passes: ratio >= AA_TEXT_CONTRAST }
}

/** A ratio as people read it, "3.97:1": cut, never rounded up, so that a failing colour never shows 4.50:1. */
export function formatRatio(ratio: number): string {
  return `${(Math.floor(ratio * 100) / 100).toFixed(2)}:1`
}

/**
 * The button's hover colour: each channel 15% darker. Darker keeps white text on it at least as readable,
 * since a lower luminance only raises its contrast with white.
 */
export function darken(colour: HexColour): HexColour {
  const value = Number.parseInt(colour.slice(1), 16)
  const channel = (shift: number) => Math.round(((value >> shift) & 0xff) * 0.85)
  return `#${[16, 8, 0].map((shift) => channel(shift).toString(16).padStart(2, '0')).join('')}`
}
