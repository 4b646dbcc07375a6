import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { readStrictBody } from '../lib/strict-request.ts'
import { AuthenticationResponseModel, RegistrationResponseModel } from '../passkeys/model.ts'
import { relyingPartyFor } from '../passkeys/relying-party.ts'
import { peerAddress } from '../ratelimit/peer.ts'
import { RateLimitedError } from '../ratelimit/limits.ts'
import type { Cookies } from '../web/cookies.ts'
import { LangQuery, readForm } from '../web/forms.ts'
import type { ResponseSet } from '../web/headers.ts'
import type { DashboardContext } from './context.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import type { DashboardMessages } from '../i18n/dashboard-messages.ts'
import { href, type View } from './layout.tsx'
import { createPasskeyRegistrationOptions, createPasskeySignInOptions, deleteDashboardPasskey, MAX_PASSKEYS_PER_USER, registerDashboardPasskey, verifyPasskeySignIn } from './passkeys.ts'
import { describeAddedFrom } from './added-from.ts'
import { createDashboardSession } from './sessions.ts'
import { confirmPassword, countSignInAttempt } from './sign-in.ts'

const csrf = Type.String({ maxLength: 128 })
// Adding a passkey asks for the password again, as rotating the secret does: a session alone adds no way in.
const RegisterOptionsBody = Type.Object({ csrf, purpose: Type.Literal('register'), password: Type.String({ maxLength: 1024 }) }, { additionalProperties: false })
const SignInOptionsBody = Type.Object({ csrf, purpose: Type.Literal('verify') }, { additionalProperties: false })
const RegistrationBody = Type.Object({ csrf, response: RegistrationResponseModel }, { additionalProperties: false })
const AssertionBody = Type.Object({ csrf, response: AuthenticationResponseModel }, { additionalProperties: false })
// A credential id is base64url (as the browser reports it); anything else names none, and must not reach SQL
// (Postgres refuses a NUL byte in text: that was a 500, found by the route fuzzer).
const DeleteForm = t.Object({ csrf, credential_id: t.String({ minLength: 1, maxLength: 1400, pattern: '^[A-Za-z0-9_-]+$' }) }, { additionalProperties: t.String({ maxLength: 1024 }) })

type Context = { request: Request; cookie: Cookies; set: ResponseSet }
type Answer = { status?: number; body: Record<string, unknown> }

/**
 * Passkey sign-in for dashboard users (src/dashboard/passkeys.ts does the WebAuthn work): a signed-in user
 * adds (after typing the password again) or removes passkeys on the settings page; anyone may ask the sign-in page for a ceremony and sign in
 * with a saved passkey. The JSON routes answer JSON, errors included, in the shape the page's passkey
 * script reads (`options`; `outcome` and `redirect`; `message`).
 */
