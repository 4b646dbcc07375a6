import type { DeviceSignedDocument } from '@auth0/mdl'
import type { X509Certificate } from 'node:crypto'
import type { AnswerResult, PresentationFailure, PresentationResult } from '../presentation.ts'
import { AGE_DOC_TYPES, type AgeDocType } from '../queries.ts'
import { documentSignerMatchesIaca } from '../trust/issuer-binding.ts'
import { readStatusClaim, type Revocation } from '../status/revocation.ts'
import { checkCertificateChain, type TrustList } from '../trust/trust-list.ts'
import { encodeCbor, mdl } from './cbor-env.ts'
import { readDeviceResponse } from './device-response.ts'

/**
 * What a presentation is checked against: our trust list, this request's transcript, the doc type of the
 * query it answers, the session's age.
 */
export type MdocPresentationCheck = {
  trustList: TrustList
  /** The CBOR-encoded SessionTranscript of this request (openid4vp/session-transcript.ts; Annex C: session-transcript.ts). */
  sessionTranscript: Uint8Array
  /**
   * The doc type the answered query asked for (OpenID4VP `doctype_value`), or the doc types an Annex C
   * DeviceRequest offered as alternatives; a document of any other type is refused.
   */
  docType: AgeDocType | readonly AgeDocType[]
  /** The age the session asks for. */
  threshold: number
  /** Seconds since the epoch. */
  now: number
  /** How the MSO's `status` reference and the document signer's CRLs are checked; required, so that no caller skips them. */
  revocation: Revocation
}

type Check = { status: string; category: string; id: string }

/**
 * The checks of @auth0/mdl's verifier that we do ourselves, or not at all: it compares the MSO validity
 * with the wall clock (we use `now`), and the chain is ours (`checkCertificateChain`, also at `now`).
 */
const CHECKS_DONE_HERE = new Set(['MSO_VALIDITY_AT_VERIFICATION_TIME', 'ISSUER_CERTIFICATE_VALIDITY'])

/** A failed check of the library, by id where its category says too little. */
function failureOf(check: Check): PresentationFailure {
  // ISO 18013-5 Annex B: the IACA names its country; a root without one is not an mdoc issuer's.
  if (check.id === 'ISSUER_SUBJECT_COUNTRY_NAME_PRESENCE') return 'untrusted_issuer'
  if (check.category === 'DEVICE_AUTH') return 'key_binding'
  if (check.category === 'DOCUMENT_FORMAT') return 'malformed'
  return 'invalid_signature'
}

const fail = (failure: PresentationFailure): PresentationResult => ({ valid: false, failure })

/**
 * Verifies an ISO 18013-5 DeviceResponse proving an age (OpenID4VP 1.0 Appendix B.2, or ISO/IEC 18013-7
 * Annex C once opened by `openAnnexCResponse`): the document of a doc type the check accepts (device-response.ts:
 * a wallet's error status, a DocumentError or no document is `declined`); its issuer's
 * signature (issuerAuth) by the document signer certificate in its x5chain, which must chain to a root of
 * the trust list; certificates and the MSO's validityInfo current at `now`; the
 * digests of the disclosed elements; the device's signature over our SessionTranscript; and the disclosed
 * `age_over_NN` statements. Only those are read; nothing of the credential is returned or kept. A bad
 * presentation is a failure, never an exception; only a SessionTranscript of ours that @auth0/mdl cannot
 * embed unchanged throws (see `sessionTranscriptBytes`).
 */
export async function verifyMdocAgePresentation(deviceResponse: Uint8Array, check: MdocPresentationCheck): Promise<AnswerResult> {
  const encodedSessionTranscript = sessionTranscriptBytes(check.sessionTranscript)
  const accepted: readonly string[] = typeof check.docType === 'string' ? [check.docType] : check.docType
  const answer = readDeviceResponse(deviceResponse, accepted)
  if (!answer.ok) return { valid: false, failure: answer.failure }
  const response = answer.deviceResponse
  const read = readDocument(response)
  if (!read) return fail('malformed')
  const { document, x5chain } = read
  // deviceMac needs an ECDH with a reader key we never send (OpenID4VP and Annex C have none); only a signature binds.
  if (!document.deviceSigned.deviceAuth.deviceSignature) return fail('key_binding')

  const now = new Date(check.now * 1000)
  const chain = checkCertificateChain(check.trustList, x5chain, now, { format: 'mdoc', docType: document.docType })
  if (!chain.trusted) return fail(chain.failure === 'expired' ? 'expired' : 'untrusted_issuer')
  if (!(await documentSignerMatchesIaca(chain.leaf, chain.anchor))) return fail('untrusted_issuer')

  const failed: Check[] = []
  try {
    await new (mdl().Verifier)([]).verify(response, {
      encodedSessionTranscript,
      disableCertificateChainValidation: true,
      onCheck: (item) => {
        if (item.status === 'FAILED' && !CHECKS_DONE_HERE.has(item.id)) failed.push(item)
      },
    })
  } catch {
    return fail('malformed')
  }
  if (failed.length > 0) return fail(failureOf(failed[0]!))

  // Read only now that the issuer's signature over the MSO is known to hold.
  const { validFrom, validUntil } = document.issuerSigned.issuerAuth.decodedPayload.validityInfo ?? {}
  if (!isDate(validFrom) || !isDate(validUntil)) return fail('malformed')
  if (now < validFrom || now > validUntil) return fail('expired')
  const proven = readAgeStatements(document, AGE_DOC_TYPES[document.docType as AgeDocType], check.threshold)
  if (!proven.valid) return proven
  // Network last, once everything local holds: only a trusted issuer's signed MSO and certificates name addresses.
  // `status` is not in @auth0/mdl's MSO type; the decoded MSO carries it as it came (a CBOR map).
  const mso = document.issuerSigned.issuerAuth.decodedPayload as { status?: unknown }
  return checkRevocation(mso.status, chain.path, check.revocation, proven)
}

