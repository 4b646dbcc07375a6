import { Elysia, t } from 'elysia'
import { DEMO_CLIENT_ID } from '../demo/demo-client.ts'
import type { AppDeps } from '../deps.ts'
import { OAuthError, ruleProblem } from '../errors.ts'
import { clientMethods } from '../clients/methods.ts'
import { findClient, updateClient } from '../clients/registry.ts'
import { MAX_REDIRECT_URIS } from '../clients/rules.ts'
import { rotateClientSecret } from '../clients/secrets.ts'
import { type Client, type ClientChanges } from '../clients/model.ts'
import { peerAddress } from '../ratelimit/peer.ts'
import type { Cookies } from '../web/cookies.ts'
import { LangQuery, readForm } from '../web/forms.ts'
import type { ResponseSet } from '../web/headers.ts'
import type { DashboardContext } from './context.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import type { View } from './layout.tsx'
import type { SignedIn } from './sessions.ts'
import { listDashboardPasskeys } from './passkeys.ts'
import { GATE_TTLS } from './gate-panel.tsx'
import { readGateSettings, updateGate, type GateChanges } from '../gate/gate-settings.ts'
import { createRotatedSecretCookie, type RotatedSecret } from './rotated-secret-cookie.ts'
import { SECRET_OVERLAPS } from './secret-panel.tsx'
import { BRANDING_NOTICES, SettingsPage, type SettingsNotice, type SettingsProblem } from './settings-page.tsx'
import { confirmPassword } from './sign-in.ts'
import { findLogoVersion } from '../branding/branding.ts'
import { brandingSettingsRoutes } from './branding-routes.tsx'

const hidden = { detail: { hide: true } }
const form = { parse: [readForm, 'urlencoded' as const] }
const field = (maxLength: number) => t.String({ maxLength })
const extra = { additionalProperties: t.String({ maxLength: 1024 }) }

const SettingsQuery = t.Object({
  lang: t.Optional(t.String({ maxLength: 8 })),
  notice: t.Optional(
    t.Union(
      (['redirect_uri_added', 'redirect_uri_removed', 'site_saved', 'methods_saved', 'passkey_added', 'passkey_removed', 'gate_host_added', 'gate_host_removed', 'gate_saved', ...BRANDING_NOTICES] as const).map((notice) => t.Literal(notice)),
    ),
  ),
})
const RedirectUriForm = t.Object({ csrf: field(128), redirect_uri: field(2048) }, extra)
const SiteForm = t.Object({ csrf: field(128), min_age: field(16), home_url: field(2048) }, extra)
const MethodsForm = t.Object(
  { csrf: field(128), ...Object.fromEntries(clientMethods.map((method) => [`method_${method}`, t.Optional(t.Literal('on'))])) },
  extra,
)
const RotateForm = t.Object({ csrf: field(128), overlap: field(16), password: field(1024) }, extra)
const GateHostForm = t.Object({ csrf: field(128), gate_host: field(300) }, extra)
const GateForm = t.Object({ csrf: field(128), gate_age: field(16), gate_ttl: field(16) }, extra)

/**
 * The integration settings of the signed-in user's client: redirect URIs, minimum age, home address, the
 * secret's rotation. Every change is a form post (CSRF token, same origin) bound to the session's client;
 * a refused value re-renders the page with the reason (400), an accepted one redirects (303) with a notice.
 * A rotation asks for the user's password again and redirects too: the new secret rides the redirect in a
 * sealed, read-once cookie (rotated-secret-cookie.ts), is shown on that one view, and is never stored.
 */
