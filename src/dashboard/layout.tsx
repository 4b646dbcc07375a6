import type { PropsWithChildren } from '@kitajs/html'
import { dashboardLanguageCodes, type DashboardLanguage } from '../i18n/language-codes.ts'
import { LanguageSwitch, withLang } from '../pages/layout.tsx'
import { dashboardLanguages } from '../i18n/languages.ts'

/** The language of a dashboard page, and whether the user chose it (`?lang=`): then links keep it. */
export type View = { lang: DashboardLanguage; explicit: boolean }

/** A dashboard path, with `lang` when the user chose the language. */
export function href(view: View, path: string): string {
  return view.explicit ? withLang(path, view.lang) : path
}

/** The signed-in user as the frame shows them, with the CSRF token of the sign-out forms. */
export type Account = { email: string; clientId: string; clientName: string; sandbox: boolean; csrf: string }

type LayoutProps = PropsWithChildren<{
  view: View
  title: string
  account?: Account | undefined
  /** Where the language links point, without `lang`. */
  switchPath: string
}>

/** The frame of every dashboard page: who is signed in, the navigation, the page, the language switch. */
export function DashboardLayout({ view, title, account, switchPath, children }: LayoutProps) {
  const t = dashboardLanguages[view.lang]
  return (
    <html lang={view.lang}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title safe>{`${title} · ofage`}</title>
        <link rel="stylesheet" href="/assets/ofage.css" />
      </head>
      <body class="dashboard">
        <header class="topbar">
          <p class="brand">
            ofage <span safe>{t.dashboard}</span>
            {account && (
              <>
                {' · '}
                <span safe>{account.clientName}</span>
              </>
            )}
          </p>
          {account && (
            <nav aria-label={t.mainNav}>
              <ul>
                {(
                  [
                    ['/dashboard/audit', t.auditLog],
                    ['/dashboard/usage', t.usage],
                    ['/dashboard/webhooks', t.webhooksPage.nav],
                    ['/dashboard/settings', t.settings],
                  ] as const
                ).map(([path, text]) => (
                  <li>
                    <a href={href(view, path)} safe>
                      {text}
                    </a>
                  </li>
                ))}
                <li>
                  <form method="post" action={href(view, '/dashboard/sign-out')}>
                    <input type="hidden" name="csrf" value={account.csrf} />
                    <button type="submit" class="link" safe>
                      {t.signOut}
                    </button>
                  </form>
                </li>
                {/* A page of its own first: it offers to remove the passkeys too. */}
                <li>
                  <a href={href(view, '/dashboard/sign-out-everywhere')} safe>
                    {t.signOutEverywhere}
                  </a>
                </li>
              </ul>
            </nav>
          )}
        </header>
        <main class="panel">
          {account && (
            <p class="small" safe>
              {t.signedInAs(account.email)}
            </p>
          )}
          {account?.sandbox && (
            <p class="notice" safe>
              {t.sandboxNotice}
            </p>
          )}
          {children}
        </main>
        <LanguageSwitch lang={view.lang} choices={dashboardLanguageCodes} switchPath={switchPath} />
      </body>
    </html>
  )
}

/** A table row's "Remove" button: a form of its own that posts one value with the session's CSRF token. */
export function RemoveForm({ action, csrf, name, value, label, text }: { action: string; csrf: string; name: string; value: string; label: string; text: string }) {
  return (
    <form method="post" action={action}>
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name={name} value={value} />
      <button type="submit" class="secondary" aria-label={label} safe>
        {text}
      </button>
    </form>
  )
}
