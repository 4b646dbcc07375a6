import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { acceptsMethod, acceptsReverification } from '../clients/methods.ts'
import { readStrictBody } from '../lib/strict-request.ts'
import { languages } from '../i18n/languages.ts'
import { siteName } from '../branding/page-branding.ts'
import { requestLanguage } from '../web/language.ts'
import { createAuthenticationOptions, passkeyCovers, verifyPasskeyAssertion } from '../passkeys/authentication.ts'
import { AuthenticationResponseModel, RegistrationResponseModel, type PasskeyFailure } from '../passkeys/model.ts'
import { createRegistrationOptions, registerPasskey, type ProvenCheck } from '../passkeys/registration.ts'
import { relyingPartyFor } from '../passkeys/relying-party.ts'
import { deletePasskey } from '../passkeys/store.ts'
import { AGE_PASS_COOKIE, readAgePass } from './age-pass.ts'
import { PASSKEY_HINT_COOKIE, PASSKEY_HINT_SECONDS, type Page, type PageContext } from './page-context.tsx'
import type { Cookies } from '../web/cookies.ts'
import type { ResponseSet } from '../web/headers.ts'
import { MAX_FAILED_ATTEMPTS } from './sessions.ts'

const csrf = Type.String({ maxLength: 128 })
const OptionsBody = Type.Object(
  { csrf, purpose: Type.Union([Type.Literal('register'), Type.Literal('verify'), Type.Literal('delete')]) },
  { additionalProperties: false },
)
const RegistrationBody = Type.Object({ csrf, response: RegistrationResponseModel }, { additionalProperties: false })
const AssertionBody = Type.Object({ csrf, response: AuthenticationResponseModel }, { additionalProperties: false })

/**
 * Well-formed and genuine, but not good enough here: 200 with the reason. Malformed, replayed or not
 * genuine: 400. Saving without a recent check in this browser: 403.
 */
const failureStatus: Record<PasskeyFailure, number> = {
  challenge_expired: 400,
  invalid_response: 400,
  unknown_passkey: 200,
  passkey_expired: 200,
  age_not_covered: 200,
  sandbox_passkey: 200,
  method_not_accepted: 200,
  no_age_pass: 403,
  pass_too_old: 403,
  already_saved: 200,
}

type Context = { params: { id: string }; request: Request; cookie: Cookies; set: ResponseSet }
type Answer = { status?: number; body: Record<string, unknown> }

/**
 * Passkey re-verification on the hosted page (src/passkeys/ does the WebAuthn work): options for a
 * ceremony, saving a passkey after an approved check, using one instead of a check, and deleting one.
 * Every answer is JSON, errors included, since only the page's script calls these. A failed passkey does
 * not count as a failed attempt: it proves nothing about age to guess at, and a stale synced passkey must
 * not lock the visitor out of the other ways.
 */
