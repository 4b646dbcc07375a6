import { beforeAll, describe, expect, test } from 'bun:test'
import { encode } from 'cbor2'
import { verifyMdocAgePresentation, type MdocPresentationCheck } from '../../src/credentials/iso-mdoc/verify.ts'
import { openId4VpSessionTranscript } from '../../src/credentials/openid4vp/session-transcript.ts'
import { AGE_DOC_TYPES, type AgeDocType } from '../../src/credentials/queries.ts'
import { parseTrustList, type TrustList } from '../../src/credentials/trust/trust-list.ts'
import { answerWithoutDocuments, issueMdoc, presentMdoc, type MdocIssue, type MdocPresentation } from '../wallets/mdoc.ts'
import { openId4VpTranscript } from '../wallets/transcripts.ts'
import { createMdocPki, generateP256KeyPair, type KeyPair, type MdocPki } from './pki.ts'
import { offlineRevocation } from './status-fixtures.ts'

/**
 * DeviceResponses as wallets really send them (ISO/IEC 18013-5 §8.3.2.1.2.2), written by the independent holder
 * (test/wallets/mdoc.ts): a status of Table 8 other than 0, DocumentErrors (error code 0, "Data not returned"),
 * no documents, several documents, a document's own element errors. Each well-formed answer ends in a failure of
 * the closed list, never `malformed`.
 */
const NOW = 1_795_000_000
const DAY = 86_400
const at = (seconds: number) => new Date(seconds * 1000)
const REQUEST = { clientId: 'x509_hash:Uvo3HtuIxuhC92rShpgqcT3YXwrqRxWEviRiA0OZszk', nonce: 'n-0S6_WzA2Mj', responseUri: 'https://age.example/openid4vp/response' }
const AV = 'eu.europa.ec.av.1'
const MDL = 'org.iso.18013.5.1.mDL'
/** Table 8: 10 general error, 11 CBOR decoding error, 12 CBOR validation error. */
const WALLET_ERRORS = [10, 11, 12]
const DATA_NOT_RETURNED = 0

let pki: MdocPki
let holder: KeyPair
let trustList: TrustList

beforeAll(async () => {
  pki = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY) })
  holder = await generateP256KeyPair()
  trustList = parseTrustList(pki.rootPem)
})

function issue(docType: AgeDocType = AV, options: Partial<MdocIssue> = {}): Promise<Uint8Array> {
  const ages = { '16': true, '18': true, '21': false }
  const base = { signerKey: pki.signer.privateKey, signerCertificate: pki.signerPem, holderPublicKey: holder.publicKey, docType, namespace: AGE_DOC_TYPES[docType], ages }
  return issueMdoc({ ...base, validFrom: at(NOW - DAY), validUntil: at(NOW + 90 * DAY), ...options })
}

async function present(issued: Uint8Array, options: Partial<MdocPresentation> = {}): Promise<Uint8Array> {
  return presentMdoc(issued, { holderPrivateKey: holder.privateKey, sessionTranscript: openId4VpTranscript(REQUEST), threshold: 18, ...options })
}

const check = (overrides: Partial<MdocPresentationCheck> = {}): MdocPresentationCheck => ({
  trustList,
  sessionTranscript: openId4VpSessionTranscript(REQUEST),
  docType: AV,
  threshold: 18,
  now: NOW,
  revocation: offlineRevocation(at(NOW)),
  ...overrides,
})

const APPROVED = { valid: true, ageOver: 18 } as const
const DECLINED = { valid: false, failure: 'declined' } as const

