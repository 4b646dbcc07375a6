import { SignJWT, type JWTPayload } from 'jose'
import type { VerifierKey } from '../../keys/verifier-key.ts'
import { ageQuery } from '../queries.ts'
import { buildClientMetadata } from './client-metadata.ts'
import type { ResponseEncryptionPublicKey } from './response-encryption-key.ts'

/**
 * One cross-device request. With `encryptionKey` (this request's own, `generateResponseEncryptionKey`) the
 * wallet answers `direct_post.jwt`: its answer, `state` included, encrypted to that key (OpenID4VP 1.0
 * §8.3.1). Without, plain `direct_post`, for an operator who allows wallets that cannot encrypt.
 */
export type WalletRequest = {
  nonce: string
  state: string
  responseUri: string
  threshold: number
  encryptionKey?: ResponseEncryptionPublicKey
  /** The wallet's own nonce, when it fetched the request by POST with one (§5.10): signed back to it. */
  walletNonce?: string
}

/** How long a signed request may be used after it was made. */
const REQUEST_LIFETIME_S = 300

/**
 * The signed request object a wallet fetches from `request_uri` (OpenID4VP 1.0 §5, RFC 9101): typed
 * `oauth-authz-req+jwt`, signed with the key of the `x509_hash` client id, our certificate in `x5c`; with the
 * operator's registration certificate in `verifier_info`, and the `wallet_nonce` of a wallet that sent one.
 */
export async function signRequestObject(verifier: VerifierKey, request: WalletRequest, now: Date): Promise<string> {
  return signRequest(
    verifier,
    {
      client_id: verifier.clientId,
      response_type: 'vp_token',
      response_mode: request.encryptionKey ? 'direct_post.jwt' : 'direct_post',
      response_uri: request.responseUri,
      nonce: request.nonce,
      state: request.state,
      dcql_query: ageQuery(request.threshold),
      client_metadata: buildClientMetadata(request.encryptionKey, verifier.rpMetadata),
      ...verifierInfoOf(verifier),
      // §5.10: "When received, the Verifier MUST use it as the wallet_nonce value in the signed authorization request object."
      ...(request.walletNonce !== undefined && { wallet_nonce: request.walletNonce }),
    },
    now,
  )
}

/**
 * A request object signed by our verifier key, for a wallet that fetches it and for the Digital Credentials
 * API alike (OpenID4VP 1.0 §5, Appendix A.3.2). §5: Verifiers MUST include `typ` `oauth-authz-req+jwt`;
 * §5.9.3: the `x509_hash` client id is the hash of the leaf of `x5c`, whose key signs.
 */
export async function signRequest(verifier: VerifierKey, claims: JWTPayload, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000)
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', typ: 'oauth-authz-req+jwt', x5c: verifier.x5c })
    // §5.8: a request fetched by reference is addressed to the Self-Issued OP, whoever the wallet is.
    .setAudience('https://self-issued.me/v2')
    .setIssuedAt(iat)
    .setExpirationTime(iat + REQUEST_LIFETIME_S)
    .sign(verifier.privateKey)
}

/**
 * `verifier_info` (§5.1) of a signed request, when the operator has attestations about us: absent
 * otherwise, so that a deployment without a registration certificate sends what it always sent.
 */
export function verifierInfoOf(verifier: VerifierKey): { verifier_info?: VerifierKey['verifierInfo'] } {
  return verifier.verifierInfo?.length ? { verifier_info: verifier.verifierInfo } : {}
}

/**
 * What the QR code and the same-device link carry: the client id, where to fetch the request, and
 * `request_uri_method=post` (§5.1), which invites a wallet to POST its metadata and a nonce of its own
 * there (§5.10), as the EUDI reference wallet does; a wallet that does not, GETs it as before.
 */
export function walletLink(verifier: VerifierKey, requestUri: string): string {
  return `openid4vp://?${new URLSearchParams({ client_id: verifier.clientId, request_uri: requestUri, request_uri_method: 'post' })}`
}
