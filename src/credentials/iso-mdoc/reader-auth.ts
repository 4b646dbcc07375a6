import type { JWK } from 'jose'
import { encodeCbor } from './cbor-env.ts'

/** The key and certificates a reader (we, the relying party) signs its DeviceRequest with. */
export type ReaderKey = {
  /**
   * EC P-256 private key (ES256), as the reader certificate of Apple's sample request has: a WebCrypto ECDSA
   * key with `sign` usage (the operator's, as trust/reader-identity.ts loads it) or a private JWK.
   */
  privateKey: CryptoKey | JWK
  /** DER certificates, the reader certificate (of `privateKey`) first, as RFC 9360 orders x5chain. */
  certificateChain: Uint8Array[]
}

/** RFC 9053 §2.1: ES256. ISO 18013-5 wants this one, not the fully specified ESP256 (-9). */
const ES256 = -7
/** RFC 9360 §2: x5chain. */
const X5CHAIN = 33

/**
 * A detached COSE_Sign1 (RFC 9052 §4.2) over `payload`, as ISO 18013-5 §9.1.4 makes readerAuth: protected
 * header `{1: -7}`, the chain in the unprotected header (label 33: one certificate as a bstr, more as an
 * array, RFC 9360 §2), payload null (the wallet rebuilds ReaderAuthenticationBytes from its own transcript,
 * so a signature made for another origin or EncryptionInfo does not verify), external AAD empty.
 */
export async function signDetachedCoseSign1(key: ReaderKey, payload: Uint8Array): Promise<unknown[]> {
  if (key.certificateChain.length === 0) throw new TypeError('readerAuth needs the reader certificate')
  const protectedHeader = encodeCbor(new Map([[1, ES256]]))
  // RFC 9052 §4.4: Sig_structure = ["Signature1", body_protected, external_aad, payload].
  const toBeSigned = new Uint8Array(encodeCbor(['Signature1', protectedHeader, new Uint8Array(), payload]))
  const signingKey = key.privateKey instanceof CryptoKey ? key.privateKey : await importSigningKey(key.privateKey)
  // WebCrypto's ECDSA signature is r || s, the form RFC 9053 §2.1 prescribes.
  const signature = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, signingKey, toBeSigned))
  const chain = key.certificateChain.length === 1 ? key.certificateChain[0] : key.certificateChain
  return [protectedHeader, new Map([[X5CHAIN, chain]]), null, signature]
}

function importSigningKey({ kty, crv, x, y, d }: JWK): Promise<CryptoKey> {
  return crypto.subtle.importKey('jwk', { kty, crv, x, y, d }, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign'])
}