export function passkeyRoutes(deps: AppDeps, context: DashboardContext) {
  const { openPost, checkFormPost, formCookieValue, startSession, viewOf, redirect } = context
  const rp = relyingPartyFor(deps.config.appUrl)
  const signInDeps = { db: deps.db, clock: deps.clock, limits: deps.config.limits, passwordHash: deps.config.passwordHash }
  const addressOf = (request: Request) => peerAddress(request, deps.config.trustProxy)

  async function readJson<T extends TSchema>(request: Request, model: T): Promise<Static<T>> {
    const body = await readStrictBody(request, ['json'])
    if (!Value.Check(model, body)) throw new OAuthError('invalid_request', 'The body is not a passkey request of this kind')
    return body as Static<T>
  }

  /** Runs a handler and answers JSON; a refused request (CSRF, origin, rate limit, bad body) too, with words. */
  async function answerJson({ request, set }: Context, handler: (view: View, t: DashboardMessages) => Promise<Answer>) {
    const view = viewOf(request, new URL(request.url).searchParams.get('lang') ?? undefined)
    const t = dashboardLanguages[view.lang]
    let answer: Answer
    try {
      answer = await handler(view, t)
    } catch (cause) {
      if (!(cause instanceof OAuthError) || cause.code === 'server_error') throw cause
      answer = { status: cause.status, body: { outcome: 'refused', error: cause.code, message: t.errors[cause.code] ?? t.passkeyScript.failed } }
      if (cause instanceof RateLimitedError) set.headers['retry-after'] = String(cause.retryAfterSeconds)
    }
    set.status = answer.status ?? 200
    Object.assign(set.headers, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    return answer.body
  }

  const refused = (status: number, message: string): Answer => ({ status, body: { outcome: 'refused', message } })
  /** The session a JSON post is made in; signed out (or expired) it is refused like a stale form. */
  async function signedIn(context: Context, body: { csrf: string }) {
    const session = await openPost(context.cookie, context.request, body.csrf)
    if (!session) throw new OAuthError('forbidden', 'Not signed in')
    return session
  }
  /** A sign-in ceremony's post: this browser's pre-session cookie and its token; counted per address. */
  async function preSession(context: Context, body: { csrf: string }): Promise<string> {
    checkFormPost(context.cookie, context.request, body.csrf)
    await countSignInAttempt(signInDeps, { address: addressOf(context.request) })
    return formCookieValue(context.cookie)!
  }

  const json = { parse: 'none' as const, detail: { hide: true } }
  return new Elysia({ name: 'dashboard-passkey-routes' })
    .post(
      '/dashboard/passkeys/options',
      (context) =>
        answerJson(context, async (_view, t) => {
          const body = await readJson(context.request, RegisterOptionsBody)
          const session = await signedIn(context, body)
          const confirmation = { userId: session.user.id, sessionTokenHash: session.tokenHash, password: body.password, address: addressOf(context.request) }
          if (!(await confirmPassword(signInDeps, confirmation))) return refused(400, t.passkeyOutcomes.wrongPassword)
          // The challenge made now is the only one this session's answer can use: the password opened it.
          const options = await createPasskeyRegistrationOptions(deps, { rp, user: session.user, sessionTokenHash: session.tokenHash })
          return { body: { options } }
        }),
      json,
    )
    .post(
      '/dashboard/passkeys',
      (context) =>
        answerJson(context, async (view, t) => {
          const body = await readJson(context.request, RegistrationBody)
          const session = await signedIn(context, body)
          const addedFrom = describeAddedFrom(context.request.headers.get('user-agent'), addressOf(context.request))
          const outcome = await registerDashboardPasskey(deps, { rp, userId: session.user.id, sessionTokenHash: session.tokenHash, response: body.response, addedFrom })
          if (outcome === 'saved') {
            deps.log.info('dashboard_passkey_added', { user_id: session.user.id })
            return { body: { outcome: 'approved', redirect: href(view, '/dashboard/settings?notice=passkey_added') } }
          }
          const words = t.passkeyOutcomes
          const messages = { challenge_expired: words.challengeExpired, invalid_response: words.invalid, already_saved: words.alreadySaved, too_many: words.tooMany(MAX_PASSKEYS_PER_USER) }
          return refused(outcome === 'already_saved' || outcome === 'too_many' ? 200 : 400, messages[outcome])
        }),
      json,
    )
    .post(
      '/dashboard/sign-in/passkey/options',
      (context) =>
        answerJson(context, async () => {
          const formCookie = await preSession(context, await readJson(context.request, SignInOptionsBody))
          return { body: { options: await createPasskeySignInOptions(deps, { rp, formCookie }) } }
        }),
      json,
    )
    .post(
      '/dashboard/sign-in/passkey',
      (context) =>
        answerJson(context, async (view, t) => {
          const body = await readJson(context.request, AssertionBody)
          const formCookie = await preSession(context, body)
          const userId = await verifyPasskeySignIn(deps, { rp, formCookie, response: body.response })
          if (!userId) return refused(400, t.passkeyOutcomes.signInFailed)
          const { token } = await createDashboardSession(deps, userId)
          startSession(context.cookie, token)
          return { body: { outcome: 'approved', redirect: href(view, '/dashboard/audit') } }
        }),
      json,
    )
    .post(
      '/dashboard/passkeys/delete',
      async ({ query, body, request, cookie, set }) => {
        const view = viewOf(request, query.lang)
        const session = await openPost(cookie, request, body.csrf)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        if (await deleteDashboardPasskey(deps.db, session.user.id, body.credential_id)) deps.log.info('dashboard_passkey_removed', { user_id: session.user.id })
        // Another user's passkey, or one removed already: nothing of this user's is there, so it is gone.
        return redirect(set, view, '/dashboard/settings?notice=passkey_removed')
      },
      { parse: [readForm, 'urlencoded' as const], body: DeleteForm, query: LangQuery, detail: { hide: true } },
    )
}
