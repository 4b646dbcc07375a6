/**
 * The wallet's side of an encrypted answer (OpenID4VP 1.0 §8.3), written against WebCrypto and the RFCs,
 * not jose (which the verifier decrypts with): a compact JWE, `alg` ECDH-ES in direct key agreement
 * (RFC 7518 §4.6), the content key from the Concat KDF (§4.6.2, NIST SP 800-56A §5.8.1), AES-GCM
 * (§5.3). Two implementations that agree on the bytes are the test that either is right.
 */

export type RecipientKey = { kty?: string; crv?: string; x?: string; y?: string; kid?: string; use?: string; alg?: string }
export type ContentEncryption = 'A128GCM' | 'A256GCM'

const b64u = (bytes: Uint8Array | ArrayBuffer) => Buffer.from(bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes).toString('base64url')
const ascii = (text: string) => new TextEncoder().encode(text)

function uint32be(value: number): Uint8Array {
  const bytes = new Uint8Array(4)
  new DataView(bytes.buffer).setUint32(0, value)
  return bytes
}

const concat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((part) => [...part]))

/** RFC 7518 §4.6.2: a field of OtherInfo, its length in four bytes, then its bytes. */
const field = (bytes: Uint8Array) => concat(uint32be(bytes.length), bytes)

/**
 * RFC 7518 §4.6.2: the Concat KDF with SHA-256, one round (a key of at most 256 bits). In direct key
 * agreement the AlgorithmID is the `enc` value; PartyUInfo and PartyVInfo are the decoded `apu` and `apv`
 * header parameters, empty (a zero length) when the header has none.
 */
async function concatKdf(sharedSecret: Uint8Array, enc: ContentEncryption, party: { apu?: Uint8Array; apv?: Uint8Array } = {}): Promise<Uint8Array<ArrayBuffer>> {
  const keyBits = enc === 'A128GCM' ? 128 : 256
  const otherInfo = concat(field(ascii(enc)), field(party.apu ?? new Uint8Array()), field(party.apv ?? new Uint8Array()), uint32be(keyBits))
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', concat(uint32be(1), sharedSecret, otherInfo)))
  return digest.slice(0, keyBits / 8)
}

/**
 * Encrypts `payload` (the authorization response's parameters, §8.3) to the verifier's P-256 key. The
 * header names the key's `kid` (§8.3: the JWE MUST carry it); `apu` and `apv` (base64url, RFC 7518 §4.6.1)
 * go into the header and the key derivation, as wallets built on @openid4vc/openid4vp send them; `header`
 * adds or replaces protected header members, so that tests can send what a broken or hostile wallet would.
 * A string payload is encrypted as it stands, any other value as its JSON.
 */
export async function encryptResponse(
  payload: unknown,
  recipient: RecipientKey,
  options: { enc?: ContentEncryption; apu?: string; apv?: string; header?: Record<string, unknown> } = {},
): Promise<string> {
  const enc = options.enc ?? 'A256GCM'
  const curve = { name: 'ECDH', namedCurve: 'P-256' }
  const theirs = await crypto.subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: recipient.x, y: recipient.y }, curve, false, [])
  const ephemeral = (await crypto.subtle.generateKey(curve, true, ['deriveBits'])) as CryptoKeyPair
  const { x, y } = await crypto.subtle.exportKey('jwk', ephemeral.publicKey)
  const sharedSecret = new Uint8Array(await crypto.subtle.deriveBits({ name: 'ECDH', public: theirs }, ephemeral.privateKey, 256))
  const party = { apu: options.apu === undefined ? undefined : Buffer.from(options.apu, 'base64url'), apv: options.apv === undefined ? undefined : Buffer.from(options.apv, 'base64url') }
  const contentKey = await crypto.subtle.importKey('raw', await concatKdf(sharedSecret, enc, party), 'AES-GCM', false, ['encrypt'])

  const header = {
    alg: 'ECDH-ES',
    enc,
    ...(recipient.kid === undefined ? {} : { kid: recipient.kid }),
    epk: { kty: 'EC', crv: 'P-256', x, y },
    ...(options.apu === undefined ? {} : { apu: options.apu }),
    ...(options.apv === undefined ? {} : { apv: options.apv }),
    ...options.header,
  }
  const protectedHeader = b64u(ascii(JSON.stringify(header)))
  const iv = crypto.getRandomValues(new Uint8Array(12))
  // RFC 7516 §5.1: the additional authenticated data is the ASCII of the encoded protected header.
  const plaintext = ascii(typeof payload === 'string' ? payload : JSON.stringify(payload))
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: ascii(protectedHeader), tagLength: 128 }, contentKey, plaintext))
  // Direct key agreement: the JWE Encrypted Key is empty (RFC 7518 §4.6).
  return [protectedHeader, '', b64u(iv), b64u(sealed.subarray(0, -16)), b64u(sealed.subarray(-16))].join('.')
}

/**
 * The RFC 7638 SHA-256 thumbprint of an EC public key: the hash of its required members, `crv`, `kty`,
 * `x`, `y`, in that (lexicographic) order, without whitespace.
 */
export async function thumbprint(key: RecipientKey): Promise<Uint8Array> {
  const canonical = `{"crv":${JSON.stringify(key.crv)},"kty":${JSON.stringify(key.kty)},"x":${JSON.stringify(key.x)},"y":${JSON.stringify(key.y)}}`
  return new Uint8Array(await crypto.subtle.digest('SHA-256', ascii(canonical)))
}
