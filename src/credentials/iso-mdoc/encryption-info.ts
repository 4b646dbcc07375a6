import type { JWK } from 'jose'
import { encodeCbor } from './cbor-env.ts'

/**
 * ISO/IEC 18013-7 Annex C: `EncryptionInfo = ["dcapi", { "nonce": bstr, "recipientPublicKey": COSE_Key }]`,
 * sent to the browser base64url-encoded (no padding). The wallet seals its DeviceResponse to
 * `recipientPublicKey` (HPKE, see annex-c-response.ts) and the string as sent goes into the
 * SessionTranscript (session-transcript.ts), so this nonce and key bind the answer to one request.
 */

/** Apple: "an unpredictable random value ... generated once per request"; fewer bytes than this is a bug. */
const MIN_NONCE_BYTES = 16

export type EncryptionInfoParams = {
  /** The request's nonce: a string is taken as its UTF-8 bytes (our request nonces are random tokens). */
  nonce: string | Uint8Array
  /** Our HPKE recipient key, EC P-256; only `x` and `y` are read, so a private JWK leaks nothing here. */
  recipientPublicKey: JWK
}

/**
 * The base64url EncryptionInfo of one request. Deterministic: the same nonce and key give the same
 * string, so a route that kept only the nonce and key can rebuild what it sent.
 */
export function annexCEncryptionInfo(params: EncryptionInfoParams): string {
  const nonce = typeof params.nonce === 'string' ? new TextEncoder().encode(params.nonce) : params.nonce
  if (nonce.length < MIN_NONCE_BYTES) throw new TypeError(`an EncryptionInfo nonce needs at least ${MIN_NONCE_BYTES} bytes`)
  const info = ['dcapi', new Map<string, unknown>([['nonce', nonce], ['recipientPublicKey', coseKeyOf(params.recipientPublicKey)]])]
  return Buffer.from(encodeCbor(info)).toString('base64url')
}

/**
 * RFC 9053 §7.1.1 EC2 COSE_Key of a P-256 JWK: kty (1) = 2 (EC2), crv (-1) = 1 (P-256), x (-2), y (-3), in
 * that order (as Apple's and Multipaz's published EncryptionInfo have them).
 */
function coseKeyOf(jwk: JWK): Map<number, unknown> {
  const x = coordinate(jwk.x)
  const y = coordinate(jwk.y)
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !x || !y) throw new TypeError('the recipient key must be an EC P-256 JWK')
  return new Map<number, unknown>([
    [1, 2],
    [-1, 1],
    [-2, x],
    [-3, y],
  ])
}

function coordinate(value: string | undefined): Uint8Array | undefined {
  const bytes = value && /^[A-Za-z0-9_-]{43}$/.test(value) ? new Uint8Array(Buffer.from(value, 'base64url')) : undefined
  return bytes?.length === 32 ? bytes : undefined
}
