import type { PropsWithChildren } from '@kitajs/html'
import { directionOf, languageCodes, type Language } from '../i18n/language-codes.ts'
import { languages } from '../i18n/languages.ts'

type LayoutProps = PropsWithChildren<{
  lang: Language
  title: string
  /** Where the language links point, without `lang`; omitted where switching makes no sense. */
  switchPath?: string
  /** Our stylesheet's path where the page is served from another host's path (the gate's `/.ofage/`). */
  stylesheet?: string
  /** A site's accent colour (src/branding/), linked after ours so that its rules win; none for a site that set none. */
  themeStylesheet?: string | undefined
}>

/** The frame of every page: language and direction, viewport, our one stylesheet, and the language switch. */
export function Layout({ lang, title, switchPath, stylesheet = '/assets/ofage.css', themeStylesheet, children }: LayoutProps) {
  return (
    <html lang={lang} dir={rtlOnly(lang)}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title safe>{title}</title>
        <link rel="stylesheet" href={stylesheet} />
        {themeStylesheet !== undefined && <link rel="stylesheet" href={themeStylesheet} />}
      </head>
      <body>
        <main class="card">{children}</main>
        {switchPath !== undefined && <LanguageSwitch lang={lang} switchPath={switchPath} />}
      </body>
    </html>
  )
}

/** `dir="rtl"` where the language needs it; left-to-right is the default, so no attribute then. */
export function rtlOnly(lang: Language): 'rtl' | undefined {
  return directionOf(lang) === 'rtl' ? 'rtl' : undefined
}

/**
 * The same page in each of `choices`, each named in its own language; the current one is named, not linked.
 * Folded into a disclosure: 27 names would otherwise fill a phone's screen under every page.
 */
export function LanguageSwitch({ lang, switchPath, choices = languageCodes }: { lang: Language; switchPath: string; choices?: readonly Language[] }) {
  const t = languages[lang]
  // A name written the other way round from the page is marked so (العربية on an English page, and back).
  const direction = (code: Language) => (directionOf(code) === directionOf(lang) ? undefined : directionOf(code))
  return (
    <nav class="languages" aria-label={t.languageSwitch}>
      <details>
        <summary safe>{`${t.languageSwitch}: ${t.languageName}`}</summary>
        <ul>
          {choices.map((code) => (
            <li>
              {code === lang ? (
                <span aria-current="true" lang={code} dir={direction(code)} safe>
                  {languages[code].languageName}
                </span>
              ) : (
                <a href={withLang(switchPath, code)} hreflang={code} lang={code} dir={direction(code)} safe>
                  {languages[code].languageName}
                </a>
              )}
            </li>
          ))}
        </ul>
      </details>
    </nav>
  )
}

export function withLang(path: string, lang: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}lang=${lang}`
}
