import { calculateJwkThumbprint, type JWK } from 'jose'

/**
 * The public half of a request's response encryption key, as it stands in `client_metadata.jwks`
 * (OpenID4VP 1.0 §5.1, §8.3): EC P-256 for ECDH-ES (HAIP 1.0 §5), `use: enc`, and a `kid` the wallet
 * must repeat in the JWE header.
 */
export type ResponseEncryptionPublicKey = { kty: 'EC'; crv: 'P-256'; x: string; y: string; kid: string; use: 'enc'; alg: 'ECDH-ES' }

/** A request's response encryption key pair. The private JWK stays with the request, never in a response. */
export type ResponseEncryptionKey = { publicKey: ResponseEncryptionPublicKey; privateKey: JWK }

/**
 * A fresh key pair for one request. HAIP 1.0 §5: "Verifiers MUST supply ephemeral encryption public keys
 * specific to each Authorization Request". Its `kid` is its RFC 7638 thumbprint: unique to the key, so the
 * `kid` of an encrypted response finds its request, and it says nothing but what the key already says.
 */
export async function generateResponseEncryptionKey(): Promise<ResponseEncryptionKey> {
  const pair = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits'])
  const { x, y, d } = (await crypto.subtle.exportKey('jwk', pair.privateKey)) as JWK
  if (!x || !y || !d) throw new Error('WebCrypto exported an EC key without coordinates')
  const kid = await calculateJwkThumbprint({ kty: 'EC', crv: 'P-256', x, y }, 'sha256')
  const publicKey: ResponseEncryptionPublicKey = { kty: 'EC', crv: 'P-256', x, y, kid, use: 'enc', alg: 'ECDH-ES' }
  return { publicKey, privateKey: { ...publicKey, d } }
}

/**
 * The RFC 7638 SHA-256 thumbprint of the public key a response was encrypted to, as the mdoc
 * SessionTranscript carries it (OpenID4VP 1.0 Appendix B.2.6: `jwkThumbprint`, 32 bytes). Only the
 * required members count (`crv`, `kty`, `x`, `y`), so `kid`, `use` and `alg` do not change it.
 */
export async function responseKeyThumbprint(publicKey: Pick<JWK, 'kty' | 'crv' | 'x' | 'y'>): Promise<Uint8Array> {
  return new Uint8Array(Buffer.from(await calculateJwkThumbprint(publicKey, 'sha256'), 'base64url'))
}

/** The public half of a request's key pair as it was sent (`generateResponseEncryptionKey`'s private JWK minus `d`). */
export function publicEncryptionKey(privateKey: JWK): ResponseEncryptionPublicKey {
  const { kty, crv, x, y, kid, use, alg } = privateKey
  return { kty, crv, x, y, kid, use, alg } as ResponseEncryptionPublicKey
}
