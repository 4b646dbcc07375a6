import { formatInstant } from './audit-page.tsx'
import { dashboardLanguages } from '../i18n/languages.ts'
import { addedFrom, PasskeySignIn } from './passkey-panel.tsx'
import type { DashboardPasskey } from './passkeys.ts'
import { DashboardLayout, href, type Account, type View } from './layout.tsx'
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
      <p class="forgot-password">
        <a href={href(view, '/dashboard/forgot-password')} safe>
          {t.forgotPassword.link}
        </a>
      </p>
    </DashboardLayout>
  )
}

/**
 * The offer to remove the account's passkeys with what the form does (a new password, signing out
 * everywhere): each listed with when and where it was added, so its owner can tell whether one is not theirs.
 * Nothing when there are none.
 */
function PasskeyRemovalChoice({ view, passkeys, checked }: { view: View; passkeys: DashboardPasskey[]; checked: boolean }) {
  const t = dashboardLanguages[view.lang]
  if (passkeys.length === 0) return <></>
  return (
    <fieldset class="stack">
      <legend safe>{t.passkeysHeading}</legend>
      <ul>
        {passkeys.map((passkey) => (
          <li safe>{`${formatInstant(passkey.createdAt)} UTC · ${addedFrom(passkey) ?? t.passkeyOriginUnknown}`}</li>
        ))}
      </ul>
      <div class="check">
        <input type="checkbox" id="remove_passkeys" name="remove_passkeys" value="1" checked={checked} aria-describedby="remove-passkeys-help" />
        <label for="remove_passkeys" safe>
          {t.removePasskeys(passkeys.length)}
        </label>
      </div>
      <p id="remove-passkeys-help" class="small" safe>
        {t.removePasskeysHelp}
      </p>
    </fieldset>
  )
}

type SetPasswordProps = { view: View; csrf: string; token: string; email: string; passkeys: DashboardPasskey[]; removePasskeys: boolean; problem?: string | undefined }

/**
 * The set-password form of a one-time link; the token travels in the form, not in the post's URL. When the
 * account has passkeys, it offers to remove them, ticked unless the user unticked it. The length rule is
 * shown by the field and checked by the server only: a `minlength` would stop the post at a browser tooltip,
 * and the server's sentence, tied to the field, would never be read.
 */
export function SetPasswordPage({ view, csrf, token, email, passkeys, removePasskeys, problem }: SetPasswordProps) {
  const t = dashboardLanguages[view.lang]
  return (
    <DashboardLayout view={view} title={t.setPasswordTitle} switchPath={`/dashboard/set-password?${new URLSearchParams({ token })}`}>
      <h1 safe>{t.setPasswordTitle}</h1>
      <p safe>{t.setPasswordIntro(email)}</p>
      {problem && (
        <div role="alert" class="alert">
          <p id="password-problem" safe>
            {problem}
          </p>
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
          maxlength={String(MAX_PASSWORD_LENGTH)}
          aria-describedby={problem ? 'password-problem password-rule' : 'password-rule'}
          aria-invalid={problem ? 'true' : undefined}
        />
        <p id="password-rule" class="small" safe>
          {t.passwordRule(MIN_PASSWORD_LENGTH)}
        </p>
        <label for="confirm" safe>
          {t.repeatPassword}
        </label>
        <input id="confirm" name="confirm" type="password" autocomplete="new-password" required maxlength={String(MAX_PASSWORD_LENGTH)} />
        <PasskeyRemovalChoice view={view} passkeys={passkeys} checked={removePasskeys} />
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
      <p>
        <a href={href(view, '/dashboard/forgot-password')} safe>
          {t.forgotPassword.link}
        </a>
      </p>
    </DashboardLayout>
  )
}

/** "Sign out everywhere", confirmed on a page of its own: it ends every session, and offers to remove the passkeys. */
export function SignOutEverywherePage({ view, account, passkeys }: { view: View; account: Account; passkeys: DashboardPasskey[] }) {
  const t = dashboardLanguages[view.lang]
  return (
    <DashboardLayout view={view} title={t.signOutEverywhere} account={account} switchPath="/dashboard/sign-out-everywhere">
      <h1 safe>{t.signOutEverywhere}</h1>
      <p safe>{t.signOutEverywhereIntro}</p>
      <form method="post" action={href(view, '/dashboard/sign-out-everywhere')} class="stack narrow">
        <input type="hidden" name="csrf" value={account.csrf} />
        <PasskeyRemovalChoice view={view} passkeys={passkeys} checked />
        <button type="submit" safe>
          {t.signOutEverywhere}
        </button>
      </form>
    </DashboardLayout>
  )
}