describe('a wallet that returns no document', () => {
  test('a status of 10, 11 or 12 is the wallet declining with an error of its own, with DocumentErrors or without', async () => {
    for (const status of WALLET_ERRORS) {
      expect(await verifyMdocAgePresentation(answerWithoutDocuments({ status }), check())).toEqual(DECLINED)
      expect(await verifyMdocAgePresentation(answerWithoutDocuments({ status, documentErrors: { [AV]: DATA_NOT_RETURNED } }), check())).toEqual(DECLINED)
    }
  })

  test('a status other than 0 is read as no data returned, even beside a document', async () => {
    expect(await verifyMdocAgePresentation(await present(await issue(), { status: 10 }), check())).toEqual(DECLINED)
  })

  test('status 0 with a DocumentError for the doc type asked for, or with nothing at all, is declined', async () => {
    expect(await verifyMdocAgePresentation(answerWithoutDocuments({ status: 0, documentErrors: { [AV]: DATA_NOT_RETURNED } }), check())).toEqual(DECLINED)
    expect(await verifyMdocAgePresentation(answerWithoutDocuments({ status: 0 }), check())).toEqual(DECLINED)
    expect(await verifyMdocAgePresentation(encode({ version: '1.0', documents: [], status: 0 }), check())).toEqual(DECLINED)
  })

  test('another doc type returned in place of the one asked for is the wrong credential; with a DocumentError for ours, declined', async () => {
    const licence = await issue(MDL)
    expect(await verifyMdocAgePresentation(await present(licence), check())).toEqual({ valid: false, failure: 'wrong_credential' })
    expect(await verifyMdocAgePresentation(await present(licence, { documentErrors: { [AV]: DATA_NOT_RETURNED } }), check())).toEqual(DECLINED)
  })
})

describe('a wallet that returns more than was asked', () => {
  test('a document of another doc type beside the one asked for is left unread; the one asked for is verified', async () => {
    expect(await verifyMdocAgePresentation(await present(await issue(MDL), { extraDocuments: [await issue(AV)] }), check())).toEqual(APPROVED)
    expect(await verifyMdocAgePresentation(await present(await issue(AV), { extraDocuments: [await issue(MDL)] }), check())).toEqual(APPROVED)
  })

  test('of two documents that answer, the first is the answer: a second cannot make up for it', async () => {
    const under = await issue(AV, { ages: { '18': false } })
    expect(await verifyMdocAgePresentation(await present(await issue(AV), { extraDocuments: [under] }), check())).toEqual(APPROVED)
    expect(await verifyMdocAgePresentation(await present(under, { extraDocuments: [await issue(AV)] }), check())).toEqual({ valid: false, failure: 'under_threshold' })
  })

  test('Annex C offers either doc type: the first document of either is verified', async () => {
    const both = check({ docType: [AV, MDL] })
    expect(await verifyMdocAgePresentation(await present(await issue(MDL), { extraDocuments: [await issue(AV)] }), both)).toEqual(APPROVED)
  })

  test('a DocumentError for another doc type beside the document asked for changes nothing', async () => {
    expect(await verifyMdocAgePresentation(await present(await issue(), { documentErrors: { [MDL]: DATA_NOT_RETURNED } }), check())).toEqual(APPROVED)
  })
})

describe('element errors and responses that are not a DeviceResponse', () => {
  test("a document whose age statement is in its `errors` and not disclosed is a missing claim", async () => {
    const response = await present(await issue(), { disclose: [], elementErrors: { [AV]: { age_over_18: DATA_NOT_RETURNED } } })
    expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: false, failure: 'claim_missing' })
  })

  test('no status, a status that is no uint, no version, documents or DocumentErrors of the wrong shape: malformed', async () => {
    for (const response of [
      { version: '1.0' },
      { version: '1.0', status: -1 },
      { version: '1.0', status: '0' },
      { status: 0 },
      { version: '1.0', documents: {}, status: 0 },
      { version: '1.0', documents: [{ issuerSigned: {} }], status: 0 },
      { version: '1.0', documentErrors: [{ [AV]: 'not returned' }], status: 0 },
      { version: '1.0', documentErrors: [{}], status: 0 },
      [],
    ]) {
      expect(await verifyMdocAgePresentation(encode(response), check())).toEqual({ valid: false, failure: 'malformed' })
    }
  })
})
