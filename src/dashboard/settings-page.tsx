import { DEMO_CLIENT_ID } from '../demo/demo-client.ts'
import { clientMethods } from '../oauth/client-methods.ts'
import { cleartextAddresses, siteHomeUrl, type Client } from '../oauth/clients.ts'
import type { GateSettings } from '../gate/gate-settings.ts'
import { formatInstant } from './audit-page.tsx'
import { dashboardLanguages } from '../i18n/languages.ts'
import { GatePanel } from './gate-panel.tsx'
import { BrandingPanel } from './branding-panel.tsx'
import type { LogoVersion } from '../branding/branding.ts'
import type { DashboardMessages } from '../i18n/dashboard-messages.ts'
import { integrationCode, integrationEnvironment } from './integration-snippet.ts'
import { DashboardLayout, href, RemoveForm, type Account, type View } from './layout.tsx'
import { PasskeyList } from './passkey-panel.tsx'
import type { DashboardPasskey } from './passkeys.ts'

/** The overlaps a user may choose when rotating the secret, in seconds. */
export const SECRET_OVERLAPS = ['0', '3600', '86400', '604800', '2592000'] as const
/**
 * Preselected: a day, enough to deploy the new secret. None (a leaked secret) stays a choice, never the
 * default: picked for a routine rotation it fails every exchange until the site has the new secret.
 */
export const DEFAULT_SECRET_OVERLAP: (typeof SECRET_OVERLAPS)[number] = '86400'

/** The notices of "Your site's look" (branding-routes.tsx), said by its own messages. */
export const BRANDING_NOTICES = ['branding_saved', 'logo_saved', 'logo_removed'] as const
export type SettingsNotice =
  | 'redirect_uri_added'
  | 'redirect_uri_removed'
  | 'site_saved'
  | 'methods_saved'
  | 'passkey_added'
  | 'passkey_removed'
  | 'gate_host_added'
  | 'gate_host_removed'
  | 'gate_saved'
  | (typeof BRANDING_NOTICES)[number]
export type SettingsSection = 'redirect' | 'site' | 'methods' | 'gate' | 'secret' | 'branding'
/** A refused form: which section, what to say, and what the user typed (shown again). */
export type SettingsProblem = { section: SettingsSection; message: string; values?: Record<string, string> }
/** A secret just rotated: shown once, with when the previous one stops working (null: it already has). */
export type RotatedSecret = { secret: string; previousUntil: Date | null }

type SettingsPageProps = {
  view: View
  account: Account
  client: Client
  /** The client's age gate: its hosts, age and cookie lifetime. */
  gate: GateSettings
  /** The client's logo, if it has one (src/branding/). */
  logo: LogoVersion | undefined
  publicUrl: string
  now: Date
  notice?: SettingsNotice | undefined
  problem?: SettingsProblem | undefined
  rotated?: RotatedSecret | undefined
  /** The signed-in user's own passkeys. */
  passkeys: DashboardPasskey[]
}

/**
 * The client's integration settings: its status, redirect URIs, minimum age and home address, the secret's
 * rotation, and a snippet filled with its real values. Every form posts with the session's CSRF token.
 */
