import { pickLanguage, type Language } from '../pages/i18n.ts'

/** The language a request asks for: `?lang=` when it names one we speak, else the best of `Accept-Language`. */
export function requestLanguage(request: Request, explicit?: string | null): Language {
  return pickLanguage(request.headers.get('accept-language'), explicit)
}
