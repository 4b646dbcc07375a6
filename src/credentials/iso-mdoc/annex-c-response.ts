import { Aes128Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core'
import type { JWK } from 'jose'
import { mdl } from './cbor-env.ts'

/**
 * ISO/IEC 18013-7 Annex C: the wallet answers `{ response: b64url(cbor(EncryptedResponse)) }`, with
 * `EncryptedResponse = ["dcapi", { "enc": bstr, "cipherText": bstr }]`, the DeviceResponse sealed by HPKE
 * (RFC 9180) in base mode with DHKEM(P-256, HKDF-SHA256), HKDF-SHA256 and AES-128-GCM, `info` the CBOR
 * SessionTranscript, no AAD. Opening it proves nothing about the holder yet: the DeviceResponse inside is
 * verified next, against the same transcript (`verifyMdocAgePresentation`).
 */

/** Why an answer could not be opened: not the Annex C shape, or not sealed to this request (key or transcript). */
export type AnnexCOpenFailure = 'malformed' | 'undecryptable'

export type AnnexCOpened = { ok: true; deviceResponse: Uint8Array } | { ok: false; failure: AnnexCOpenFailure }

export type AnnexCOpenParams = {
  /** The private half of this request's HPKE recipient key (EC P-256 JWK). */
  recipientPrivateKey: JWK
  /** `annexCSessionTranscript({ encryptionInfo, origin })` of this request. */
  sessionTranscript: Uint8Array
}

/**
 * An age answer is a few KiB (one document, one element, the issuer's chain); 64 KiB of base64url leaves
 * room for long chains and keeps a hostile answer from costing more than that to refuse.
 */
export const MAX_ANNEX_C_RESPONSE_LENGTH = 64 * 1024

/** RFC 9180 §7.1.1: Nenc of DHKEM(P-256) is 65, an uncompressed point. */
const ENC_LENGTH = 65
/** AES-128-GCM's tag: no ciphertext is shorter. */
const TAG_LENGTH = 16

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() })

const fail = (failure: AnnexCOpenFailure): AnnexCOpened => ({ ok: false, failure })

/**
 * Opens the `data` of a DC API answer to our `org-iso-mdoc` request (the credential's `data`, untrusted,
 * as the page posted it) to the DeviceResponse bytes. Every input is refused with a code, never thrown: a
 * wrong shape or encoding is malformed; a ciphertext that does not open with our key and this transcript
 * (sealed to another request's key, made for another origin or EncryptionInfo, altered) is undecryptable.
 */
export async function openAnnexCResponse(data: unknown, params: AnnexCOpenParams): Promise<AnnexCOpened> {
  const sealed = readEncryptedResponse(data)
  if (!sealed) return fail('malformed')
  const recipientKey = await importRecipientKey(params.recipientPrivateKey)
  try {
    const plaintext = await suite.open({ recipientKey, enc: sealed.enc, info: params.sessionTranscript }, sealed.cipherText)
    return { ok: true, deviceResponse: new Uint8Array(plaintext) }
  } catch {
    return fail('undecryptable')
  }
}

function readEncryptedResponse(data: unknown): { enc: Uint8Array; cipherText: Uint8Array } | undefined {
  const response = data && typeof data === 'object' && !Array.isArray(data) ? (data as { response?: unknown }).response : undefined
  if (typeof response !== 'string' || response.length > MAX_ANNEX_C_RESPONSE_LENGTH || !/^[A-Za-z0-9_-]+$/.test(response)) return undefined
  let decoded: unknown
  try {
    decoded = new (mdl().DataItem)({ buffer: Buffer.from(response, 'base64url') }).data
  } catch {
    return undefined
  }
  if (!Array.isArray(decoded) || decoded.length !== 2 || decoded[0] !== 'dcapi' || !(decoded[1] instanceof Map)) return undefined
  const enc: unknown = decoded[1].get('enc')
  const cipherText: unknown = decoded[1].get('cipherText')
  if (!(enc instanceof Uint8Array) || enc.length !== ENC_LENGTH || !(cipherText instanceof Uint8Array) || cipherText.length < TAG_LENGTH) return undefined
  return { enc, cipherText }
}

/**
 * Our own key pair, the private half not extractable. The public half is passed too: RFC 9180 §4.1 puts pkRm
 * in the KEM context, and given a private key alone that it cannot export, @hpke/core rebuilds the public
 * key from its x coordinate with a guessed y, wrong for half of all keys. A key that does not import is a
 * configuration error, and throws.
 */
async function importRecipientKey(jwk: JWK): Promise<CryptoKeyPair> {
  const { kty, crv, x, y, d } = jwk
  const algorithm = { name: 'ECDH', namedCurve: 'P-256' }
  return {
    privateKey: await crypto.subtle.importKey('jwk', { kty, crv, x, y, d }, algorithm, false, ['deriveBits']),
    publicKey: await crypto.subtle.importKey('jwk', { kty, crv, x, y }, algorithm, true, []),
  }
}
