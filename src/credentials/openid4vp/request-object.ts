import { SignJWT } from 'jose'
import type { VerifierKey } from '../../keys/verifier-key.ts'
import { ageQuery } from '../queries.ts'
import { clientMetadata } from './client-metadata.ts'

export type WalletRequest = { nonce: string; state: string; responseUri: string; threshold: number }

/**
 * The signed request object a wallet fetches from `request_uri` (OpenID4VP 1.0 §5, RFC 9101): typed
 * `oauth-authz-req+jwt`, signed with the key of the `x509_hash` client id, our certificate in `x5c`.
 */
export async function signRequestObject(verifier: VerifierKey, request: WalletRequest, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000)
  return new SignJWT({
    client_id: verifier.clientId,
    response_type: 'vp_token',
    response_mode: 'direct_post',
    response_uri: request.responseUri,
    nonce: request.nonce,
    state: request.state,
    dcql_query: ageQuery(request.threshold),
    client_metadata: clientMetadata,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'oauth-authz-req+jwt', x5c: verifier.x5c })
    // §5.8: a request fetched by reference is addressed to the Self-Issued OP, whoever the wallet is.
    .setAudience('https://self-issued.me/v2')
    .setIssuedAt(iat)
    .setExpirationTime(iat + 300)
    .sign(verifier.privateKey)
}

/** What the QR code and the same-device link carry: the client id and where to fetch the request. */
export function walletLink(verifier: VerifierKey, requestUri: string): string {
  return `openid4vp://?${new URLSearchParams({ client_id: verifier.clientId, request_uri: requestUri })}`
}
