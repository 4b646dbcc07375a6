import type { DashboardPasskey } from './passkeys.ts'
import { formatInstant } from './audit-page.tsx'
import { dashboardLanguages } from '../i18n/languages.ts'
import { href, RemoveForm, type View } from './layout.tsx'

/**
 * The dashboard's passkey buttons, driven by the hosted page's own script (/assets/passkey.js): it posts
 * `{ csrf, purpose }` to `data-options`, hands the options to the browser's passkey dialog, and posts the
 * answer to the purpose's address. Hidden until the script finds WebAuthn (and a host name, not an IP).
 */
function panelAttributes(view: View, csrf: string, urls: { options: string; register?: string; verify?: string }) {
  return {
    hidden: true,
    'data-passkey': 'dashboard',
    'data-csrf': csrf,
    'data-options': href(view, urls.options),
    ...(urls.register && { 'data-register': href(view, urls.register) }),
    ...(urls.verify && { 'data-verify': href(view, urls.verify) }),
    'data-messages': JSON.stringify(dashboardLanguages[view.lang].passkeyScript),
  }
}

/** "Sign in with a passkey" above the sign-in form. */
export function PasskeySignIn({ view, csrf }: { view: View; csrf: string }) {
  const t = dashboardLanguages[view.lang]
  return (
    <div class="passkey narrow" {...panelAttributes(view, csrf, { options: '/dashboard/sign-in/passkey/options', verify: '/dashboard/sign-in/passkey' })}>
      <button type="button" data-passkey-start="verify" safe>
        {t.signInWithPasskey}
      </button>
      <p class="status" role="status" aria-live="polite" data-passkey-status></p>
      {/* A separator of its own, set apart from the button above: the password form below is the other way. */}
      <p class="or-password" safe>
        {t.orWithPassword}
      </p>
      <script src="/assets/passkey.js" defer></script>
    </div>
  )
}

/** Where a passkey was added, as kept: "Firefox, Linux · 203.0.113.0/24", or undefined when nothing was. */
export function addedFrom(passkey: DashboardPasskey): string | undefined {
  const parts = [passkey.addedDevice, passkey.addedNetwork].filter((part) => part !== null)
  return parts.length ? parts.join(' · ') : undefined
}

/**
 * The signed-in user's passkeys: the list (when and where each was added) with a remove form each (no
 * script needed), and "Add a passkey", which asks for the password again.
 */
export function PasskeyList({ view, csrf, passkeys }: { view: View; csrf: string; passkeys: DashboardPasskey[] }) {
  const t = dashboardLanguages[view.lang]
  return (
    <>
      <h2 safe>{t.passkeysHeading}</h2>
      <p safe>{t.passkeysIntro}</p>
      {passkeys.length === 0 ? (
        <p safe>{t.noPasskeys}</p>
      ) : (
        <div class="table-wrap" role="region" aria-labelledby="passkeys-caption" tabindex="0">
          <table class="audit passkeys">
            <caption id="passkeys-caption" safe>
              {t.passkeysCaption}
            </caption>
            <thead>
              <tr>
                <th scope="col" safe>{t.passkeyAddedOn}</th>
                <th scope="col" safe>{t.passkeyAddedFrom}</th>
                <th scope="col" safe>{t.passkeyLastUsed}</th>
                <td></td>
              </tr>
            </thead>
            <tbody>
              {passkeys.map((passkey) => (
                <tr data-passkey-id={passkey.credentialId}>
                  <td safe>{formatInstant(passkey.createdAt)}</td>
                  <td safe>{addedFrom(passkey) ?? t.passkeyOriginUnknown}</td>
                  <td safe>{passkey.lastUsedAt ? formatInstant(passkey.lastUsedAt) : t.passkeyNeverUsed}</td>
                  <td class="row-action">
                    <RemoveForm
                      action={href(view, '/dashboard/passkeys/delete')}
                      csrf={csrf}
                      name="credential_id"
                      value={passkey.credentialId}
                      label={t.removePasskey(formatInstant(passkey.createdAt))}
                      text={t.remove}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="passkey stack settings-form" {...panelAttributes(view, csrf, { options: '/dashboard/passkeys/options', register: '/dashboard/passkeys' })}>
        {/* Sent with the options request by the script; it is never part of a form post. */}
        <label for="passkey-password" safe>
          {t.passkeyPassword}
        </label>
        <input id="passkey-password" type="password" required autocomplete="current-password" maxlength="1024" data-passkey-password />
        <div class="actions">
          <button type="button" data-passkey-start="register" safe>
            {t.addPasskey}
          </button>
        </div>
        <p class="status" role="status" aria-live="polite" data-passkey-status></p>
        <script src="/assets/passkey.js" defer></script>
      </div>
    </>
  )
}
