import { Value } from '@sinclair/typebox/value'
import { Elysia, t } from 'elysia'
import { BrandingError, MAX_DISPLAY_NAME, removeClientLogo, setClientLogo, updateBranding, type BrandingChanges } from '../branding/branding.ts'
import { formatRatio } from '../branding/contrast.ts'
import { MAX_LOGO_BYTES } from '../branding/logo-image.ts'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import type { DashboardMessages } from '../i18n/dashboard-messages.ts'
import { readStrictBody } from '../lib/strict-request.ts'
import { CsrfForm, LangQuery, readForm } from '../web/forms.ts'
import type { ResponseSet } from '../web/headers.ts'
import { ownOrigins, refuseForeignPost } from '../web/origin.ts'
import type { DashboardContext } from './context.ts'
import type { View } from './layout.tsx'
import type { SignedIn } from './sessions.ts'
import type { SettingsNotice, SettingsProblem } from './settings-page.tsx'

const hidden = { detail: { hide: true } }
const field = (maxLength: number) => t.String({ maxLength })
/** Longer than the rules allow, so that a value over them is refused in words on the page, not by the schema. */
const LookForm = t.Object(
  { csrf: field(128), display_name: field(1024), accent_colour: field(256), privacy_url: field(4096) },
  { additionalProperties: t.String({ maxLength: 1024 }) },
)
/** The upload form: its token, and one file (checked to be one after parsing). */
const LogoForm = t.Object(
  { csrf: field(128), logo: t.Array(t.Unknown(), { minItems: 1, maxItems: 1 }) },
  { additionalProperties: t.Union([t.String({ maxLength: 1024 }), t.Array(t.Unknown(), { maxItems: 4 })]) },
)
/** The upload's body at most: the logo's bound, and room for the form's envelope and token. */
export const MAX_LOGO_FORM_BYTES = MAX_LOGO_BYTES + 64 * 1024

/** The settings page, answered with a refusal of this panel (settings-routes.tsx). */
export type SettingsRender = (set: ResponseSet, view: View, session: SignedIn, extras: { problem: SettingsProblem }) => Promise<unknown>

/**
 * The forms of "Your site's look" on the settings page: upload and remove the logo, and save the display name,
 * accent colour and privacy policy link. Each is bound to the session's client, not from another site, with
 * the session's CSRF token; a refusal is the page again with the reason (400), a change a 303 with a notice.
 */
export function brandingSettingsRoutes(deps: AppDeps, context: DashboardContext, render: SettingsRender) {
  const { openPost, currentSession, viewOf, redirect } = context
  const own = ownOrigins(deps.config)

  /** The settings page with this panel's refusal, in the page's language. */
  function refuse(set: ResponseSet, view: View, session: SignedIn, message: (problems: DashboardMessages['branding']['problems']) => string, values?: Record<string, string>) {
    return render(set, view, session, { problem: { section: 'branding', message: message(dashboardLanguages[view.lang].branding.problems), ...(values && { values }) } })
  }

  function saved(set: ResponseSet, view: View, session: SignedIn, notice: SettingsNotice) {
    deps.log.info('client_settings_changed', { client_id: session.client.id, user_id: session.user.id, change: notice })
    return redirect(set, view, `/dashboard/settings?notice=${notice}`)
  }

  return new Elysia({ name: 'dashboard-branding-routes' })
    .post(
      '/dashboard/settings/branding',
      async ({ query, body, request, cookie, set }) => {
        const view = viewOf(request, query.lang)
        const session = await openPost(cookie, request, body.csrf)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const values = { display_name: body.display_name, accent_colour: body.accent_colour, privacy_url: body.privacy_url }
        const orNone = (value: string) => (value.trim() === '' ? null : value.trim())
        const changes: BrandingChanges = { displayName: orNone(body.display_name), accentColour: orNone(body.accent_colour), privacyUrl: orNone(body.privacy_url) }
        try {
          await updateBranding(deps.db, session.client.id, changes)
        } catch (error) {
          if (error instanceof BrandingError) return refuse(set, view, session, (problems) => describe(problems, error), values)
          throw error
        }
        return saved(set, view, session, 'branding_saved')
      },
      { parse: [readForm, 'urlencoded'], body: LookForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/settings/branding/logo',
      async ({ query, request, cookie, set }) => {
        const view = viewOf(request, query.lang)
        // Before a byte of the upload is read: not from another site, and someone signed in.
        refuseForeignPost(request, own)
        const signedIn = await currentSession(cookie)
        if (!signedIn) return redirect(set, view, '/dashboard/sign-in')
        // A file too large is said in words, unread; saying so changes nothing, so it needs no token.
        if (Number(request.headers.get('content-length')) > MAX_LOGO_FORM_BYTES) return refuse(set, view, signedIn, (problems) => problems.logoTooLarge)
        const body = await readStrictBody(request, ['multipart'], MAX_LOGO_FORM_BYTES)
        if (!Value.Check(LogoForm, body)) throw new OAuthError('invalid_request', 'The form does not have the fields of a logo upload')
        const session = await openPost(cookie, request, body.csrf)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const file = body.logo[0]
        if (!(file instanceof Blob) || file.size === 0) return refuse(set, view, session, (problems) => problems.logoMissing)
        try {
          await setClientLogo(deps, session.client.id, new Uint8Array(await file.arrayBuffer()))
        } catch (error) {
          if (error instanceof BrandingError) return refuse(set, view, session, (problems) => describe(problems, error))
          throw error
        }
        return saved(set, view, session, 'logo_saved')
      },
      // Read in the handler, after the checks that need no body (see above).
      { parse: 'none', query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/settings/branding/logo/remove',
      async ({ query, body, request, cookie, set }) => {
        const view = viewOf(request, query.lang)
        const session = await openPost(cookie, request, body.csrf)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        await removeClientLogo(deps.db, session.client.id)
        return saved(set, view, session, 'logo_removed')
      },
      { parse: [readForm, 'urlencoded'], body: CsrfForm, query: LangQuery, ...hidden },
    )
}

/** A refusal of the site's look, in words. */
function describe(problems: DashboardMessages['branding']['problems'], error: BrandingError): string {
  switch (error.problem) {
    case 'display_name':
      return problems.displayName(MAX_DISPLAY_NAME)
    case 'accent_colour':
      return problems.accentColour
    case 'accent_contrast':
      return problems.accentContrast(formatRatio(error.ratio ?? 1))
    case 'privacy_url':
      return problems.privacyUrl
    case 'too_large':
      return problems.logoTooLarge
    case 'not_an_image':
      return problems.logoNotImage
    case 'too_many_pixels':
      return problems.logoTooManyPixels
    case 'animated':
      return problems.logoAnimated
    case 'unreadable':
      return problems.logoUnreadable
    case 'too_complex':
      return problems.logoTooComplex
    case 'busy':
      return problems.logoBusy
  }
}
