import { Elysia, t } from 'elysia'
import { renderSVG } from 'uqr'
import { digitalCredentialRequests, verifyDigitalCredentialAnswer } from '../credentials/digital-credentials.ts'
import { verifyAgeAnswer, type AnswerBinding } from '../credentials/openid4vp/answer.ts'
import { avAppLink, redirectUriClientId } from '../credentials/openid4vp/av-app-request.ts'
import { decryptResponse, readResponseKeyId, type AuthorizationResponse } from '../credentials/openid4vp/encrypted-response.ts'
import { walletLink } from '../credentials/openid4vp/request-object.ts'
import { publicEncryptionKey } from '../credentials/openid4vp/response-encryption-key.ts'
import type { AnswerResult } from '../credentials/presentation.ts'
import { AV_APP_QUERY_IDS, type CredentialQueryId } from '../credentials/queries.ts'
import { createRevocation } from '../credentials/status/revocation.ts'
import { sha256Hex } from '../lib/crypto.ts'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { languages } from '../i18n/languages.ts'
import { readStrictBody } from '../lib/strict-request.ts'
import {
  claimRequest,
  createCredentialRequest,
  findOpenRequest,
  findOpenRequestByKeyId,
  findSessionRequest,
  recordOutcome,
  releaseClaim,
  requestStatus,
  type CredentialRequest,
} from './credential-requests.ts'
import { CsrfForm, LangQuery, readForm } from '../web/forms.ts'
import type { PageContext } from './page-context.tsx'
import { requestUriRoutes } from './request-uri-routes.ts'
import { MAX_FAILED_ATTEMPTS } from './sessions.ts'

/** A presentation with its certificate chain is a few kilobytes; a wallet's post is bounded well above. */
const MAX_ANSWER_BYTES = 64 * 1024

const readAnswer = ({ request }: { request: Request }) => readStrictBody(request, ['form'], MAX_ANSWER_BYTES)

/** `direct_post`: `vp_token` (or `error`) and `state` in the clear; `direct_post.jwt`: only `response`, a JWE holding them. */
const WalletAnswer = t.Object({
  state: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
  response: t.Optional(t.String({ maxLength: MAX_ANSWER_BYTES })),
  vp_token: t.Optional(t.String({ maxLength: MAX_ANSWER_BYTES })),
  error: t.Optional(t.String({ maxLength: 256 })),
  error_description: t.Optional(t.String({ maxLength: 1024 })),
})

const PageAnswer = t.Object({ csrf: t.String({ maxLength: 128 }), request: t.String({ maxLength: 64 }), response: t.String({ maxLength: MAX_ANSWER_BYTES }) })

/**
 * A QR code the page shows as an image named `label`. The `av://` request travels whole in its code (three
 * times the characters of an `openid4vp://` link), so it gets the lowest error correction, enough for a
 * screen: version 16 instead of 19 for a 570-character link, larger modules for the phone's camera.
 */
const qrCode = (link: string, label: string, ecc: 'L' | 'M' = 'M') => renderSVG(link, { ecc, border: 2 }).replace('<svg ', `<svg role="img" aria-label="${Bun.escapeHTML(label)}" `)

/**
 * The digital credential method's routes. For wallets (no cookie, found by `state`): the signed request
 * object behind the QR code (request-uri-routes.ts), and the response endpoint (OpenID4VP `direct_post`); for the EU age
 * verification app, the response URI of its `av://` request, one per request. For the page's script
 * (this browser's session, its CSRF token): opening a request, asking how it stands, and handing over a
 * Digital Credentials API answer. Every answer is verified where it arrives, recorded once, and redeemed
 * by the method's form post, which completes the session in the visitor's own browser.
 */
