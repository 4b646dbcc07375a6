import type { DashboardLanguage, Language } from '../i18n/language-codes.ts'
import { pickDashboardLanguage, pickLanguage } from '../i18n/negotiate.ts'

/** The language a request asks for: `?lang=` when it names one we speak, else the best of `Accept-Language`. */
export function requestLanguage(request: Request, explicit?: string | null): Language {
  return pickLanguage(request.headers.get('accept-language'), explicit)
}

/** The same choice among the dashboard's languages, English where it speaks none of them. */
export function requestDashboardLanguage(request: Request, explicit?: string | null): DashboardLanguage {
  return pickDashboardLanguage(request.headers.get('accept-language'), explicit)
}
