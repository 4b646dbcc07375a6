import { X509Certificate } from 'node:crypto'
import type { JWK, ProtectedHeaderParameters } from 'jose'

/**
 * The issuers whose age credentials this deployment accepts: root certificates (an issuer's credential
 * carries its certificate chain in `x5c`, which must end at one of them) and bare public keys (JWKs, P-256,
 * named by `kid`), for issuers that publish keys rather than certificates.
 */
export type TrustList = { keys: JWK[]; roots: X509Certificate[] }

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g

/**
 * Reads a trust list file: PEM certificates, and/or a JWK set `{ "keys": [...] }` (public EC P-256 keys
 * only). Anything it cannot read is an error at start-up, never a silently smaller list.
 */
export function parseTrustList(text: string): TrustList {
  const roots = (text.match(PEM_CERTIFICATE) ?? []).map((pem, index) => {
    try {
      return new X509Certificate(pem)
    } catch {
      throw new Error(`trust list certificate ${index}: not a readable X.509 certificate`)
    }
  })
  const rest = text.replace(PEM_CERTIFICATE, '').trim()
  const keys = rest ? parseJwks(rest) : []
  if (roots.length === 0 && keys.length === 0) throw new Error('a trust list holds PEM certificates and/or { "keys": [ ...JWK ] }')
  return { keys, roots }
}

function parseJwks(json: string): JWK[] {
  const document = JSON.parse(json) as { keys?: unknown }
  if (!Array.isArray(document.keys)) throw new Error('a trust list is { "keys": [ ...JWK ] }')
  return document.keys.map((key, index) => {
    const jwk = key as JWK
    if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
      throw new Error(`trust list key ${index}: only EC P-256 public keys (ES256) are accepted`)
    }
    // A private part has no business in a trust list: refuse it rather than carry it around.
    if ('d' in jwk) throw new Error(`trust list key ${index}: a private key; publish only the public part`)
    return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, ...(jwk.kid && { kid: jwk.kid }) }
  })
}

/**
 * The key a credential's signature must verify with, or undefined when the header names no trusted
 * issuer. With `x5c`: the leaf certificate's key, if every certificate is valid at `now` and signed by the
 * next, and the last is a trusted root or signed by one. Otherwise the trusted JWK its `kid` names (with
 * no `kid`, the only key of a one-key list). Never a bare key the credential carries (`jwk`): that would
 * let anyone sign.
 */
export function findIssuerKey(list: TrustList, header: ProtectedHeaderParameters, now: Date): JWK | undefined {
  if (header.alg !== 'ES256') return undefined
  if (header.x5c !== undefined) return chainKey(list, header.x5c, now)
  if (header.kid !== undefined) return list.keys.find((key) => key.kid === header.kid)
  return list.keys.length === 1 ? list.keys[0] : undefined
}

function chainKey(list: TrustList, x5c: unknown, now: Date): JWK | undefined {
  if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > 5 || !x5c.every((entry) => typeof entry === 'string')) return undefined
  let chain: X509Certificate[]
  try {
    chain = x5c.map((der) => new X509Certificate(Buffer.from(der, 'base64')))
  } catch {
    return undefined
  }
  const current = (cert: X509Certificate) => new Date(cert.validFrom) <= now && now <= new Date(cert.validTo)
  if (!chain.every(current)) return undefined
  for (let i = 0; i + 1 < chain.length; i++) {
    if (!chain[i]!.checkIssued(chain[i + 1]!) || !chain[i]!.verify(chain[i + 1]!.publicKey)) return undefined
  }
  const last = chain.at(-1)!
  const anchored = list.roots.some(
    (root) => current(root) && (root.fingerprint256 === last.fingerprint256 || (last.checkIssued(root) && last.verify(root.publicKey))),
  )
  if (!anchored) return undefined
  const jwk = chain[0]!.publicKey.export({ format: 'jwk' }) as JWK
  return jwk.kty === 'EC' && jwk.crv === 'P-256' ? { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } : undefined
}
