import type { Client } from '../clients/model.ts'
import { DEMO_CLIENT_ID } from '../demo/demo-client.ts'
import { formatInstant } from '../i18n/format.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import { href, type View } from './layout.tsx'
import type { RotatedSecret } from './rotated-secret-cookie.ts'
import { invalid, Problem } from './section.tsx'

/** The overlaps a user may choose when rotating the secret, in seconds. */
export const SECRET_OVERLAPS = ['0', '3600', '86400', '604800', '2592000'] as const
/**
 * Preselected: a day, enough to deploy the new secret. None (a leaked secret) stays a choice, never the
 * default: picked for a routine rotation it fails every exchange until the site has the new secret.
 */
export const DEFAULT_SECRET_OVERLAP: (typeof SECRET_OVERLAPS)[number] = '86400'

/** A secret just rotated, at the top of the page it was redirected to: shown this once (rotated-secret-cookie.ts). */
export function NewSecret({ view, rotated }: { view: View; rotated: RotatedSecret }) {
  const t = dashboardLanguages[view.lang]
  return (
    <section class="secret-box" aria-labelledby="new-secret-heading">
      <h2 id="new-secret-heading" safe>
        {t.newSecretHeading}
      </h2>
      <p role="status" safe>
        {t.newSecretShownOnce}
      </p>
      <p>
        <code class="mono secret" id="new-secret" safe>
          {rotated.secret}
        </code>
      </p>
      <p safe>{rotated.previousUntil ? t.previousSecretUntil(formatInstant(view.lang, rotated.previousUntil)) : t.previousSecretEnded}</p>
    </section>
  )
}

type SecretPanelProps = {
  view: View
  client: Client
  csrf: string
  now: Date
  /** A refused rotation: what to say, and the overlap chosen (chosen again). */
  problem?: { message: string; values?: Record<string, string> } | undefined
}

/**
 * The settings page's client secret: how long the previous one still works, and the rotation form, which asks
 * for the password again. The demo client's secret is not rotated here: /demo derives it from the server's keys.
 */
export function SecretPanel({ view, client, csrf, now, problem }: SecretPanelProps) {
  const t = dashboardLanguages[view.lang]
  const overlapUntil = client.previousSecretExpiresAt && client.previousSecretExpiresAt > now ? client.previousSecretExpiresAt : undefined
  return (
    <>
      <p safe>{t.secretIntro}</p>
      {overlapUntil && (
        <p class="notice" data-overlap-until={overlapUntil.toISOString()} safe>
          {t.overlapActive(formatInstant(view.lang, overlapUntil))}
        </p>
      )}
      {problem && <Problem id="secret-problem" message={problem.message} />}
      {client.id === DEMO_CLIENT_ID ? (
        <p class="notice" safe>
          {t.settingsProblems.demoSecret}
        </p>
      ) : (
        <form method="post" action={href(view, '/dashboard/settings/rotate-secret')} class="stack settings-form">
          <input type="hidden" name="csrf" value={csrf} />
          <label for="overlap" safe>
            {t.overlapLabel}
          </label>
          <select id="overlap" name="overlap" aria-describedby="overlap-help">
            {SECRET_OVERLAPS.map((seconds) => (
              <option value={seconds} selected={(problem?.values?.overlap ?? DEFAULT_SECRET_OVERLAP) === seconds} safe>
                {t.overlapOptions[seconds]}
              </option>
            ))}
          </select>
          <p id="overlap-help" class="small" safe>
            {t.overlapHelp}
          </p>
          <label for="password" safe>
            {t.yourPassword}
          </label>
          <input id="password" name="password" type="password" required autocomplete="current-password" maxlength="1024" {...invalid(problem, 'secret-problem')} />
          <div class="actions">
            <button type="submit" safe>
              {t.rotateSecret}
            </button>
          </div>
        </form>
      )}
    </>
  )
}