export function credentialRoutes(deps: AppDeps, { openPage, openForm, offeredMethods }: PageContext) {
  const credentials = deps.credentials
  if (!credentials) return new Elysia({ name: 'credential-routes' })
  const appOrigin = new URL(deps.config.appUrl).origin
  // Under /api, so that a wallet gets JSON errors; on the API's address, as the rest of what machines call.
  const responseUri = `${deps.config.publicUrl}/api/oid4vp/responses`
  const requestUri = (state: string) => `${deps.config.publicUrl}/api/oid4vp/requests/${state}`
  // The `av://` request's own response URI (and so its client id): the request's state is its random part.
  const avResponseUri = (state: string) => `${deps.config.publicUrl}/api/oid4vp/av/${state}`
  const avProfile = deps.config.credentials?.avProfile ?? false

  const plainAnswers = deps.config.credentials?.plainAnswers ?? false
  const crossDevice = { clientId: credentials.verifier.clientId, responseUri }
  // One per app, for its caches. Loopback (an operator's local mirror) only outside production, as every outbound request.
  const revocation = createRevocation({
    trustList: () => credentials.trust.latest(),
    now: () => deps.clock.now(),
    fetch: deps.config.outbound,
    unreachable: deps.config.trust.revocationUnreachable,
    onStatusOutcome: (outcome) => deps.metrics.revocationChecks.inc({ kind: 'status_list', outcome }),
    onCrlOutcome: (outcome) => deps.metrics.revocationChecks.inc({ kind: 'crl', outcome }),
  })
  // Annex C readerAuth, with the operator's reader certificate (Apple Wallet answers only signed requests).
  const reader = credentials.readerAuth && { privateKey: credentials.readerAuth.privateKey, certificateChain: credentials.readerAuth.x5c.map((der) => Buffer.from(der, 'base64')) }

  async function verify(request: CredentialRequest, vpToken: unknown, binding: AnswerBinding, queries?: readonly CredentialQueryId[]): Promise<AnswerResult> {
    const answer = { trustList: await credentials!.trust.current(), nonce: request.nonce, threshold: request.ageRequired, now: deps.clock.now(), binding, revocation, queries }
    return verifyAgeAnswer(vpToken, answer)
  }

  /**
   * A `direct_post.jwt` answer (OpenID4VP 1.0 §8.3.1): opened with the key of the request it names, its
   * `state` must be that request's, then verified with the key's thumbprint in an mdoc's transcript.
   */
  async function verifyEncrypted(request: CredentialRequest, jwe: string): Promise<AnswerResult> {
    if (plainAnswers || !request.responseKeys) return { valid: false, failure: 'wrong_protocol' }
    const opened = await decryptResponse(jwe, request.responseKeys.jwe)
    if (!opened.ok) return { valid: false, failure: opened.failure }
    if (!sameState(opened.response, request)) return { valid: false, failure: 'malformed' }
    if (opened.response.error !== undefined) return { valid: false, failure: 'declined' }
    return verify(request, opened.response.vp_token, { responseMode: 'direct_post.jwt', ...crossDevice, encryptionKey: publicEncryptionKey(request.responseKeys.jwe) })
  }

  /**
   * Takes the request for this answer, then verifies and records it. The claim comes first, so that of
   * many answers posted at once only one is verified: the rest are refused before any parsing of theirs.
   */
  async function answer(request: CredentialRequest, verifyAnswer: () => Promise<AnswerResult>) {
    if (!(await claimRequest(deps, request))) throw new OAuthError('invalid_request', 'This request was already answered')
    let result
    try {
      result = await verifyAnswer()
    } catch (cause) {
      await releaseClaim(deps, request)
      throw cause
    }
    const outcome = result.valid ? ({ outcome: 'approved', ageOver: result.ageOver } as const) : ({ outcome: 'refused', failure: result.failure } as const)
    deps.metrics.verifications.inc({ method: 'credential', outcome: result.valid ? 'answered' : 'refused' })
    await recordOutcome(deps, request, outcome)
    return result
  }

  return new Elysia({ name: 'credential-routes' })
    .use(requestUriRoutes(deps))
    .post(
      '/api/oid4vp/responses',
      async ({ body, set }) => {
        set.headers['cache-control'] = 'no-store'
        if (body.response !== undefined) {
          const keyId = readResponseKeyId(body.response)
          const request = keyId === undefined ? undefined : await findOpenRequestByKeyId(deps, keyId)
          if (!request) throw new OAuthError('invalid_request', 'No open request for the key this response is encrypted to')
          const result = await answer(request, () => verifyEncrypted(request, body.response!))
          if (!result.valid && result.failure !== 'declined') throw new OAuthError('invalid_request', `The presentation was not accepted: ${result.failure}`)
          return {}
        }
        const request = body.state === undefined ? undefined : await findOpenRequest(deps, body.state)
        if (!request) throw new OAuthError('invalid_request', 'No open request for this state: it expired, was answered, or never existed')
        if (body.error !== undefined) {
          await answer(request, async () => ({ valid: false, failure: 'declined' }))
          return {}
        }
        // We asked for an encrypted answer (§8.3): one in the clear is not what this request accepts.
        const result = await answer(request, async () =>
          plainAnswers ? verify(request, parseOrUndefined(body.vp_token ?? ''), crossDevice) : { valid: false, failure: 'wrong_protocol' },
        )
        if (!result.valid && result.failure !== 'declined') throw new OAuthError('invalid_request', `The presentation was not accepted: ${result.failure}`)
        return {}
      },
      { parse: [readAnswer, 'urlencoded'], body: WalletAnswer, detail: { hide: true } },
    )
    .post(
      '/api/oid4vp/av/:state',
      async ({ params, body, set }) => {
        set.headers['cache-control'] = 'no-store'
        if (!avProfile) throw new OAuthError('not_found', 'The age verification app profile is off')
        // The response URI itself names the request: one address per request, answered once.
        const request = await findOpenRequest(deps, params.state)
        if (!request) throw new OAuthError('invalid_request', 'No open request at this address: it expired, was answered, or never existed')
        if (body.error !== undefined) {
          await answer(request, async () => ({ valid: false, failure: 'declined' }))
          return {}
        }
        const responseUri = avResponseUri(params.state)
        // Annex A §A.5: `direct_post`, a `vp_token` in the clear; an encrypted `response` is not what we asked for.
        const result = await answer(request, async () =>
          body.response !== undefined
            ? { valid: false, failure: 'wrong_protocol' }
            : verify(request, parseOrUndefined(body.vp_token ?? ''), { responseMode: 'direct_post', clientId: redirectUriClientId(responseUri), responseUri }, AV_APP_QUERY_IDS),
        )
        if (!result.valid && result.failure !== 'declined') throw new OAuthError('invalid_request', `The presentation was not accepted: ${result.failure}`)
        return {}
      },
      { parse: [readAnswer, 'urlencoded'], body: WalletAnswer, detail: { hide: true } },
    )
    .post(
      '/s/:id/methods/credential/start',
      async ({ params, query, body, request, cookie, set }) => {
        const page = await openForm(params.id, cookie, request, query.lang, body.csrf)
        if (!offeredMethods(page).some((m) => m.id === 'credential') || page.session.failedAttempts >= MAX_FAILED_ATTEMPTS) {
          throw new OAuthError('not_found', 'No digital credential request for this session')
        }
        const issued = await createCredentialRequest(deps, page.session)
        if (!issued) throw new OAuthError('forbidden', 'Too many wallet requests in this session; start again from the site')
        const link = walletLink(credentials.verifier, requestUri(issued.state))
        const avLink = avProfile ? avAppLink({ responseUri: avResponseUri(issued.state), nonce: issued.nonce, threshold: page.session.ageRequired }) : undefined
        set.headers['cache-control'] = 'no-store'
        return {
          request: issued.id,
          wallet_url: link,
          qr_svg: qrCode(link, 'QR code'),
          ...(avLink && { av_url: avLink, av_qr_svg: qrCode(avLink, languages[page.lang].credential.avAppTitle, 'L') }),
          dc_api: await digitalCredentialRequests({
            verifier: credentials.verifier,
            nonce: issued.nonce,
            threshold: page.session.ageRequired,
            origin: appOrigin,
            keys: issued.publicKeys,
            plainAnswers,
            reader,
            now: deps.clock.now(),
          }),
          expires_in: Math.round((issued.expiresAt.getTime() - deps.clock.now().getTime()) / 1000),
        }
      },
      { parse: [readForm, 'urlencoded'], body: CsrfForm, query: LangQuery, detail: { hide: true } },
    )
    .get(
      '/s/:id/methods/credential/status',
      async ({ params, query, request, cookie, set }) => {
        const page = await openPage(params.id, cookie, request, query.lang)
        const status = await requestStatus(deps, page.session, query.request)
        if (!status) throw new OAuthError('not_found', 'No such request in this session')
        set.headers['cache-control'] = 'no-store'
        return { status: status.status }
      },
      { query: t.Object({ request: t.String({ maxLength: 64 }), lang: t.Optional(t.String({ maxLength: 8 })) }), detail: { hide: true } },
    )
    .post(
      '/s/:id/methods/credential/dc-response',
      async ({ params, query, body, request, cookie, set }) => {
        const page = await openForm(params.id, cookie, request, query.lang, body.csrf)
        const open = await findSessionRequest(deps, page.session, body.request)
        if (!open) throw new OAuthError('invalid_request', 'No open request with this id in this session')
        await answer(open, async () => {
          if (!open.responseKeys) return { valid: false, failure: 'malformed' }
          const check = { trustList: await credentials.trust.current(), nonce: open.nonce, threshold: open.ageRequired, origin: appOrigin, now: deps.clock.now(), keys: open.responseKeys, plainAnswers, revocation }
          // The page posts the credential the browser returned: { protocol, data }.
          return verifyDigitalCredentialAnswer(parseOrUndefined(body.response), check)
        })
        set.headers['cache-control'] = 'no-store'
        return { status: 'answered' }
      },
      { parse: [readAnswer, 'urlencoded'], body: PageAnswer, query: LangQuery, detail: { hide: true } },
    )
}

/** The decrypted answer names this request's `state` (compared as hashes: only the hash is stored). */
function sameState(response: AuthorizationResponse, request: CredentialRequest): boolean {
  return typeof response.state === 'string' && response.state.length <= 64 && sha256Hex(response.state) === request.stateHash
}

/** A wallet's JSON, or undefined when it is not JSON: verification then refuses it as malformed. */
function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