export function SettingsPage({ view, account, client, gate, logo, publicUrl, now, notice, problem, rotated, passkeys }: SettingsPageProps) {
  const t = dashboardLanguages[view.lang]
  const action = (path: string) => href(view, `/dashboard/settings/${path}`)
  const failed = (section: SettingsSection) => (problem?.section === section ? problem : undefined)
  const typed = (section: SettingsSection, name: string, fallback: string) => failed(section)?.values?.[name] ?? fallback
  const overlapUntil = client.previousSecretExpiresAt && client.previousSecretExpiresAt > now ? client.previousSecretExpiresAt : undefined
  const onlyOne = client.redirectUris.length === 1
  // What "Back to site" leads to without a home address: the page's own rule, for the first redirect URI.
  const fallbackHome = client.redirectUris[0] ? siteHomeUrl({ homeUrl: null }, client.redirectUris[0]) : ''
  return (
    <DashboardLayout view={view} title={t.settings} account={account} switchPath="/dashboard/settings">
      <h1 safe>{t.settings}</h1>
      <p safe>{t.settingsIntro}</p>
      {notice && (
        <p role="status" class="notice" safe>
          {noticeText(t, notice)}
        </p>
      )}
      {rotated && (
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
          <p safe>{rotated.previousUntil ? t.previousSecretUntil(formatInstant(rotated.previousUntil)) : t.previousSecretEnded}</p>
        </section>
      )}

      {cleartextAddresses(client).length > 0 && (
        <p class="notice" data-needs-https safe>
          {t.needsHttps(cleartextAddresses(client).join(', '))}
        </p>
      )}
      <h2 safe>{t.statusHeading}</h2>
      <dl class="record">
        <dt safe>{t.clientIdLabel}</dt>
        <dd class="mono" safe>
          {client.id}
        </dd>
        <dt safe>{t.statusLabel}</dt>
        <dd data-status={client.status} safe>
          {client.status === 'active' ? t.statusActive : t.statusSuspended}
        </dd>
        <dt safe>{t.modeLabel}</dt>
        <dd safe>{client.sandbox ? t.modeSandbox : t.modeLive}</dd>
      </dl>

      <h2 id="redirect-heading" safe>
        {t.redirectUrisHeading}
      </h2>
      <ul>
        {t.redirectRules.map((rule) => (
          <li safe>{rule}</li>
        ))}
      </ul>
      {failed('redirect') && <Problem id="redirect-problem" message={problem!.message} />}
      <div class="table-wrap" role="region" aria-labelledby="redirect-caption" tabindex="0">
        <table class="audit redirect-uris">
          <caption id="redirect-caption" safe>
            {t.redirectUrisCaption}
          </caption>
          <tbody>
            {client.redirectUris.map((uri) => (
              <tr>
                <td class="mono" data-redirect-uri={uri} safe>
                  {uri}
                </td>
                {!onlyOne && (
                  <td class="row-action">
                    <RemoveForm action={action('redirect-uris/remove')} csrf={account.csrf} name="redirect_uri" value={uri} label={t.removeRedirectUri(uri)} text={t.remove} />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {onlyOne && (
        <p class="small" safe>
          {t.lastRedirectUri}
        </p>
      )}
      <form method="post" action={action('redirect-uris/add')} class="stack settings-form">
        <input type="hidden" name="csrf" value={account.csrf} />
        <label for="redirect_uri" safe>
          {t.redirectUriLabel}
        </label>
        <input
          id="redirect_uri"
          name="redirect_uri"
          type="url"
          required
          maxlength="1024"
          spellcheck="false"
          autocomplete="off"
          placeholder="https://"
          value={typed('redirect', 'redirect_uri', '')}
          {...invalid(failed('redirect'), 'redirect-problem')}
        />
        <div class="actions">
          <button type="submit" safe>
            {t.addRedirectUri}
          </button>
        </div>
      </form>

      <h2 safe>{t.siteHeading}</h2>
      {failed('site') && <Problem id="site-problem" message={problem!.message} />}
      <form method="post" action={action('site')} class="stack settings-form">
        <input type="hidden" name="csrf" value={account.csrf} />
        <label for="min_age" safe>
          {t.minAgeLabel}
        </label>
        <input
          id="min_age"
          name="min_age"
          type="number"
          min="1"
          max="99"
          step="1"
          inputmode="numeric"
          value={typed('site', 'min_age', client.minAge === null ? '' : String(client.minAge))}
          aria-describedby={failed('site') ? 'min-age-help site-problem' : 'min-age-help'}
        />
        <p id="min-age-help" class="small" safe>
          {t.minAgeHelp}
        </p>
        <label for="home_url" safe>
          {t.homeUrlLabel}
        </label>
        <input
          id="home_url"
          name="home_url"
          type="url"
          maxlength="1024"
          spellcheck="false"
          autocomplete="off"
          value={typed('site', 'home_url', client.homeUrl ?? '')}
          aria-describedby={failed('site') ? 'home-url-help site-problem' : 'home-url-help'}
        />
        <p id="home-url-help" class="small" safe>
          {t.homeUrlHelp(fallbackHome)}
        </p>
        <div class="actions">
          <button type="submit" safe>
            {t.saveSite}
          </button>
        </div>
      </form>

      <h2 id="methods-heading" safe>
        {t.methodsHeading}
      </h2>
      <p safe>{t.methodsIntro}</p>
      {failed('methods') && <Problem id="methods-problem" message={problem!.message} />}
      <form method="post" action={action('methods')} class="stack settings-form">
        <input type="hidden" name="csrf" value={account.csrf} />
        <fieldset aria-labelledby="methods-heading">
          {clientMethods.map((method) => (
            <p>
              <input id={`method_${method}`} name={`method_${method}`} type="checkbox" value="on" checked={client.methods.includes(method)} aria-describedby={`method_${method}-help`} />{' '}
              <label for={`method_${method}`} safe>
                {t.methodNames[method]}
              </label>
              <br />
              <span id={`method_${method}-help`} class="small" safe>
                {t.methodHelp[method]}
              </span>
            </p>
          ))}
        </fieldset>
        <div class="actions">
          <button type="submit" safe>
            {t.saveMethods}
          </button>
        </div>
      </form>

      <BrandingPanel view={view} csrf={account.csrf} client={client} logo={logo} problem={failed('branding')} />

      <GatePanel view={view} csrf={account.csrf} gate={gate} problem={failed('gate')} />

      <h2 safe>{t.secretHeading}</h2>
      <p safe>{t.secretIntro}</p>
      {overlapUntil && (
        <p class="notice" data-overlap-until={overlapUntil.toISOString()} safe>
          {t.overlapActive(formatInstant(overlapUntil))}
        </p>
      )}
      {failed('secret') && <Problem id="secret-problem" message={problem!.message} />}
      {client.id === DEMO_CLIENT_ID ? (
        <p class="notice" safe>
          {t.settingsProblems.demoSecret}
        </p>
      ) : (
        <form method="post" action={action('rotate-secret')} class="stack settings-form">
          <input type="hidden" name="csrf" value={account.csrf} />
          <label for="overlap" safe>
            {t.overlapLabel}
          </label>
          <select id="overlap" name="overlap" aria-describedby="overlap-help">
            {SECRET_OVERLAPS.map((seconds) => (
              <option value={seconds} selected={typed('secret', 'overlap', DEFAULT_SECRET_OVERLAP) === seconds} safe>
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
          <input id="password" name="password" type="password" required autocomplete="current-password" maxlength="1024" {...invalid(failed('secret'), 'secret-problem')} />
          <div class="actions">
            <button type="submit" safe>
              {t.rotateSecret}
            </button>
          </div>
        </form>
      )}

      <PasskeyList view={view} csrf={account.csrf} passkeys={passkeys} />

      <h2 safe>{t.integrationHeading}</h2>
      <p safe>{t.integrationIntro}</p>
      <figure class="snippet">
        <figcaption safe>{t.environmentCaption}</figcaption>
        <pre tabindex="0">
          <code data-snippet="environment" safe>
            {integrationEnvironment(client, publicUrl, t.secretPlaceholder)}
          </code>
        </pre>
      </figure>
      <figure class="snippet">
        <figcaption safe>{t.codeCaption}</figcaption>
        <pre tabindex="0">
          <code data-snippet="code" safe>
            {integrationCode(client)}
          </code>
        </pre>
      </figure>
      <p class="small" safe>
        {t.integrationMore}
      </p>
    </DashboardLayout>
  )
}

function noticeText(t: DashboardMessages, notice: SettingsNotice): string {
  const branding = { branding_saved: t.branding.notices.saved, logo_saved: t.branding.notices.logoSaved, logo_removed: t.branding.notices.logoRemoved }
  return Object.hasOwn(branding, notice) ? branding[notice as keyof typeof branding] : t.settingsNotices[notice as keyof DashboardMessages['settingsNotices']]
}

/** A refused form's alert: what to fix, announced at once. */
export function Problem({ id, message }: { id: string; message: string }) {
  return (
    <div role="alert" class="alert" id={id}>
      <p safe>{message}</p>
    </div>
  )
}

/** A field's accessibility attributes when its form was refused: invalid, described by the alert. */
function invalid(problem: SettingsProblem | undefined, alertId: string): Record<string, string> {
  return problem ? { 'aria-invalid': 'true', 'aria-describedby': alertId } : {}
}
