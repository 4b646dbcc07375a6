import { createHash } from 'node:crypto'
import { encode } from 'cbor2'

/**
 * SessionTranscripts of OpenID4VP 1.0 Appendix B.2.6, for test wallets, written from the specification with
 * cbor2 (not the verifier's cbor-x): `[null, null, Handover]`, DeviceEngagementBytes and EReaderKeyBytes null
 * since OpenID4VP has neither, and a Handover of a name and the SHA-256 of the CBOR-encoded handover info.
 * `jwkThumbprint` is the RFC 7638 SHA-256 thumbprint (32 bytes) of the verifier's response encryption key
 * when the response is encrypted; the info holds null in its place otherwise.
 */

/**
 * Appendix B.2.6.1, a request by redirect or QR code: Handover = ["OpenID4VPHandover",
 * sha256(cbor([clientId, nonce, jwkThumbprint, responseUri]))].
 */
export function openId4VpTranscript(request: { clientId: string; nonce: string; responseUri: string; jwkThumbprint?: Uint8Array }): Uint8Array {
  const info = [request.clientId, request.nonce, thumbprint(request.jwkThumbprint), request.responseUri]
  return encode([null, null, ['OpenID4VPHandover', sha256(encode(info))]])
}

/**
 * Appendix B.2.6.2, a request through the Digital Credentials API: Handover = ["OpenID4VPDCAPIHandover",
 * sha256(cbor([origin, nonce, jwkThumbprint]))], the origin as the browser asserts it, without `origin:`.
 */
export function dcApiTranscript(request: { origin: string; nonce: string; jwkThumbprint?: Uint8Array }): Uint8Array {
  const info = [request.origin, request.nonce, thumbprint(request.jwkThumbprint)]
  return encode([null, null, ['OpenID4VPDCAPIHandover', sha256(encode(info))]])
}

/** A plain Uint8Array or null: cbor2 would write a Buffer through its toJSON, as a map, not as a byte string. */
function thumbprint(value: Uint8Array | undefined): Uint8Array | null {
  return value === undefined ? null : new Uint8Array(value)
}

function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(data).digest())
}

/**
 * ISO/IEC 18013-7 Annex C, a request of protocol `org-iso-mdoc`: `[null, null, ["dcapi",
 * sha256(cbor([Base64EncryptionInfo, SerializedOrigin]))]]`, the EncryptionInfo as the request carried it
 * (base64url text) and the origin as the browser asserts it.
 */
export function annexCTranscript(request: { encryptionInfo: string; origin: string }): Uint8Array {
  return encode([null, null, ['dcapi', sha256(encode([request.encryptionInfo, request.origin]))]])
}
