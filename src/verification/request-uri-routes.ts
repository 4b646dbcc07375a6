import { Elysia, t } from 'elysia'
import { signRequestObject } from '../credentials/openid4vp/request-object.ts'
import { publicEncryptionKey } from '../credentials/openid4vp/response-encryption-key.ts'
import { checkWalletMetadata } from '../credentials/openid4vp/wallet-metadata.ts'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { parseStrictJsonObject, readStrictBody } from '../lib/strict-request.ts'
import { findOpenRequest } from './credential-requests.ts'

/**
 * A wallet's metadata is a few hundred bytes (the EUDI wallet's, about 600; a JWK set for an encrypted
 * request adds one key). Unauthenticated input: bounded in size, and in depth before it is parsed.
 */
const MAX_WALLET_METADATA_CHARS = 8 * 1024
const MAX_WALLET_METADATA_DEPTH = 8
/** §5.10: "a base64url-encoded, fresh, cryptographically random number"; the EUDI wallet sends 16 bytes, base64. */
const MAX_WALLET_NONCE_CHARS = 256

/** §5.10: both optional; anything else is ignored, as the Verifier MUST (Elysia drops unknown members). */
const RequestUriPost = t.Object({
  wallet_metadata: t.Optional(t.String({ maxLength: MAX_WALLET_METADATA_CHARS })),
  wallet_nonce: t.Optional(t.String({ minLength: 1, maxLength: MAX_WALLET_NONCE_CHARS })),
})

const readPost = ({ request }: { request: Request }) => readStrictBody(request, ['form'])

/**
 * The request URI behind the QR code's `openid4vp://` link (OpenID4VP 1.0 request by reference, RFC 9101):
 * a wallet fetches the signed request object of an open wallet request here, by `state`, without a cookie.
 * GET as RFC 9101 has it; POST (`request_uri_method=post`, §5.10) with the wallet's metadata and nonce, as
 * the EUDI reference wallet does. Either may fetch the request while it is open, each fetch getting a
 * freshly signed object with the same `state` and `nonce`; what makes it one-time is its answer, taken once
 * (credential-routes.ts). A stale, answered or unknown `state` finds nothing (404), by either method.
 */
export function requestUriRoutes(deps: AppDeps) {
  const credentials = deps.credentials
  if (!credentials) return new Elysia({ name: 'request-uri-routes' })
  const plainAnswers = deps.config.credentials?.plainAnswers ?? false
  const responseUri = `${deps.config.publicUrl}/api/oid4vp/responses`

  async function requestObject(state: string, set: { headers: Record<string, unknown> }, wallet?: { metadata?: string; nonce?: string }): Promise<string> {
    const request = await findOpenRequest(deps, state)
    if (!request) throw new OAuthError('not_found', 'No open request: it expired, was answered, or never existed')
    const encryptionKey = plainAnswers || !request.responseKeys ? undefined : publicEncryptionKey(request.responseKeys.jwe)
    if (wallet?.metadata !== undefined) {
      const metadata = parseStrictJsonObject(wallet.metadata, 'wallet_metadata', MAX_WALLET_METADATA_DEPTH)
      const check = checkWalletMetadata(metadata, { responseMode: encryptionKey ? 'direct_post.jwt' : 'direct_post' })
      // §5.10.2: an HTTP error ends the wallet's attempt; the spec names no error code for it, so RFC 6749's.
      if (!check.ok && check.problem === 'malformed') throw new OAuthError('invalid_request', `wallet_metadata is malformed: ${check.detail}`)
      if (!check.ok) throw new OAuthError('invalid_request', `This request does not suit the wallet_metadata sent: ${check.detail}`)
    }
    set.headers['content-type'] = 'application/oauth-authz-req+jwt'
    set.headers['cache-control'] = 'no-store'
    return signRequestObject(
      credentials!.verifier,
      { nonce: request.nonce, state, responseUri, threshold: request.ageRequired, encryptionKey, walletNonce: wallet?.nonce },
      deps.clock.now(),
    )
  }

  return new Elysia({ name: 'request-uri-routes' })
    .get('/api/oid4vp/requests/:state', ({ params, set }) => requestObject(params.state, set), { detail: { hide: true } })
    .post('/api/oid4vp/requests/:state', ({ params, body, set }) => requestObject(params.state, set, { metadata: body.wallet_metadata, nonce: body.wallet_nonce }), {
      parse: [readPost, 'urlencoded'],
      body: RequestUriPost,
      detail: { hide: true },
    })
}
