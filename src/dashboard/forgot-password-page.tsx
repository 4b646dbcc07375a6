import { dashboardLanguages } from '../i18n/languages.ts'
import { DashboardLayout, href, type View } from './layout.tsx'

/**
 * What "Forgot password?" shows: `form` asks for the email; `sent` is the one answer to every request,
 * whether or not the email has an account; `operator`, without SMTP_URL, says who resets passwords and how,
 * with no form.
 */
export type ForgotPasswordMode = { kind: 'form'; csrf: string; tooMany?: boolean } | { kind: 'sent' } | { kind: 'operator' }

export function ForgotPasswordPage({ view, mode }: { view: View; mode: ForgotPasswordMode }) {
  const t = dashboardLanguages[view.lang]
  const f = t.forgotPassword
  return (
    <DashboardLayout view={view} title={f.title} switchPath="/dashboard/forgot-password">
      <h1 safe>{f.title}</h1>
      {mode.kind === 'operator' && (
        <>
          <p safe>{f.operatorResets}</p>
          <pre class="command">
            <code>ofage users reset-password EMAIL</code>
          </pre>
        </>
      )}
      {mode.kind === 'sent' && (
        <p class="notice" role="status" safe>
          {f.sent}
        </p>
      )}
      {mode.kind === 'form' && (
        <>
          {mode.tooMany && (
            <div role="alert" class="alert">
              <p safe>{f.tooMany}</p>
            </div>
          )}
          <p id="forgot-intro" safe>
            {f.intro}
          </p>
          <form method="post" action={href(view, '/dashboard/forgot-password')} class="stack narrow">
            <input type="hidden" name="csrf" value={mode.csrf} />
            <label for="email" safe>
              {t.email}
            </label>
            <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" aria-describedby="forgot-intro" />
            <button type="submit" safe>
              {f.send}
            </button>
          </form>
        </>
      )}
      <p class="back-to-sign-in">
        <a href={href(view, '/dashboard/sign-in')} safe>
          {f.backToSignIn}
        </a>
      </p>
    </DashboardLayout>
  )
}