/**
 * The MSO's `status` (draft-ietf-oauth-status-list §6.3.2; ISO 18013-5 second edition: a status_list to a
 * CWT Status List Token), and the CRLs of the document signer chain. Both must come out well: a revoked
 * signer revokes every mdoc it signed. See `readStatusClaim` for status claims we cannot read.
 */
async function checkRevocation(status: unknown, path: X509Certificate[], revocation: Revocation, proven: PresentationResult): Promise<PresentationResult> {
  const claim = readStatusClaim(status)
  if (claim.kind === 'malformed') return fail('malformed')
  if (claim.kind === 'unsupported') return fail('status_unavailable')
  const [verdict, certificates] = await Promise.all([claim.kind === 'status_list' ? revocation.status(claim.reference, 'cwt') : ('valid' as const), revocation.certificates(path)])
  if (verdict === 'invalid' || certificates === 'revoked') return fail('revoked')
  if (verdict === 'suspended') return fail('suspended')
  if (verdict === 'unavailable' || certificates === 'unavailable') return fail('status_unavailable')
  return proven
}

/** The one device-signed document `readDeviceResponse` left, with its issuer's certificates; else undefined. */
function readDocument(deviceResponse: Uint8Array): { document: DeviceSignedDocument; x5chain: Uint8Array[] } | undefined {
  try {
    const { documents } = mdl().parse(deviceResponse)
    const document = documents[0]
    if (documents.length !== 1 || !(document instanceof mdl().DeviceSignedDocument) || typeof document.docType !== 'string') return undefined
    const x5chain: unknown[] = document.issuerSigned.issuerAuth.x5chain ?? []
    if (!x5chain.every((cert) => cert instanceof Uint8Array)) return undefined
    return { document, x5chain: x5chain as Uint8Array[] }
  } catch {
    return undefined
  }
}

const isDate = (value: unknown): value is Date => value instanceof Date && !Number.isNaN(value.getTime())

const AGE_OVER = /^age_over_(\d{2})$/

/**
 * ISO 18013-5 §7.2.5: `age_over_NN: true` means at least NN years old, `false` means younger. A wallet
 * answers with the nearest statement it holds, so a true one for NN >= threshold proves the threshold; a
 * lower true one, or a false one, does not. Device-signed elements are the holder's word and never read.
 */
function readAgeStatements(document: DeviceSignedDocument, namespace: string, threshold: number): PresentationResult {
  const statements = (document.issuerSigned.nameSpaces[namespace] ?? []).flatMap((item) => {
    const age = AGE_OVER.exec(item.elementIdentifier)?.[1]
    return age !== undefined && typeof item.elementValue === 'boolean' ? [{ age: Number(age), over: item.elementValue }] : []
  })
  if (statements.length === 0) return fail('claim_missing')
  if (!statements.some(({ age, over }) => over && age >= threshold)) return fail('under_threshold')
  return { valid: true, ageOver: threshold }
}

/**
 * The SessionTranscript as @auth0/mdl takes it: wrapped as `#6.24(bstr)` (ISO 18013-5 SessionTranscriptBytes).
 * The library decodes it and encodes it again inside DeviceAuthentication, so a transcript is accepted only
 * if that yields the same bytes; otherwise the device would sign other bytes than ours. Our transcripts
 * always do: a failure here is a bug of the caller, and throws.
 */
export function sessionTranscriptBytes(transcript: Uint8Array): Uint8Array {
  const wrapped = new (mdl().DataItem)({ buffer: transcript })
  if (!Buffer.from(encodeCbor(wrapped.data)).equals(Buffer.from(transcript))) {
    throw new TypeError('a SessionTranscript must be CBOR in the encoding @auth0/mdl produces (shortest form, definite lengths)')
  }
  return encodeCbor(wrapped)
}
