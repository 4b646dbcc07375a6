import type { JWK, ProtectedHeaderParameters } from 'jose'

/**
 * The issuers whose age credentials this deployment accepts. Today: public JWKs (P-256, ES256), each
 * optionally named by `kid`. (Certificate chains, `x5c` to IACA roots for mdoc, come with the mdoc format.)
 */
export type TrustList = { keys: JWK[] }

/** Reads a trust list document: `{ "keys": [JWK, ...] }`, public EC P-256 keys only. */
export function parseTrustList(json: string): TrustList {
  const document = JSON.parse(json) as { keys?: unknown }
  if (!Array.isArray(document.keys)) throw new Error('a trust list is { "keys": [ ...JWK ] }')
  const keys = document.keys.map((key, index) => {
    const jwk = key as JWK
    if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
      throw new Error(`trust list key ${index}: only EC P-256 public keys (ES256) are accepted`)
    }
    // A private part has no business in a trust list: refuse it rather than carry it around.
    if ('d' in jwk) throw new Error(`trust list key ${index}: a private key; publish only the public part`)
    return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, ...(jwk.kid && { kid: jwk.kid }) }
  })
  return { keys }
}

/**
 * The trusted key a credential names in its header (`kid`); with no `kid`, the only key of a one-key
 * list. Never a key the credential carries itself (`jwk`, `x5c`): that would let anyone sign.
 */
export function findIssuerKey(list: TrustList, header: ProtectedHeaderParameters): JWK | undefined {
  if (header.alg !== 'ES256') return undefined
  if (header.kid !== undefined) return list.keys.find((key) => key.kid === header.kid)
  return list.keys.length === 1 ? list.keys[0] : undefined
}