export function settingsRoutes(deps: AppDeps, context: DashboardContext) {
  const { openPage, openPost, accountOf, page, redirect, viewOf } = context
  const rotatedSecret = createRotatedSecretCookie(deps.config, deps.keys.dashboardKey)

  /** The settings page: its client read afresh (unless just read), a notice or a refusal, a secret just rotated. */
  async function render(
    set: ResponseSet,
    view: View,
    session: SignedIn,
    extras: { notice?: SettingsNotice | undefined; problem?: SettingsProblem; rotated?: RotatedSecret | undefined; client?: Client } = {},
  ) {
    const [client, passkeys] = await Promise.all([extras.client ?? sessionClient(session), listDashboardPasskeys(deps.db, session.user.id)])
    const [gate, logo] = await Promise.all([readGateSettings(deps.db, client), findLogoVersion(deps.db, client.id)])
    page(set, extras.problem ? 400 : 200)
    return <SettingsPage view={view} account={accountOf(session)} client={client} gate={gate} logo={logo} publicUrl={deps.config.publicUrl} now={deps.clock.now()} passkeys={passkeys} {...extras} />
  }

  /** A settings form's post: its language, the session (undefined: not signed in), the refusals in that language. */
  async function openForm(cookie: Cookies, request: Request, csrf: string, lang: string | undefined) {
    const view = viewOf(request, lang)
    return { view, session: await openPost(cookie, request, csrf), problems: dashboardLanguages[view.lang].settingsProblems }
  }

  /** Applies a change to the session's client and answers with a notice; a value the client refuses is a 400 page. */
  async function change(set: ResponseSet, view: View, session: SignedIn, changes: ClientChanges, notice: SettingsNotice, problem: SettingsProblem) {
    try {
      await updateClient(deps.db, session.client.id, changes, { deploymentFaceBuffer: deps.config.face.buffer })
    } catch (error) {
      const refused = ruleProblem(error)
      if (refused) {
        // A minimum age lowered under what the client's own face buffer covers (clients.ts checkFaceBufferFloor).
        const underBuffer = refused === 'face_buffer_under_floor' && changes.minAge !== undefined
        return render(set, view, session, { problem: underBuffer ? { ...problem, message: dashboardLanguages[view.lang].settingsProblems.minAgeUnderBuffer } : problem })
      }
      throw error
    }
    deps.log.info('client_settings_changed', { client_id: session.client.id, user_id: session.user.id, change: notice })
    return redirect(set, view, `/dashboard/settings?notice=${notice}`)
  }

  return new Elysia({ name: 'dashboard-settings-routes' })
    .use(brandingSettingsRoutes(deps, context, render))
    .get(
      '/dashboard/settings',
      async ({ query, request, cookie, set }) => {
        const { view, session } = await openPage(cookie, request, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const client = await sessionClient(session)
        const rotated = await rotatedSecret.take(cookie, { sessionTokenHash: session.tokenHash, secretHash: client.secretHash }, deps.clock.now())
        return render(set, view, session, { notice: query.notice, rotated, client })
      },
      { query: SettingsQuery, ...hidden },
    )
    .post(
      '/dashboard/settings/redirect-uris/add',
      async ({ query, body, request, cookie, set }) => {
        const { view, session, problems } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const uri = body.redirect_uri
        const values = { redirect_uri: uri }
        const client = await sessionClient(session)
        if (client.redirectUris.includes(uri)) return render(set, view, session, { problem: { section: 'redirect', message: problems.redirectUriKnown, values } })
        if (client.redirectUris.length >= MAX_REDIRECT_URIS) return render(set, view, session, { problem: { section: 'redirect', message: problems.redirectUriTooMany(MAX_REDIRECT_URIS), values } })
        return change(set, view, session, { addRedirectUris: [uri] }, 'redirect_uri_added', { section: 'redirect', message: problems.redirectUri, values })
      },
      { ...form, body: RedirectUriForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/settings/redirect-uris/remove',
      async ({ query, body, request, cookie, set }) => {
        const { view, session, problems } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const client = await sessionClient(session)
        if (!client.redirectUris.includes(body.redirect_uri)) return render(set, view, session, { problem: { section: 'redirect', message: problems.redirectUriUnknown } })
        return change(set, view, session, { removeRedirectUris: [body.redirect_uri] }, 'redirect_uri_removed', { section: 'redirect', message: problems.redirectUriLast })
      },
      { ...form, body: RedirectUriForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/settings/site',
      async ({ query, body, request, cookie, set }) => {
        const { view, session, problems } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const values = { min_age: body.min_age, home_url: body.home_url }
        const minAge = readMinAge(body.min_age)
        if (minAge === undefined) return render(set, view, session, { problem: { section: 'site', message: problems.minAge, values } })
        const homeUrl = body.home_url.trim() === '' ? null : body.home_url.trim()
        // A home URL the client refuses (the rules of every address we send someone to) comes back as this problem.
        return change(set, view, session, { minAge, homeUrl }, 'site_saved', { section: 'site', message: problems.homeUrl, values })
      },
      { ...form, body: SiteForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/settings/methods',
      async ({ query, body, request, cookie, set }) => {
        const { view, session, problems } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const fields = body as Record<string, string | undefined>
        const methods = clientMethods.filter((method) => fields[`method_${method}`] === 'on')
        if (methods.length === 0) return render(set, view, session, { problem: { section: 'methods', message: problems.methods } })
        return change(set, view, session, { methods }, 'methods_saved', { section: 'methods', message: problems.methods })
      },
      { ...form, body: MethodsForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/settings/gate-hosts/add',
      async ({ query, body, request, cookie, set }) => {
        const { view, session, problems } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const values = { gate_host: body.gate_host }
        return changeGate(set, view, session, { addHosts: [body.gate_host] }, 'gate_host_added', () => ({
          section: 'gate',
          message: problems.gateHost,
          values,
        }))
      },
      { ...form, body: GateHostForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/settings/gate-hosts/remove',
      async ({ query, body, request, cookie, set }) => {
        const { view, session, problems } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        return changeGate(set, view, session, { removeHosts: [body.gate_host] }, 'gate_host_removed', () => ({ section: 'gate', message: problems.gateHostLast }))
      },
      { ...form, body: GateHostForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/settings/gate',
      async ({ query, body, request, cookie, set }) => {
        const { view, session, problems } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const values = { gate_age: body.gate_age, gate_ttl: body.gate_ttl }
        const age = readMinAge(body.gate_age)
        if (age === undefined) return render(set, view, session, { problem: { section: 'gate', message: problems.gateAge, values } })
        const client = await sessionClient(session)
        const ttl = [...GATE_TTLS, String(client.gateTtlSeconds)].find((seconds) => seconds === body.gate_ttl)
        if (!ttl) return render(set, view, session, { problem: { section: 'gate', message: problems.gateTtl, values } })
        return changeGate(set, view, session, { age, ttlSeconds: Number(ttl) }, 'gate_saved', () => ({ section: 'gate', message: problems.gateAge, values }))
      },
      { ...form, body: GateForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/settings/rotate-secret',
      async ({ query, body, request, cookie, set }) => {
        const { view, session, problems } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        if (session.client.id === DEMO_CLIENT_ID) return render(set, view, session, { problem: { section: 'secret', message: problems.demoSecret } })
        const overlap = SECRET_OVERLAPS.find((seconds) => seconds === body.overlap)
        if (!overlap) return render(set, view, session, { problem: { section: 'secret', message: problems.overlap } })
        const signInDeps = { db: deps.db, clock: deps.clock, limits: deps.config.limits, passwordHash: deps.config.passwordHash }
        const address = peerAddress(request, deps.config.trustProxy)
        if (!(await confirmPassword(signInDeps, { userId: session.user.id, sessionTokenHash: session.tokenHash, password: body.password, address }))) {
          return render(set, view, session, { problem: { section: 'secret', message: problems.password, values: { overlap } } })
        }
        const rotated = await rotateClientSecret(deps, session.client.id, { overlapSeconds: Number(overlap) })
        if (!rotated) throw new OAuthError('not_found', 'No such client')
        deps.log.info('client_settings_changed', { client_id: session.client.id, user_id: session.user.id, change: 'secret_rotated', overlap_seconds: Number(overlap) })
        const sealed = { secret: rotated.secret, previousUntil: rotated.client.previousSecretExpiresAt, sessionTokenHash: session.tokenHash, secretHash: rotated.client.secretHash }
        await rotatedSecret.write(cookie, sealed, deps.clock.now())
        return redirect(set, view, '/dashboard/settings')
      },
      { ...form, body: RotateForm, query: LangQuery, ...hidden },
    )

  /** Applies a change to the session's client's gate; a value the gate refuses is a 400 page with `problem`. */
  async function changeGate(set: ResponseSet, view: View, session: SignedIn, changes: GateChanges, notice: SettingsNotice, problem: (error: OAuthError) => SettingsProblem) {
    try {
      await updateGate(deps, session.client.id, changes)
    } catch (error) {
      if (error instanceof OAuthError && error.code === 'invalid_request') return render(set, view, session, { problem: problem(error) })
      throw error
    }
    deps.log.info('client_settings_changed', { client_id: session.client.id, user_id: session.user.id, change: notice })
    return redirect(set, view, `/dashboard/settings?notice=${notice}`)
  }

  async function sessionClient(session: SignedIn): Promise<Client> {
    const client = await findClient(deps.db, session.client.id)
    if (!client) throw new OAuthError('not_found', 'No such client')
    return client
  }
}

/** The form's minimum age: null when empty, undefined when not a whole number from 1 to 99. */
function readMinAge(value: string): number | null | undefined {
  const trimmed = value.trim()
  if (trimmed === '') return null
  if (!/^\d{1,2}$/.test(trimmed)) return undefined
  const age = Number(trimmed)
  return age >= 1 && age <= 99 ? age : undefined
}
