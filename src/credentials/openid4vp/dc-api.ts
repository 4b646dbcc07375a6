import type { VerifierKey } from '../../keys/verifier-key.ts'
import { ageQuery } from '../queries.ts'
import { buildClientMetadata } from './client-metadata.ts'
import { signRequest, verifierInfoOf } from './request-object.ts'
import type { ResponseEncryptionPublicKey } from './response-encryption-key.ts'

/**
 * The unsigned Digital Credentials API request (OpenID4VP 1.0 Appendix A.3.1, `openid4vp-v1-unsigned`),
 * answered to the page's script; the browser binds it to our origin, so the audience is `origin:<origin>`.
 * With `encryptionKey` the answer comes encrypted to it (`dc_api.jwt`, §8.3: the EUDI wallets accept no
 * other by default); without, in the clear (`dc_api`), where the operator allows plain answers.
 */
export function digitalCredentialsRequest(nonce: string, threshold: number, encryptionKey?: ResponseEncryptionPublicKey) {
  return {
    protocol: 'openid4vp-v1-unsigned',
    data: {
      response_type: 'vp_token',
      response_mode: encryptionKey ? 'dc_api.jwt' : 'dc_api',
      nonce,
      dcql_query: ageQuery(threshold),
      client_metadata: buildClientMetadata(encryptionKey),
    },
  } as const
}

export type SignedDcApiRequestOptions = {
  nonce: string
  threshold: number
  /** The origins of the pages that may make this request: the wallet refuses it from any other (A.2). */
  expectedOrigins: string[]
  /** This request's own encryption key: the answer comes back encrypted to it (`dc_api.jwt`). */
  encryptionKey: ResponseEncryptionPublicKey
  now: Date
}

/**
 * A signed Digital Credentials API request (OpenID4VP 1.0 Appendix A.3.2.1, protocol `openid4vp-v1-signed`),
 * as HAIP 1.0 §5.2 and Google Wallet ask for it: the request object signed by our `x509_hash` client id,
 * passed as `data.request`; `response_mode` `dc_api.jwt` (HAIP: the Verifier MUST use it), so the answer
 * is a JWE to `encryptionKey`. `client_id` MUST be present in a signed request and `expected_origins` is
 * REQUIRED (A.2), so a page elsewhere cannot replay it. Even so, the presentation's audience stays the
 * page's origin (A.4): the client id authenticates the request, the origin binds the answer. The operator's
 * registration certificate, when there is one, rides in `verifier_info` (A.2 lists it), as in the QR code's request.
 */
export async function signedDcApiRequest(verifier: VerifierKey, options: SignedDcApiRequestOptions) {
  assertOrigins(options.expectedOrigins)
  const request = await signRequest(
    verifier,
    {
      client_id: verifier.clientId,
      expected_origins: options.expectedOrigins,
      response_type: 'vp_token',
      response_mode: 'dc_api.jwt',
      nonce: options.nonce,
      dcql_query: ageQuery(options.threshold),
      client_metadata: buildClientMetadata(options.encryptionKey, verifier.rpMetadata),
      ...verifierInfoOf(verifier),
    },
    options.now,
  )
  return { protocol: 'openid4vp-v1-signed', data: { request } } as const
}

/**
 * A wallet compares `expected_origins` with the browser's origin by plain string comparison (A.2, errata
 * 1), so a value that is not exactly an origin (a path, a trailing slash) would never match: a setup
 * mistake, refused when the request is built rather than by every wallet.
 */
function assertOrigins(origins: string[]): void {
  if (origins.length === 0) throw new TypeError('expected_origins must name at least one origin')
  for (const origin of origins) {
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    if (!parsed || parsed.origin !== origin || !/^https?:$/.test(parsed.protocol)) throw new TypeError(`expected_origins: ${origin} is not an http(s) origin`)
  }
}
