import { createHash } from 'node:crypto'
import { encodeCbor } from './cbor-env.ts'

/**
 * The SessionTranscript of an ISO/IEC 18013-7 Annex C request through the Digital Credentials API:
 * `[null, null, ["dcapi", sha256(cbor([Base64EncryptionInfo, SerializedOrigin]))]]` (DeviceEngagementBytes
 * and EReaderKeyBytes are null: there is no engagement and no reader key agreement). It is the HPKE `info`
 * of the answer, what the device signs (DeviceAuthentication) and what readerAuth signs, so the answer is
 * bound to this EncryptionInfo (our nonce and key) and to the origin the browser asserts.
 *
 * `encryptionInfo` is the base64url string exactly as sent in the request; `origin` the page's origin as the
 * browser serializes it (`https://age.example`, no path, no trailing slash). Encoded with cbor-env.ts, so
 * `verifyMdocAgePresentation` can hand the bytes to @auth0/mdl unchanged (see `sessionTranscriptBytes`).
 */
export function annexCSessionTranscript(request: { encryptionInfo: string; origin: string }): Uint8Array {
  const dcapiInfo = encodeCbor([request.encryptionInfo, request.origin])
  return encodeCbor([null, null, ['dcapi', new Uint8Array(createHash('sha256').update(dcapiInfo).digest())]])
}
