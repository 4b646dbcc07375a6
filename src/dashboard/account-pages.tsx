import { dashboardLanguages } from './i18n.ts'
import { PasskeySignIn } from './passkey-panel.tsx'
import { DashboardLayout, href, type View } from './layout.tsx'
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.ts'

export type SignInNotice = 'signed_out' | 'signed_out_everywhere' | 'password_set'

/** The sign-in form. `failed`: the one answer to any wrong email or password. */
export function SignInPage({ view, csrf, email, failed, notice }: { view: View; csrf: string; email?: string; failed?: boolean; notice?: SignInNotice | undefined }) {
  const t = dashboardLanguages[view.lang]
  const notices = { signed_out: t.signedOut, signed_out_everywhere: t.signedOutEverywhere, password_set: t.passwordSaved }
  return (
    <DashboardLayout view={view} title={t.signInTitle} switchPath="/dashboard/sign-in">
      <h1 safe>{t.signInTitle}</h1>
      {notice && (
        <p class="notice" role="status" safe>
          {notices[notice]}
        </p>
      )}
      {failed && (
        <div role="alert" class="alert">
          <p safe>{t.signInFailed}</p>
        </div>
      )}
      <PasskeySignIn view={view} csrf={csrf} />
      <form method="post" action={href(view, '/dashboard/sign-in')} class="stack narrow">
        <input type="hidden" name="csrf" value={csrf} />
        <label for="email" safe>
          {t.email}
        </label>
        <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value={email ?? ''} />
        <label for="password" safe>
          {t.password}
        </label>
        <input id="password" name="password" type="password" autocomplete="current-password" required maxlength={String(MAX_PASSWORD_LENGTH)} />
        <button type="submit" safe>
          {t.signIn}
        </button>
      </form>
    </DashboardLayout>
  )
}

/** The set-password form of a one-time link; the token travels in the form, not in the post's URL. */
export function SetPasswordPage({ view, csrf, token, email, problem }: { view: View; csrf: string; token: string; email: string; problem?: string | undefined }) {
  const t = dashboardLanguages[view.lang]
  return (
    <DashboardLayout view={view} title={t.setPasswordTitle} switchPath={`/dashboard/set-password?${new URLSearchParams({ token })}`}>
      <h1 safe>{t.setPasswordTitle}</h1>
      <p safe>{t.setPasswordIntro(email)}</p>
      {problem && (
        <div role="alert" class="alert">
          <p safe>{problem}</p>
        </div>
      )}
      <form method="post" action={href(view, '/dashboard/set-password')} class="stack narrow">
        <input type="hidden" name="csrf" value={csrf} />
        <input type="hidden" name="token" value={token} />
        {/* For password managers: the account the new password belongs to. */}
        <input type="hidden" name="username" autocomplete="username" value={email} />
        <label for="password" safe>
          {t.newPassword}
        </label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          required
          minlength={String(MIN_PASSWORD_LENGTH)}
          maxlength={String(MAX_PASSWORD_LENGTH)}
          aria-describedby="password-rule"
        />
        <p id="password-rule" class="small" safe>
          {t.passwordRule(MIN_PASSWORD_LENGTH)}
        </p>
        <label for="confirm" safe>
          {t.repeatPassword}
        </label>
        <input id="confirm" name="confirm" type="password" autocomplete="new-password" required maxlength={String(MAX_PASSWORD_LENGTH)} />
        <button type="submit" safe>
          {t.savePassword}
        </button>
      </form>
    </DashboardLayout>
  )
}

/** A set-password link that was used, expired or replaced. */
export function LinkInvalidPage({ view, switchPath }: { view: View; switchPath: string }) {
  const t = dashboardLanguages[view.lang]
  return (
    <DashboardLayout view={view} title={t.setPasswordTitle} switchPath={switchPath}>
      <h1 safe>{t.setPasswordTitle}</h1>
      <div role="alert" class="alert">
        <p safe>{t.linkInvalid}</p>
      </div>
      <p>
        <a href={href(view, '/dashboard/sign-in')} safe>
          {t.signIn}
        </a>
      </p>
    </DashboardLayout>
  )
}
