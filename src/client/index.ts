import { errors, jwtVerify, type JWTPayload } from 'jose'
import { KeySet } from './key-set.ts'

export { verifyWebhook, type WebhookCheck, type WebhookEvent } from './webhook.ts'

/**
 * `ofage/client`: what a site's backend needs to use an ofage service, with no dependency but jose.
 *
 *   const ofage = new OfageClient({ baseUrl: 'https://age.example.com', clientId, clientSecret })
 *   const start = await ofage.authorizationUrl({ redirectUri, ageRequired: 21 })   // keep start.state and start.codeVerifier
 *   const exchanged = await ofage.exchangeCode({ code, redirectUri, codeVerifier: start.codeVerifier })
 *   const check = exchanged.ok && (await ofage.verifyAgeToken(exchanged.accessToken, { minimumAge: 21 }))
 *   const hook = await verifyWebhook(endpointSecret, rawBody, request.headers)   // at your webhook receiver
 *
 * Expected failures (a refused code, an expired token, a threshold too low) are results with `ok: false`
 * and a reason, not exceptions; only a service that cannot be reached to start a request throws.
 */

export type OfageClientOptions = {
  /** The service's address, as its operator publishes it (its metadata lives under it). */
  baseUrl: string
  clientId: string
  /** Needed to exchange codes and to push requests; never in a browser. */
  clientSecret?: string
  fetch?: typeof fetch
}

export type AuthorizationOptions = {
  redirectUri: string
  /** The site's threshold, 1 to 99 (default 18). */
  ageRequired?: number
  /** Made up when not given; compare it with the callback's `state`. */
  state?: string
  /**
   * Push the request first (RFC 9126), so the visitor's URL carries nothing they could edit; needs the
   * client secret. Default: on when a secret is configured.
   */
  pushed?: boolean
}

/** Where to send the visitor, and what to keep (in the visitor's server-side session) until the callback. */
export type AuthorizationStart = { url: string; state: string; codeVerifier: string }

export type ExchangeResult =
  | { ok: true; accessToken: string; expiresIn: number; transactionId: string | undefined }
  /** `error` is the service's code (docs/errors.md), or `unreachable` when no answer came. */
  | { ok: false; status: number; error: string; description: string }

/** The claims of an age token (SPEC.md §2.2). */
export type AgeClaims = JWTPayload & {
  iss: string
  aud: string
  sub: string
  age_verified: true
  age_over: number
  verification_level: string
  verification_id: string
  reverification: boolean
  sandbox?: true
}

export type AgeCheckFailure =
  | 'malformed'
  | 'invalid_signature'
  | 'expired'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'not_verified'
  | 'age_too_low'
  | 'sandbox_token'
  | 'key_unavailable'

export type AgeCheck = { ok: true; claims: AgeClaims } | { ok: false; reason: AgeCheckFailure }

type Metadata = { issuer: string; authorization_endpoint: string; token_endpoint: string; jwks_uri: string; pushed_authorization_request_endpoint?: string }

export class OfageClient {
  private readonly fetcher: typeof fetch
  private metadata: Promise<Metadata> | undefined
  private readonly keys: KeySet

  constructor(private readonly options: OfageClientOptions) {
    this.fetcher = options.fetch ?? fetch
    this.keys = new KeySet(async () => (await this.discover()).jwks_uri, this.fetcher)
  }

  /** The service's metadata (RFC 8414), fetched once. */
  discover(): Promise<Metadata> {
    this.metadata ??= (async () => {
      const response = await this.fetcher(`${this.options.baseUrl.replace(/\/$/, '')}/.well-known/oauth-authorization-server`)
      if (!response.ok) throw new Error(`ofage: no metadata at ${this.options.baseUrl} (HTTP ${response.status})`)
      return (await response.json()) as Metadata
    })().catch((cause) => {
      this.metadata = undefined
      throw cause
    })
    return this.metadata
  }

