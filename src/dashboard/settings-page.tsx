import { clientMethods } from '../clients/methods.ts'
import { cleartextAddresses, siteHomeUrl, type Client } from '../clients/model.ts'
import type { GateSettings } from '../gate/gate-settings.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import { GatePanel } from './gate-panel.tsx'
import { BrandingPanel } from './branding-panel.tsx'
import type { LogoVersion } from '../branding/branding.ts'
import type { DashboardMessages } from '../i18n/dashboard-messages.ts'
import { integrationCode, integrationEnvironment } from './integration-snippet.ts'
import { DashboardLayout, href, RemoveForm, type Account, type View } from './layout.tsx'
import { DataTable } from './data-table.tsx'
import { PasskeyList } from './passkey-panel.tsx'
import type { RotatedSecret } from './rotated-secret-cookie.ts'
import { NewSecret, SecretPanel } from './secret-panel.tsx'
import { invalid, Problem, Section } from './section.tsx'
import type { DashboardPasskey } from './passkeys.ts'

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
/** The section a notice is about: it opens, so the change just saved is in view. */
const noticeSection: Record<SettingsNotice, SettingsSection | 'passkeys'> = {
  redirect_uri_added: 'redirect',
  redirect_uri_removed: 'redirect',
  site_saved: 'site',
  methods_saved: 'methods',
  passkey_added: 'passkeys',
  passkey_removed: 'passkeys',
  gate_host_added: 'gate',
  gate_host_removed: 'gate',
  gate_saved: 'gate',
  branding_saved: 'branding',
  logo_saved: 'branding',
  logo_removed: 'branding',
}
/** A refused form: which section, what to say, and what the user typed (shown again). */
export type SettingsProblem = { section: SettingsSection; message: string; values?: Record<string, string> }

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
 * Each part below the status is a section closed to its heading, open where the user is working: a refused
 * form, a change just saved, and the snippet right after a rotation (it then carries the new secret).
 */
export function SettingsPage({ view, account, client, gate, logo, publicUrl, now, notice, problem, rotated, passkeys }: SettingsPageProps) {
  const t = dashboardLanguages[view.lang]
  const action = (path: string) => href(view, `/dashboard/settings/${path}`)
  const failed = (section: SettingsSection) => (problem?.section === section ? problem : undefined)
  const typed = (section: SettingsSection, name: string, fallback: string) => failed(section)?.values?.[name] ?? fallback
  const onlyOne = client.redirectUris.length === 1
  // What "Back to site" leads to without a home address: the page's own rule, for the first redirect URI.
  const fallbackHome = client.redirectUris[0] ? siteHomeUrl({ homeUrl: null }, client.redirectUris[0]) : ''
  const opened = (section: SettingsSection | 'passkeys') => problem?.section === section || (notice !== undefined && noticeSection[notice] === section)
  return (
    <DashboardLayout view={view} title={t.settings} account={account} switchPath="/dashboard/settings">
      <h1 safe>{t.settings}</h1>
      <p safe>{t.settingsIntro}</p>
      {notice && (
        <p role="status" class="notice" safe>
          {noticeText(t, notice)}
        </p>
      )}
      {rotated && <NewSecret view={view} rotated={rotated} />}

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

      <Section headingId="redirect-heading" heading={t.redirectUrisHeading} open={opened('redirect')}>
        <ul>
          {t.redirectRules.map((rule) => (
            <li safe>{rule}</li>
          ))}
        </ul>
        {failed('redirect') && <Problem id="redirect-problem" message={problem!.message} />}
        <DataTable id="redirect" caption={t.redirectUrisCaption} kind="redirect-uris">
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
        </DataTable>
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
      </Section>

      <Section headingId="site-heading" heading={t.siteHeading} open={opened('site')}>
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
      </Section>

      <Section headingId="methods-heading" heading={t.methodsHeading} open={opened('methods')}>
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
      </Section>

      <Section headingId="branding-heading" heading={t.branding.heading} open={opened('branding')}>
        <BrandingPanel view={view} csrf={account.csrf} client={client} logo={logo} problem={failed('branding')} />
      </Section>

      <Section headingId="gate-heading" heading={t.gate.heading} open={opened('gate')}>
        <GatePanel view={view} csrf={account.csrf} clientId={client.id} gate={gate} problem={failed('gate')} />
      </Section>

      <Section headingId="secret-heading" heading={t.secretHeading} open={opened('secret')}>
        <SecretPanel view={view} client={client} csrf={account.csrf} now={now} problem={failed('secret')} />
      </Section>

      <Section headingId="passkeys-heading" heading={t.passkeysHeading} open={opened('passkeys')}>
        <PasskeyList view={view} csrf={account.csrf} passkeys={passkeys} />
      </Section>

      <Section headingId="integration-heading" heading={t.integrationHeading} open={rotated !== undefined}>
        <p safe>{t.integrationIntro}</p>
        <figure class="snippet">
          <figcaption safe>{t.environmentCaption}</figcaption>
          <pre tabindex="0">
            <code data-snippet="environment" safe>
              {integrationEnvironment(client, publicUrl, rotated?.secret ?? t.secretPlaceholder)}
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
      </Section>
    </DashboardLayout>
  )
}

function noticeText(t: DashboardMessages, notice: SettingsNotice): string {
  const branding = { branding_saved: t.branding.notices.saved, logo_saved: t.branding.notices.logoSaved, logo_removed: t.branding.notices.logoRemoved }
  return Object.hasOwn(branding, notice) ? branding[notice as keyof typeof branding] : t.settingsNotices[notice as keyof DashboardMessages['settingsNotices']]
}
