import type { PropsWithChildren } from '@kitajs/html'
import { languages, type Language } from './i18n.ts'

type LayoutProps = PropsWithChildren<{
  lang: Language
  title: string
  /** Where the language links point, without `lang`; omitted where switching makes no sense. */
  switchPath?: string
  /** Our stylesheet's path where the page is served from another host's path (the gate's `/.ofage/`). */
  stylesheet?: string
}>

/** The frame of every page: language, viewport, our one stylesheet, and the language switch. */
export function Layout({ lang, title, switchPath, stylesheet = '/assets/ofage.css', children }: LayoutProps) {
  return (
    <html lang={lang}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title safe>{title}</title>
        <link rel="stylesheet" href={stylesheet} />
      </head>
      <body>
        <main class="card">{children}</main>
        {switchPath !== undefined && <LanguageSwitch lang={lang} switchPath={switchPath} />}
      </body>
    </html>
  )
}

/** Links to the same page in every other language; the current one is named, not linked. */
export function LanguageSwitch({ lang, switchPath }: { lang: Language; switchPath: string }) {
  return (
    <nav class="languages" aria-label={languages[lang].languageSwitch}>
      {Object.entries(languages).map(([code, messages]) =>
        code === lang ? (
          <span aria-current="true" lang={code} safe>
            {messages.languageName}
          </span>
        ) : (
          <a href={withLang(switchPath, code)} hreflang={code} lang={code} safe>
            {messages.languageName}
          </a>
        ),
      )}
    </nav>
  )
}

export function withLang(path: string, lang: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}lang=${lang}`
}