export function passkeyRoutes(deps: AppDeps, { openForm, complete, cookies }: PageContext) {
  const rp = relyingPartyFor(deps.config.appUrl)

  /** Reads the JSON body (bounded, no duplicate members) against its model, then opens the form's session. */
  async function openCeremony<T extends TSchema>(context: Context, model: T): Promise<{ page: Page; body: Static<T> }> {
    const body = await readStrictBody(context.request, ['json'])
    if (!Value.Check(model, body)) throw new OAuthError('invalid_request', 'The body is not a passkey request of this kind')
    const lang = new URL(context.request.url).searchParams.get('lang') ?? undefined
    const page = await openForm(context.params.id, context.cookie, context.request, lang, (body as { csrf: string }).csrf)
    return { page, body }
  }

  /** Runs a handler and answers JSON; an error of the request (CSRF, expired session, bad body) too. */
  async function answerJson(context: Context, handler: () => Promise<Answer>) {
    let answer: Answer
    try {
      answer = await handler()
    } catch (cause) {
      if (!(cause instanceof OAuthError) || cause.code === 'server_error') throw cause
      const url = new URL(context.request.url)
      const t = languages[requestLanguage(context.request, url.searchParams.get('lang'))]
      answer = { status: cause.status, body: { outcome: 'refused', error: cause.code, error_description: cause.description, message: t.errors[cause.code] } }
    }
    context.set.status = answer.status ?? 200
    delete context.set.headers.location
    Object.assign(context.set.headers, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    return answer.body
  }

  function refusal(page: Page, failure: PasskeyFailure, extra: Record<string, unknown> = {}): Answer {
    const message = languages[page.lang].passkey.failures[failure](page.session.ageRequired)
    return { status: failureStatus[failure], body: { outcome: 'refused', error: failure, message, ...extra } }
  }

  /** Tells the script which credential the browser may forget (WebAuthn signalUnknownCredential). */
  const unknownCredential = (credentialId: string) => ({ rp_id: rp.id, credential_id: credentialId })

  /** No more attempts in this session: the page shows no way on, so neither does a passkey. */
  const locked = (page: Page): Answer | undefined =>
    page.session.failedAttempts >= MAX_FAILED_ATTEMPTS
      ? { status: 200, body: { outcome: 'refused', error: 'too_many_attempts', message: languages[page.lang].tooManyAttempts(siteName(page.client)) } }
      : undefined

  /** A client that does not take passkeys: its page shows none, and a script that asks anyway is told so. */
  const notAccepted = (page: Page): Answer | undefined => (acceptsMethod(page.client, 'passkey') ? undefined : refusal(page, 'method_not_accepted'))

  /** The check this browser's age pass stands for, or undefined without a valid pass. */
  async function provenCheck(page: Page): Promise<ProvenCheck | undefined> {
    const pass = await readAgePass(deps, cookies.read(page.cookie, AGE_PASS_COOKIE))
    if (!pass) return undefined
    const { id: passId, personKey, ageOver, methodClass, sandbox, createdAt: provenAt } = pass
    return { passId, personKey, ageOver, methodClass, sandbox, provenAt }
  }

  const json = { parse: 'none' as const, detail: { hide: true } }
  return new Elysia({ name: 'passkey-routes' })
    .post(
      '/s/:id/passkey/options',
      (context) =>
        answerJson(context, async () => {
          const { page, body } = await openCeremony(context, OptionsBody)
          const sessionIdHash = page.session.idHash
          if (body.purpose !== 'register') {
            const refused = body.purpose === 'verify' ? (locked(page) ?? notAccepted(page)) : undefined
            if (refused) return refused
            return { body: { options: await createAuthenticationOptions(deps, { sessionIdHash, rp, purpose: { kind: body.purpose } }) } }
          }
          const check = await provenCheck(page)
          if (!check) return refusal(page, 'no_age_pass')
          const userName = languages[page.lang].passkey.credentialName(check.ageOver)
          const options = await createRegistrationOptions(deps, { sessionIdHash, rp, check, userName })
          return typeof options === 'string' ? refusal(page, options) : { body: { options } }
        }),
      json,
    )
    .post(
      '/s/:id/passkey/register',
      (context) =>
        answerJson(context, async () => {
          const { page, body } = await openCeremony(context, RegistrationBody)
          const check = await provenCheck(page)
          if (!check) return refusal(page, 'no_age_pass')
          const result = await registerPasskey(deps, { sessionIdHash: page.session.idHash, rp, check, response: body.response })
          if (!result.saved) return refusal(page, result.failure)
          cookies.write(context.cookie, PASSKEY_HINT_COOKIE, '1', PASSKEY_HINT_SECONDS)
          return { body: { outcome: 'saved', message: languages[page.lang].passkey.saved } }
        }),
      json,
    )
    .post(
      '/s/:id/passkey',
      (context) =>
        answerJson(context, async () => {
          const { page, body } = await openCeremony(context, AssertionBody)
          const refused = locked(page) ?? notAccepted(page)
          if (refused) return refused
          const purpose = { kind: 'verify' } as const
          const result = await verifyPasskeyAssertion(deps, { sessionIdHash: page.session.idHash, rp, purpose, response: body.response })
          const failure = result.verified
            ? passkeyCovers(result.passkey, {
                ageRequired: page.session.ageRequired,
                sandboxClient: page.client.sandbox,
                now: deps.clock.now(),
                accepts: (methodClass) => acceptsReverification(page.client, 'passkey', methodClass),
              })
            : result.failure
          deps.metrics.verifications.inc({ method: 'passkey', outcome: failure ? 'failed' : 'approved' })
          if (failure || !result.verified) {
            return refusal(page, failure ?? 'invalid_response', failure === 'unknown_passkey' ? unknownCredential(body.response.id) : {})
          }
          // The token says the threshold this page asked for, as after any other method; the passkey covers it.
          await complete(page, context.set, {
            method: 'passkey',
            methodClass: result.passkey.methodClass,
            provenAge: page.session.ageRequired,
            reverifiedWith: { personKey: result.personKey },
          })
          cookies.write(context.cookie, PASSKEY_HINT_COOKIE, '1', PASSKEY_HINT_SECONDS)
          return { body: { outcome: 'approved', redirect: context.set.headers.location } }
        }),
      json,
    )
    .post(
      '/s/:id/passkey/delete',
      (context) =>
        answerJson(context, async () => {
          const { page, body } = await openCeremony(context, AssertionBody)
          const purpose = { kind: 'delete' } as const
          const result = await verifyPasskeyAssertion(deps, { sessionIdHash: page.session.idHash, rp, purpose, response: body.response })
          // Deleting what is not saved is done already: the browser is still told to forget it.
          if (!result.verified && result.failure !== 'unknown_passkey') return refusal(page, result.failure)
          if (result.verified) await deletePasskey(deps.db, result.passkey.credentialId)
          cookies.clear(context.cookie, PASSKEY_HINT_COOKIE)
          return { body: { outcome: 'deleted', message: languages[page.lang].passkey.deleted, ...unknownCredential(body.response.id) } }
        }),
      json,
    )
}
