/**
 * The hosted page's languages: the EU's 24 official languages in its protocol order (by each language's
 * own name: Български, Español, Čeština, …), with Arabic first (al-ʿArabiyya) and Turkish and Ukrainian
 * after Svenska. The language switch lists them in this order.
 */
export const languageCodes = ['ar', 'bg', 'es', 'cs', 'da', 'de', 'et', 'el', 'en', 'fr', 'ga', 'hr', 'it', 'lv', 'lt', 'hu', 'mt', 'nl', 'pl', 'pt', 'ro', 'sk', 'sl', 'fi', 'sv', 'tr', 'uk'] as const
export type Language = (typeof languageCodes)[number]

/** The dashboard speaks fewer: an integrator whose language it lacks reads English. */
export const dashboardLanguageCodes = ['es', 'de', 'en', 'fr', 'it'] as const satisfies readonly Language[]
export type DashboardLanguage = (typeof dashboardLanguageCodes)[number]

/** Languages written right to left: their pages carry `dir="rtl"` and the stylesheet uses logical properties. */
const rightToLeft: ReadonlySet<Language> = new Set(['ar'])

/** The direction `lang` is written in. */
export function directionOf(lang: Language): 'rtl' | 'ltr' {
  return rightToLeft.has(lang) ? 'rtl' : 'ltr'
}