  /** The hosted page's URL for a visitor, with PKCE (S256) always and a pushed request when a secret is set. */
  async authorizationUrl(request: AuthorizationOptions): Promise<AuthorizationStart> {
    const metadata = await this.discover()
    const state = request.state ?? randomBase64url(16)
    const codeVerifier = randomBase64url(32)
    const parameters = new URLSearchParams({
      response_type: 'code',
      redirect_uri: request.redirectUri,
      state,
      age_required: String(request.ageRequired ?? 18),
      code_challenge: await s256(codeVerifier),
      code_challenge_method: 'S256',
    })
    const url = new URL(metadata.authorization_endpoint)
    if (request.pushed ?? this.options.clientSecret !== undefined) {
      if (!metadata.pushed_authorization_request_endpoint) throw new Error('ofage: the service takes no pushed requests')
      const response = await this.post(metadata.pushed_authorization_request_endpoint, parameters)
      const body = (await response.json()) as { request_uri?: string; error?: string; error_description?: string }
      if (response.status !== 201 || !body.request_uri) throw new Error(`ofage: the pushed request was refused: ${body.error ?? response.status} ${body.error_description ?? ''}`.trim())
      url.search = new URLSearchParams({ client_id: this.options.clientId, request_uri: body.request_uri }).toString()
    } else {
      url.search = new URLSearchParams({ client_id: this.options.clientId, ...Object.fromEntries(parameters) }).toString()
    }
    return { url: url.toString(), state, codeVerifier }
  }

  /** Exchanges the callback's code (SPEC.md §4.2), form-encoded with HTTP Basic and the PKCE verifier. */
  async exchangeCode(exchange: { code: string; redirectUri: string; codeVerifier?: string; state?: string }): Promise<ExchangeResult> {
    const metadata = await this.discover()
    const body = new URLSearchParams({ grant_type: 'authorization_code', code: exchange.code, redirect_uri: exchange.redirectUri })
    if (exchange.codeVerifier !== undefined) body.set('code_verifier', exchange.codeVerifier)
    if (exchange.state !== undefined) body.set('state', exchange.state)
    let response: Response
    try {
      response = await this.post(metadata.token_endpoint, body)
    } catch (cause) {
      return { ok: false, status: 0, error: 'unreachable', description: String(cause) }
    }
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>
    if (response.status === 200 && typeof answer.access_token === 'string') {
      return { ok: true, accessToken: answer.access_token, expiresIn: Number(answer.expires_in), transactionId: answer.transaction_id as string | undefined }
    }
    return { ok: false, status: response.status, error: String(answer.error ?? 'server_error'), description: String(answer.error_description ?? '') }
  }

  /**
   * Local validation (SPEC.md §4.8): the single published key, RS256, this service as issuer and this
   * client as audience, `age_verified` true, `age_over` at least the site's threshold, and no sandbox
   * token unless `allowSandbox` (a test client's tokens say `sandbox: true`).
   */
  async verifyAgeToken(token: string, options: { minimumAge: number; allowSandbox?: boolean }): Promise<AgeCheck> {
    const metadata = await this.discover()
    let payload: JWTPayload | undefined
    for (const refresh of [false, true]) {
      const key = await this.keys.current(refresh)
      if (!key) return { ok: false, reason: 'key_unavailable' }
      try {
        payload = (await jwtVerify(token, key, { issuer: metadata.issuer, audience: this.options.clientId, algorithms: ['RS256'] })).payload
        break
      } catch (cause) {
        // A signature that fails with the cached key may be from a new one: fetch the set once more.
        if (cause instanceof errors.JWSSignatureVerificationFailed && !refresh) continue
        return { ok: false, reason: failureOf(cause) }
      }
    }
    const claims = payload as AgeClaims
    if (claims.age_verified !== true) return { ok: false, reason: 'not_verified' }
    if (!Number.isInteger(claims.age_over) || claims.age_over < options.minimumAge) return { ok: false, reason: 'age_too_low' }
    if (claims.sandbox === true && !options.allowSandbox) return { ok: false, reason: 'sandbox_token' }
    return { ok: true, claims }
  }

  private post(url: string, body: URLSearchParams): Promise<Response> {
    if (this.options.clientSecret === undefined) throw new Error('ofage: this needs the client secret')
    const credentials = `${formEncode(this.options.clientId)}:${formEncode(this.options.clientSecret)}`
    return this.fetcher(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(credentials)}`, accept: 'application/json' },
      body,
    })
  }
}

function failureOf(cause: unknown): AgeCheckFailure {
  if (cause instanceof errors.JWTExpired) return 'expired'
  if (cause instanceof errors.JWTClaimValidationFailed) return cause.claim === 'iss' ? 'wrong_issuer' : cause.claim === 'aud' ? 'wrong_audience' : 'malformed'
  if (cause instanceof errors.JWSSignatureVerificationFailed) return 'invalid_signature'
  return 'malformed'
}

/** RFC 6749 §2.3.1: the Basic credentials' parts are form-encoded first. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replaceAll('%20', '+')
}

function randomBase64url(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)))
}

async function s256(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))))
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}
