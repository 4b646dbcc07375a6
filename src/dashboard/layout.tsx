import type { PropsWithChildren } from '@kitajs/html'
import { dashboardLanguageCodes, type DashboardLanguage } from '../i18n/language-codes.ts'
import { LanguageSwitch, withLang } from '../pages/layout.tsx'
import { dashboardLanguages } from '../i18n/languages.ts'
import type { DashboardMessages } from '../i18n/dashboard-messages.ts'

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

/** The pages of the navigation, in its order, each with its link's words. */
const NAV_PAGES: readonly (readonly [string, (t: DashboardMessages) => string])[] = [
  ['/dashboard/audit', (t) => t.auditLog],
  ['/dashboard/usage', (t) => t.usage],
  ['/dashboard/webhooks', (t) => t.webhooksPage.nav],
  ['/dashboard/settings', (t) => t.settings],
]

/**
 * How a navigation link relates to the page shown (the path of `switchPath`): `page` on the page itself,
 * `true` on a page inside it (a verification under the audit log), nothing elsewhere.
 */
export function navCurrent(linkPath: string, pagePath: string): 'page' | 'true' | undefined {
  const path = pagePath.split('?')[0]!
  return path === linkPath ? 'page' : path.startsWith(`${linkPath}/`) ? 'true' : undefined
}

/**
 * The frame of every dashboard page: the brand and the navigation (the current page marked), the account
 * with its sign-out buttons, the page, the language switch. On a phone the header is two short rows.
 */
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
                <span class="client" safe>
                  {account.clientName}
                </span>
              </>
            )}
          </p>
          {account && (
            <nav aria-label={t.mainNav}>
              <ul>
                {NAV_PAGES.map(([path, text]) => (
                  <li>
                    <a href={href(view, path)} aria-current={navCurrent(path, switchPath)} safe>
                      {text(t)}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
        </header>
        <main class="panel">
          {account && (
            <div class="account">
              <p class="small" safe>
                {t.signedInAs(account.email)}
              </p>
              <form method="post" action={href(view, '/dashboard/sign-out')}>
                <input type="hidden" name="csrf" value={account.csrf} />
                <button type="submit" class="link" safe>
                  {t.signOut}
                </button>
              </form>
              {/* A page of its own first: it offers to remove the passkeys too. */}
              <a href={href(view, '/dashboard/sign-out-everywhere')} safe>
                {t.signOutEverywhere}
              </a>
            </div>
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
