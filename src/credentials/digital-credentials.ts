import type { JWK } from 'jose'
import type { VerifierKey } from '../keys/verifier-key.ts'
import { ANNEX_C_PROTOCOL, annexCRequest } from './iso-mdoc/annex-c-request.ts'
import type { ReaderSigning } from './iso-mdoc/device-request.ts'
import { annexCEncryptionInfo } from './iso-mdoc/encryption-info.ts'
import { verifyAgeAnswer } from './openid4vp/answer.ts'
import { digitalCredentialsRequest, signedDcApiRequest } from './openid4vp/dc-api.ts'
import { decryptResponse, readResponseKeyId } from './openid4vp/encrypted-response.ts'
import { publicEncryptionKey, type ResponseEncryptionPublicKey } from './openid4vp/response-encryption-key.ts'
import type { AnswerResult } from './presentation.ts'
import { AGE_DOC_TYPES, type AgeDocType } from './queries.ts'
import type { Revocation } from './status/revocation.ts'
import type { TrustList } from './trust/trust-list.ts'

/**
 * The W3C Digital Credentials API, our side: the requests the page hands to
 * `navigator.credentials.get({ digital: { requests } })`, one per protocol, and the answer that comes back in
 * whichever of them the browser and the wallet chose. Safari speaks only `org-iso-mdoc` (ISO 18013-7 Annex
 * C); Google Wallet and HAIP wallets `openid4vp-v1-signed`; the unsigned request, last, is for the rest.
 */

/** The protocols we ask in, in order of preference; an answer in any other is refused. */
export const DC_API_PROTOCOLS = [ANNEX_C_PROTOCOL, 'openid4vp-v1-signed', 'openid4vp-v1-unsigned'] as const
export type DcApiProtocol = (typeof DC_API_PROTOCOLS)[number]

/** One request's public keys: `jwe` for OpenID4VP's encrypted answers, `hpke` for Annex C's. */
export type DcApiPublicKeys = { jwe: ResponseEncryptionPublicKey; hpke: JWK }

export type DcApiRequestParams = {
  verifier: VerifierKey
  nonce: string
  threshold: number
  /** The page's origin: the signed request's `expected_origins`, and what Annex C's reader signs. */
  origin: string
  keys: DcApiPublicKeys
  /** CREDENTIAL_PLAIN_ANSWERS: the OpenID4VP requests ask for `dc_api` instead of `dc_api.jwt`. */
  plainAnswers: boolean
  /** The operator's reader certificate and key, for Annex C readerAuth (Apple Wallet needs one). */
  reader?: ReaderSigning
  now: Date
}

/**
 * The requests, one per protocol, in our order of preference. A signed OpenID4VP request always answers
 * encrypted (HAIP 1.0 §5.2), plain answers or not; Annex C answers are always encrypted (HPKE).
 */
export async function digitalCredentialRequests(params: DcApiRequestParams) {
  const { verifier, nonce, threshold, origin, keys, now } = params
  return [
    await annexCRequest({ threshold, nonce, recipientPublicKey: keys.hpke, origin, reader: params.reader }),
    await signedDcApiRequest(verifier, { nonce, threshold, expectedOrigins: [origin], encryptionKey: keys.jwe, now }),
    digitalCredentialsRequest(nonce, threshold, params.plainAnswers ? undefined : keys.jwe),
  ]
}

export type DcApiAnswerCheck = {
  trustList: TrustList
  nonce: string
  threshold: number
  origin: string
  now: Date
  /** The private halves of this request's keys. */
  keys: { jwe: JWK; hpke: JWK }
  plainAnswers: boolean
  /** Status lists and CRLs, checked last (status/revocation.ts). */
  revocation: Revocation
}

/**
 * Verifies what the browser handed back, `{ protocol, data }`, by the protocol it names. An answer in a
 * protocol we did not ask in, or in the clear where we asked for it encrypted, is `wrong_protocol`; one
 * sealed to another key, or tampered with, `undecryptable`.
 */
export async function verifyDigitalCredentialAnswer(answer: unknown, check: DcApiAnswerCheck): Promise<AnswerResult> {
  const { protocol, data } = (answer && typeof answer === 'object' ? answer : {}) as { protocol?: unknown; data?: unknown }
  if (typeof protocol !== 'string' || !data || typeof data !== 'object') return { valid: false, failure: 'malformed' }
  if (protocol === ANNEX_C_PROTOCOL) return verifyAnnexCAnswer(data, check)
  if (protocol === 'openid4vp-v1-unsigned' && check.plainAnswers) {
    const plain = (data as { vp_token?: unknown }).vp_token
    if (plain === undefined) return { valid: false, failure: 'wrong_protocol' }
    return verifyAgeAnswer(plain, { ...common(check), binding: { responseMode: 'dc_api', origin: check.origin } })
  }
  if (protocol !== 'openid4vp-v1-signed' && protocol !== 'openid4vp-v1-unsigned') return { valid: false, failure: 'wrong_protocol' }
  const jwe = (data as { response?: unknown }).response
  if (jwe === undefined) return { valid: false, failure: 'wrong_protocol' }
  // §8.3: the JWE names the key it was sealed to; another request's key is not this request's answer.
  if (readResponseKeyId(jwe) !== check.keys.jwe.kid) return { valid: false, failure: 'undecryptable' }
  const opened = await decryptResponse(jwe, check.keys.jwe)
  if (!opened.ok) return { valid: false, failure: opened.failure }
  if (opened.response.error !== undefined) return { valid: false, failure: 'declined' }
  return verifyAgeAnswer(opened.response.vp_token, { ...common(check), binding: { responseMode: 'dc_api.jwt', origin: check.origin, encryptionKey: publicEncryptionKey(check.keys.jwe) } })
}

/** ISO 18013-7 Annex C: open the HPKE answer with this request's key and transcript, then verify the DeviceResponse in it. */
async function verifyAnnexCAnswer(data: object, check: DcApiAnswerCheck): Promise<AnswerResult> {
  const [{ openAnnexCResponse }, { annexCSessionTranscript }, { verifyMdocAgePresentation }] = await Promise.all([
    import('./iso-mdoc/annex-c-response.ts'),
    import('./iso-mdoc/session-transcript.ts'),
    import('./iso-mdoc/verify.ts'),
  ])
  // What we sent is rebuilt from the nonce and key it was made of (annexCEncryptionInfo is deterministic).
  const encryptionInfo = annexCEncryptionInfo({ nonce: check.nonce, recipientPublicKey: check.keys.hpke })
  const sessionTranscript = annexCSessionTranscript({ encryptionInfo, origin: check.origin })
  const opened = await openAnnexCResponse(data, { recipientPrivateKey: check.keys.hpke, sessionTranscript })
  if (!opened.ok) return { valid: false, failure: opened.failure }
  const docTypes = Object.keys(AGE_DOC_TYPES) as AgeDocType[]
  return verifyMdocAgePresentation(opened.deviceResponse, {
    trustList: check.trustList,
    sessionTranscript,
    docType: docTypes,
    threshold: check.threshold,
    now: Math.floor(check.now.getTime() / 1000),
    revocation: check.revocation,
  })
}

const common = (check: DcApiAnswerCheck) => ({ trustList: check.trustList, nonce: check.nonce, threshold: check.threshold, now: check.now, revocation: check.revocation })
