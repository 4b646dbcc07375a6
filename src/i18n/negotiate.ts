import { dashboardLanguageCodes, languageCodes, type DashboardLanguage, type Language } from './language-codes.ts'

/**
 * The language to answer in, of those `supported`: an explicit `?lang=` wins, then the best
 * `Accept-Language` match by quality value (RFC 9110 §12.5.4) on the primary subtag (pt-BR is pt), then
 * English. A list, not an object's keys: `constructor` is "in" every object.
 */
function negotiate<L extends string>(supported: readonly L[], acceptLanguage: string | null | undefined, explicit: string | null | undefined): L {
  if (isOneOf(supported, explicit)) return explicit
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part) => {
      const [tag = '', ...params] = part.trim().toLowerCase().split(';')
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean)
      return { primary: tag.split('-')[0]!, q: q === undefined ? 1 : Number(q) }
    })
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q)
  // Both lists hold English.
  return (ranked.find((entry) => isOneOf(supported, entry.primary))?.primary as L | undefined) ?? ('en' as L)
}

function isOneOf<L extends string>(supported: readonly L[], value: string | null | undefined): value is L {
  return typeof value === 'string' && (supported as readonly string[]).includes(value)
}

/** One of the hosted page's languages (own codes only: `constructor` is none). */
export function isLanguage(value: string | null | undefined): value is Language {
  return isOneOf(languageCodes, value)
}

/** The hosted page's language (27 of them). */
export function pickLanguage(acceptLanguage: string | null | undefined, explicit?: string | null): Language {
  return negotiate(languageCodes, acceptLanguage, explicit)
}

/** One of the dashboard's languages. */
export function isDashboardLanguage(value: string | null | undefined): value is DashboardLanguage {
  return isOneOf(dashboardLanguageCodes, value)
}

/** The dashboard's language: a visitor who prefers Polish, then German, reads the dashboard in German. */
export function pickDashboardLanguage(acceptLanguage: string | null | undefined, explicit?: string | null): DashboardLanguage {
  return negotiate(dashboardLanguageCodes, acceptLanguage, explicit)
}
