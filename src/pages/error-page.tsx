import type { ErrorCode, ErrorHint } from '../errors.ts'
import { languages } from '../i18n/languages.ts'
import type { Language } from '../i18n/language-codes.ts'
import { Layout } from './layout.tsx'

/** An error the visitor can read: a plain sentence, the spec's error code, and where to go next. */
export function ErrorPage({ lang, code, hint }: { lang: Language; code: ErrorCode; hint?: ErrorHint | undefined }) {
  const t = languages[lang]
  return (
    <Layout lang={lang} title={t.errorTitle}>
      <h1 safe>{t.errorTitle}</h1>
      <div role="alert" class="alert">
        <p safe>{hint ? t.errorHints[hint] : t.errors[code]}</p>
      </div>
      <p class="code">
        <span safe>{t.errorCode}</span>: <code safe>{code}</code>
      </p>
      <p safe>{t.closeHint}</p>
    </Layout>
  )
}
