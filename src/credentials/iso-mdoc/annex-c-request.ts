import type { JWK } from 'jose'
import { ageDeviceRequest, type ReaderSigning } from './device-request.ts'
import { annexCEncryptionInfo } from './encryption-info.ts'
import { annexCSessionTranscript } from './session-transcript.ts'

/** The Digital Credentials API protocol identifier of ISO/IEC 18013-7 Annex C (W3C registry; Safari 26). */
export const ANNEX_C_PROTOCOL = 'org-iso-mdoc'

export type AnnexCRequestParams = {
  threshold: number
  /** This request's nonce (a random token of ours), sent as its UTF-8 bytes in EncryptionInfo. */
  nonce: string
  /** This request's HPKE recipient key (EC P-256, public part read); keep the private half to open the answer. */
  recipientPublicKey: JWK
  /** The page's origin; only readerAuth needs it here (it signs the SessionTranscript, which names it). */
  origin: string
  /** Sign the request as this reader (Apple Wallet answers signed requests only). */
  reader?: ReaderSigning
}

/** What the page passes to `navigator.credentials.get({ digital: { requests: [...] } })`. */
export type AnnexCRequest = { protocol: typeof ANNEX_C_PROTOCOL; data: { deviceRequest: string; encryptionInfo: string } }

/**
 * The `org-iso-mdoc` request of ISO/IEC 18013-7 Annex C for one age question: `deviceRequest` and
 * `encryptionInfo`, each base64url (no padding) CBOR. Keep `data.encryptionInfo` (or the nonce and key it
 * is rebuilt from) with the request: the answer is opened and verified against
 * `annexCSessionTranscript({ encryptionInfo, origin })`.
 */
export async function annexCRequest(params: AnnexCRequestParams): Promise<AnnexCRequest> {
  const encryptionInfo = annexCEncryptionInfo({ nonce: params.nonce, recipientPublicKey: params.recipientPublicKey })
  const sessionTranscript = annexCSessionTranscript({ encryptionInfo, origin: params.origin })
  const deviceRequest = await ageDeviceRequest({ threshold: params.threshold, sessionTranscript, reader: params.reader })
  return { protocol: ANNEX_C_PROTOCOL, data: { deviceRequest: Buffer.from(deviceRequest).toString('base64url'), encryptionInfo } }
}
