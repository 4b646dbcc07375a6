import type { ErrorCode } from '../errors.ts'
import type { DashboardLanguage } from '../i18n/language-codes.ts'
import { dashboardLanguages, languages } from '../i18n/languages.ts'
import { DashboardLayout } from './layout.tsx'

/**
 * An error under /dashboard, in the dashboard's words (the hosted page's error page speaks to a visitor sent
 * by a site): a sentence, the error code, and the way back. Rendered by the root app's one error mapping.
 */
export function DashboardErrorPage({ lang, code }: { lang: DashboardLanguage; code: ErrorCode }) {
  const t = dashboardLanguages[lang]
  return (
    <DashboardLayout view={{ lang, explicit: false }} title={t.errorTitle} switchPath="/dashboard">
      <h1 safe>{t.errorTitle}</h1>
      <div role="alert" class="alert">
        <p safe>{t.errors[code] ?? languages[lang].errors[code]}</p>
      </div>
      <p class="code">
        <span safe>{t.errorCode}</span>: <code safe>{code}</code>
      </p>
      <p>
        <a href="/dashboard" safe>
          {t.dashboard}
        </a>
      </p>
    </DashboardLayout>
  )
}
