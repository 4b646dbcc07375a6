import { X509Certificate } from 'node:crypto'
import { digest, ES256, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import type { JWK } from 'jose'
import { presentDevMdoc, type DevMdocPresentation } from '../../src/credentials/dev/mdoc.ts'
import type { DevWallet } from '../../src/credentials/dev/wallet.ts'
import { encryptResponse, thumbprint, type ContentEncryption, type RecipientKey } from './jwe-encrypt.ts'
import { walletSessionTranscript, type HandoverBinding } from './openid4vp-handover.ts'
import { readRegistrationCertificate } from './registration-certificate.ts'

/**
 * A test wallet for OpenID4VP 1.0 signed requests and encrypted answers (HAIP 1.0 §5), written apart from
 * the verifier for everything it checks: the request's JWS is verified with WebCrypto, the `x509_hash`
 * client id computed here, `expected_origins` compared with the origin the wallet is called from, the
 * answer encrypted by jwe-encrypt.ts and the mdoc transcript built by openid4vp-handover.ts. The SD-JWT
 * presentation itself is made with @sd-jwt, the library the verifier also uses: the SD-JWT format is that
 * library's to get right, and the binding around it (audience, nonce, encryption) is made here.
 */

/** Presents an issued mdoc over a SessionTranscript; presentDevMdoc by default, an independent holder where given. */
export type MdocHolder = (issued: Uint8Array, presentation: DevMdocPresentation) => Promise<Uint8Array>

type CredentialQuery = { id: string; format: string; meta?: { doctype_value?: string }; claims?: { path: string[] }[] }
export type RequestObject = {
  client_id: string
  response_type: string
  response_mode: string
  response_uri?: string
  nonce: string
  state?: string
  expected_origins?: unknown
  dcql_query: { credentials: CredentialQuery[] }
  client_metadata?: { jwks?: { keys?: RecipientKey[] }; encrypted_response_enc_values_supported?: string[] }
  /** §5.10.1: the nonce a wallet sent when it fetched the request by POST, signed back to it. */
  wallet_nonce?: string
  /** §5.1: attestations about the verifier (its registration certificate). */
  verifier_info?: unknown
}

/** Why the wallet refuses a signed request; a DC API caller sees only `invalid_request` (A.2). */
export type RequestRefusal = 'malformed' | 'signature' | 'client_id' | 'expired' | 'origin'

/** A checked request, and the leaf certificate of its `x5c` (the verifier's access certificate). */
export type CheckedRequest = { ok: true; request: RequestObject; accessCertificate: Buffer }

const SKEW_S = 60
const textOf = (part: string) => Buffer.from(part, 'base64url').toString('utf8')

/**
 * Checks a signed request object (OpenID4VP 1.0 §5, §5.9.3): typed `oauth-authz-req+jwt`, ES256, signed
 * by the key of the leaf certificate in `x5c`, whose SHA-256 is the `x509_hash` client id; not expired.
 * With `origin` (the Digital Credentials API), that origin must be one of `expected_origins`, compared as
 * plain strings (Appendix A.2). This test wallet trusts the certificate it is shown; a real one would also
 * check its chain against the verifier roots of its trust framework.
 */
export async function checkSignedRequest(jws: string, options: { now: Date; origin?: string }): Promise<CheckedRequest | { ok: false; refusal: RequestRefusal }> {
  const parts = jws.split('.')
  let header: { typ?: unknown; alg?: unknown; x5c?: unknown }
  let request: RequestObject
  try {
    header = JSON.parse(textOf(parts[0] ?? ''))
    request = JSON.parse(textOf(parts[1] ?? ''))
  } catch {
    return { ok: false, refusal: 'malformed' }
  }
  const leaf = Array.isArray(header.x5c) && typeof header.x5c[0] === 'string' ? Buffer.from(header.x5c[0], 'base64') : undefined
  if (parts.length !== 3 || header.typ !== 'oauth-authz-req+jwt' || header.alg !== 'ES256' || !leaf || !request || typeof request !== 'object') return { ok: false, refusal: 'malformed' }

  let key: CryptoKey
  try {
    const spki = new X509Certificate(leaf).publicKey.export({ type: 'spki', format: 'der' })
    key = await crypto.subtle.importKey('spki', spki, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify'])
  } catch {
    return { ok: false, refusal: 'malformed' }
  }
  // RFC 7518 §3.4: an ES256 signature is R || S, 64 bytes, as WebCrypto takes it.
  const signed = await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, Buffer.from(parts[2]!, 'base64url'), new TextEncoder().encode(`${parts[0]}.${parts[1]}`))
  if (!signed) return { ok: false, refusal: 'signature' }
  const leafHash = Buffer.from(await crypto.subtle.digest('SHA-256', leaf)).toString('base64url')
  if (request.client_id !== `x509_hash:${leafHash}`) return { ok: false, refusal: 'client_id' }

  const now = Math.floor(options.now.getTime() / 1000)
  const { exp, iat } = request as { exp?: unknown; iat?: unknown }
  if (typeof exp !== 'number' || exp <= now - SKEW_S || (typeof iat === 'number' && iat > now + SKEW_S)) return { ok: false, refusal: 'expired' }
  if (options.origin !== undefined) {
    const expected = request.expected_origins
    if (!Array.isArray(expected) || !expected.includes(options.origin)) return { ok: false, refusal: 'origin' }
  }
  return { ok: true, request, accessCertificate: leaf }
}

export type AnswerOptions = {
  now: Date
  /** The mdoc holder (test/wallets/mdoc.ts can stand in for presentDevMdoc). */
  presentMdoc?: MdocHolder
  /** The `enc` to encrypt with; by default A256GCM where the verifier lists it (HAIP 1.0 §5: SHOULD). */
  enc?: ContentEncryption
  /** Plays a wallet that gets the binding wrong: another KB-JWT audience than the spec's. */
  audience?: string
  /** Plays a wallet that gets the binding wrong: the mdoc transcript without the key's thumbprint. */
  omitThumbprint?: boolean
}

/** The encryption key the verifier passed (§8.3): EC P-256 for ECDH-ES, `use` `enc` or none. */
function encryptionKeyOf(request: RequestObject): RecipientKey {
  const key = request.client_metadata?.jwks?.keys?.find((jwk) => (jwk.use ?? 'enc') === 'enc' && jwk.alg === 'ECDH-ES' && jwk.kty === 'EC' && jwk.crv === 'P-256')
  if (!key) throw new Error('the request names no P-256 ECDH-ES key to encrypt to')
  return key
}

/** §5.1: without `encrypted_response_enc_values_supported`, the single default is A128GCM. */
function encOf(request: RequestObject, wanted?: ContentEncryption): ContentEncryption {
  const offered = request.client_metadata?.encrypted_response_enc_values_supported ?? ['A128GCM']
  const enc = wanted ?? (offered.includes('A256GCM') ? 'A256GCM' : 'A128GCM')
  if (!offered.includes(enc)) throw new Error(`the verifier does not accept ${enc}`)
  return enc
}

/**
 * The `vp_token` (§8.1) for a request: the first of our credentials that a query asks for, disclosing one
 * age statement, bound to the nonce and to `binding` (KB-JWT `aud` B.3.6, mdoc transcript B.2.6).
 */
async function presentAge(wallet: DevWallet, request: RequestObject, binding: HandoverBinding, options: AnswerOptions): Promise<Record<string, string[]>> {
  for (const query of request.dcql_query.credentials) {
    const held = wallet.credentials.find((credential) => credential.format === query.format && (credential.format !== 'mso_mdoc' || credential.docType === query.meta?.doctype_value))
    if (!held) continue
    const threshold = Number(String(query.claims?.[0]?.path.at(-1)).replace(/^age_over_/, ''))
    if (held.format === 'dc+sd-jwt') {
      const audience = options.audience ?? ('origin' in binding ? `origin:${binding.origin}` : binding.clientId)
      return { [query.id]: [await presentSdJwt(held.credential, wallet.holder.privateKey, { threshold, audience, nonce: request.nonce, now: options.now })] }
    }
    const sessionTranscript = await walletSessionTranscript(options.omitThumbprint ? { ...binding, jwkThumbprint: null } : binding, request.nonce)
    const presentMdoc = options.presentMdoc ?? presentDevMdoc
    const response = await presentMdoc(Buffer.from(held.credential, 'base64url'), { holderPrivateKey: wallet.holder.privateKey, sessionTranscript, threshold })
    return { [query.id]: [Buffer.from(response).toString('base64url')] }
  }
  throw new Error('the wallet holds no credential this request asks for')
}

/** Discloses the lowest true `age_equal_or_over` at or above the threshold, with a KB-JWT over nonce and audience. */
async function presentSdJwt(credential: string, holderKey: JWK, options: { threshold: number; audience: string; nonce: string; now: Date }): Promise<string> {
  const sdJwt = new SDJwtVcInstance({ hasher: digest, saltGenerator: generateSalt, kbSigner: await ES256.getSigner(holderKey), kbSignAlg: 'ES256' })
  const { age_equal_or_over: ages = {} } = (await sdJwt.getClaims(credential)) as { age_equal_or_over?: Record<string, boolean> }
  const [lowest] = Object.keys(ages).filter((age) => ages[age] === true && Number(age) >= options.threshold).sort((a, b) => Number(a) - Number(b))
  const frame = lowest === undefined ? {} : { age_equal_or_over: { [lowest]: true } }
  const kb = { payload: { iat: Math.floor(options.now.getTime() / 1000), aud: options.audience, nonce: options.nonce } }
  return sdJwt.present(credential, frame as never, { kb })
}

/**
 * Answers a Digital Credentials API request as the browser would hand it to the wallet, called from
 * `origin`. Returns the `data` the page gets back (Appendix A.4): `{ response: <JWE> }` for `dc_api.jwt`,
 * `{ vp_token }` for `dc_api`, or `{ error: 'invalid_request' }` for a request the wallet refuses.
 */
export async function answerSignedDcApiRequest(
  wallet: DevWallet,
  dcRequest: { protocol: string; data: { request?: unknown } },
  options: AnswerOptions & { origin: string },
): Promise<{ response: string } | { vp_token: Record<string, string[]> } | { error: string }> {
  if (dcRequest.protocol !== 'openid4vp-v1-signed' || typeof dcRequest.data.request !== 'string') return { error: 'invalid_request' }
  const checked = await checkSignedRequest(dcRequest.data.request, { now: options.now, origin: options.origin })
  if (!checked.ok) return { error: 'invalid_request' }
  return answerDcApiRequestObject(wallet, checked.request, options)
}

/**
 * Answers an unsigned Digital Credentials API request (Appendix A.3.1, `openid4vp-v1-unsigned`): the
 * request is the `data` itself, and only the browser vouches for where it came from (`origin`).
 */
export async function answerUnsignedDcApiRequest(
  wallet: DevWallet,
  dcRequest: { protocol: string; data: unknown },
  options: AnswerOptions & { origin: string },
): Promise<{ response: string } | { vp_token: Record<string, string[]> } | { error: string }> {
  const request = dcRequest.data as RequestObject
  if (dcRequest.protocol !== 'openid4vp-v1-unsigned' || !request || typeof request !== 'object' || 'client_id' in request) return { error: 'invalid_request' }
  return answerDcApiRequestObject(wallet, request, options)
}

async function answerDcApiRequestObject(
  wallet: DevWallet,
  request: RequestObject,
  options: AnswerOptions & { origin: string },
): Promise<{ response: string } | { vp_token: Record<string, string[]> } | { error: string }> {
  if (request.response_mode === 'dc_api') return { vp_token: await presentAge(wallet, request, { origin: options.origin, jwkThumbprint: null }, options) }
  if (request.response_mode !== 'dc_api.jwt') return { error: 'invalid_request' }
  const key = encryptionKeyOf(request)
  const vpToken = await presentAge(wallet, request, { origin: options.origin, jwkThumbprint: await thumbprint(key) }, options)
  return { response: await encryptResponse({ vp_token: vpToken }, key, { enc: encOf(request, options.enc) }) }
}

/** How this wallet fetches a request whose link says `request_uri_method=post` (§5.10), as the EUDI wallet does. */
export type RequestUriPost = {
  /** `wallet_metadata` (§10.1, RFC 8414), sent as JSON; none when absent. */
  walletMetadata?: Record<string, unknown>
  /** `wallet_nonce`: by default 16 random bytes in base64, as the EUDI wallet sends it; `false` sends none. */
  walletNonce?: string | false
}

/**
 * Fetches the request object behind a link: by POST with the wallet's metadata and its own nonce where the
 * link says `request_uri_method=post` and this wallet posts (§5.10: form-encoded, `Accept:
 * application/oauth-authz-req+jwt`), else by GET (RFC 9101). Follows no redirect (errata 1, "HTTP Redirects").
 */
export async function fetchRequestObject(link: URL, fetcher: typeof fetch, post?: RequestUriPost): Promise<{ jws: string; walletNonce?: string }> {
  const requestUri = link.searchParams.get('request_uri')
  if (!requestUri) throw new Error('the link names no request_uri')
  if (!post || link.searchParams.get('request_uri_method') !== 'post') {
    const fetched = await fetcher(requestUri, { redirect: 'manual' })
    if (fetched.status !== 200) throw new Error(`the request could not be fetched: HTTP ${fetched.status}`)
    return { jws: await fetched.text() }
  }
  const walletNonce = post.walletNonce === false ? undefined : (post.walletNonce ?? Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64'))
  const form = new URLSearchParams()
  if (post.walletMetadata) form.set('wallet_metadata', JSON.stringify(post.walletMetadata))
  if (walletNonce !== undefined) form.set('wallet_nonce', walletNonce)
  const fetched = await fetcher(requestUri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/oauth-authz-req+jwt' },
    body: form,
    redirect: 'manual',
  })
  // §5.10.2: "If the Verifier responds with any HTTP error response, the Wallet MUST terminate the process."
  if (fetched.status !== 200) throw new Error(`the request could not be fetched: HTTP ${fetched.status}`)
  if (!fetched.headers.get('content-type')?.startsWith('application/oauth-authz-req+jwt')) throw new Error('the request URI answered something else than a request object')
  return { jws: await fetched.text(), ...(walletNonce !== undefined && { walletNonce }) }
}

/**
 * Answers a cross-device request end to end, as a phone would after scanning the QR code: fetches the
 * request object from `request_uri` (by POST with `requestUriPost`, where the link invites it), checks it,
 * and posts the answer to `response_uri`: `response=<JWE>` of `{ vp_token, state }` for `direct_post.jwt`
 * (§8.3.1), or `vp_token` and `state` in the clear for `direct_post` (§8.2). `decline` answers
 * `access_denied` instead. With `requireRegistration` the wallet refuses a request without a registration
 * certificate for the relying party that signed it, as the EUDI wallet does under a registration policy.
 */
export async function answerCrossDeviceRequest(
  wallet: DevWallet,
  walletUrl: string,
  options: AnswerOptions & { fetcher?: typeof fetch; decline?: boolean; requestUriPost?: RequestUriPost; requireRegistration?: boolean },
): Promise<{ status: number; body: unknown; request: RequestObject; registration?: Record<string, unknown> }> {
  const fetcher = options.fetcher ?? fetch
  const link = new URL(walletUrl)
  const fetched = await fetchRequestObject(link, fetcher, options.requestUriPost)
  const checked = await checkSignedRequest(fetched.jws, { now: options.now })
  if (!checked.ok) throw new Error(`the wallet refuses the request: ${checked.refusal}`)
  const { request } = checked
  if (request.client_id !== link.searchParams.get('client_id') || !request.response_uri) throw new Error('the request does not match its link')
  // §5.10.1: the Wallet "MUST validate whether the request object contains the respective nonce value in a wallet_nonce claim".
  if (fetched.walletNonce !== undefined && request.wallet_nonce !== fetched.walletNonce) throw new Error('the wallet refuses the request: wallet_nonce')
  let registration: Record<string, unknown> | undefined
  if (options.requireRegistration) {
    const read = await readRegistrationCertificate(request.verifier_info, checked.accessCertificate)
    if (!read.ok) throw new Error(`the wallet refuses the request: registration ${read.refusal}`)
    registration = read.claims
  }

  const encrypted = request.response_mode === 'direct_post.jwt'
  if (!encrypted && request.response_mode !== 'direct_post') throw new Error(`response mode ${request.response_mode} is not one for a cross-device answer`)
  const key = encrypted ? encryptionKeyOf(request) : undefined
  const binding = { clientId: request.client_id, responseUri: request.response_uri, jwkThumbprint: key ? await thumbprint(key) : null }
  const answer = options.decline ? { error: 'access_denied' } : { vp_token: await presentAge(wallet, request, binding, options) }
  const parameters = { ...answer, ...(request.state === undefined ? {} : { state: request.state }) }
  const body = key
    ? new URLSearchParams({ response: await encryptResponse(parameters, key, { enc: encOf(request, options.enc) }) })
    : new URLSearchParams(Object.entries(parameters).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]))
  const posted = await fetcher(request.response_uri, { method: 'POST', body, redirect: 'manual' })
  return { status: posted.status, body: await posted.json().catch(() => undefined), request, ...(registration && { registration }) }
}
