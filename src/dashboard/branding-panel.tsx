import { MAX_DISPLAY_NAME, MAX_PRIVACY_URL, type LogoVersion } from '../branding/branding.ts'
import { logoVersion } from '../branding/page-branding.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import type { Client } from '../clients/model.ts'
import { href, type View } from './layout.tsx'

type BrandingPanelProps = {
  view: View
  csrf: string
  client: Pick<Client, 'id' | 'name' | 'displayName' | 'accentColour' | 'privacyUrl'>
  logo: LogoVersion | undefined
  /** A refused form of this panel: what to say, and what the user typed. */
  problem?: { message: string; values?: Record<string, string> } | undefined
}

/**
 * The settings page's "Your site's look" (src/branding/), inside its section: the logo (uploaded, shown as the page shows it,
 * removed), and the display name, accent colour and privacy policy link, each empty for none.
 */
export function BrandingPanel({ view, csrf, client, logo, problem }: BrandingPanelProps) {
  const t = dashboardLanguages[view.lang]
  const b = t.branding
  const action = (path: string) => href(view, `/dashboard/settings/${path}`)
  const typed = (name: string, fallback: string | null) => problem?.values?.[name] ?? fallback ?? ''
  const described = (help: string) => (problem ? `${help} branding-problem` : help)
  return (
    <>
      <p safe>{b.intro}</p>
      {problem && (
        <div role="alert" class="alert" id="branding-problem">
          <p safe>{problem.message}</p>
        </div>
      )}
      {logo ? (
        <div class="brand-preview">
          <img src={`/branding/${encodeURIComponent(client.id)}/logo.png?v=${logoVersion(logo)}`} width={String(logo.width)} height={String(logo.height)} alt={b.currentLogo} />
          <form method="post" action={action('branding/logo/remove')}>
            <input type="hidden" name="csrf" value={csrf} />
            <button type="submit" class="secondary" safe>
              {b.removeLogo}
            </button>
          </form>
        </div>
      ) : (
        <p class="small" safe>
          {b.noLogo}
        </p>
      )}
      <form method="post" action={action('branding/logo')} enctype="multipart/form-data" class="stack settings-form">
        <input type="hidden" name="csrf" value={csrf} />
        <label for="logo" safe>
          {b.logoLabel}
        </label>
        <input id="logo" name="logo" type="file" required accept="image/png,image/jpeg,image/webp" aria-describedby={described('logo-help')} />
        <p id="logo-help" class="small" safe>
          {b.logoHelp}
        </p>
        <div class="actions">
          <button type="submit" safe>
            {b.uploadLogo}
          </button>
        </div>
      </form>
      <form method="post" action={action('branding')} class="stack settings-form">
        <input type="hidden" name="csrf" value={csrf} />
        <label for="display_name" safe>
          {b.displayNameLabel}
        </label>
        <input
          id="display_name"
          name="display_name"
          type="text"
          maxlength={String(MAX_DISPLAY_NAME)}
          autocomplete="organization"
          value={typed('display_name', client.displayName)}
          aria-describedby={described('display-name-help')}
        />
        <p id="display-name-help" class="small" safe>
          {b.displayNameHelp(client.name)}
        </p>
        <label for="accent_colour" safe>
          {b.accentLabel}
        </label>
        <input
          id="accent_colour"
          name="accent_colour"
          type="text"
          maxlength="7"
          spellcheck="false"
          autocomplete="off"
          placeholder="#1d4ed8"
          value={typed('accent_colour', client.accentColour)}
          aria-describedby={described('accent-help')}
        />
        <p id="accent-help" class="small" safe>
          {b.accentHelp}
        </p>
        <label for="privacy_url" safe>
          {b.privacyUrlLabel}
        </label>
        <input
          id="privacy_url"
          name="privacy_url"
          type="url"
          maxlength={String(MAX_PRIVACY_URL)}
          spellcheck="false"
          autocomplete="off"
          placeholder="https://"
          value={typed('privacy_url', client.privacyUrl)}
          aria-describedby={described('privacy-url-help')}
        />
        <p id="privacy-url-help" class="small" safe>
          {b.privacyUrlHelp}
        </p>
        <div class="actions">
          <button type="submit" safe>
            {b.save}
          </button>
        </div>
      </form>
    </>
  )
}
