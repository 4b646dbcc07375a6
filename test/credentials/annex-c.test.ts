import 'reflect-metadata'
import { beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import * as x509 from '@peculiar/x509'
import { decode, encode, Tag } from 'cbor2'
import { issueDevMdoc, presentDevMdoc } from '../../src/credentials/dev/mdoc.ts'
import { ANNEX_C_PROTOCOL, annexCRequest, type AnnexCRequestParams } from '../../src/credentials/iso-mdoc/annex-c-request.ts'
import { MAX_ANNEX_C_RESPONSE_LENGTH, openAnnexCResponse } from '../../src/credentials/iso-mdoc/annex-c-response.ts'
import { annexCEncryptionInfo } from '../../src/credentials/iso-mdoc/encryption-info.ts'
import { annexCSessionTranscript } from '../../src/credentials/iso-mdoc/session-transcript.ts'
import { verifyMdocAgePresentation } from '../../src/credentials/iso-mdoc/verify.ts'
import { AGE_DOC_TYPES, type AgeDocType } from '../../src/credentials/queries.ts'
import { parseTrustList, type TrustList } from '../../src/credentials/trust/trust-list.ts'
import { ageMdocHolder, answerAnnexCRequest, sealAnnexCResponse, type AnnexCHolder, type WalletOptions } from '../wallets/annex-c-wallet.ts'
import { issueMdoc, presentMdoc } from '../wallets/mdoc.ts'
import { annexCTranscript } from '../wallets/transcripts.ts'
import { APPLE_SAMPLE, MULTIPAZ_CAPTURE } from './annex-c-vectors.ts'
import { createMdocPki, generateP256KeyPair, type KeyPair, type MdocPki } from './pki.ts'
import { offlineRevocation } from './status-fixtures.ts'

/**
 * ISO/IEC 18013-7 Annex C (`org-iso-mdoc`): our request, answered by the test wallet of test/wallets (cbor2,
 * panva's hpke, its own transcript and readerAuth check) with the independent mdoc holder of
 * test/wallets/mdoc.ts (and, for the round trips, also with the dev holder of src/credentials/dev/mdoc.ts),
 * opened and verified by the verifier.
 */
const NOW = 1_795_000_000
const DAY = 86_400
const at = (seconds: number) => new Date(seconds * 1000)
const ORIGIN = 'https://age.example'
const DOC_TYPES = Object.keys(AGE_DOC_TYPES) as AgeDocType[]

let pki: MdocPki
let trustList: TrustList
let holderKeys: KeyPair
let recipient: KeyPair
/** An mdoc of each age doc type, issued to the test holder by the independent issuer (test/wallets/mdoc.ts). */
const issued: Partial<Record<AgeDocType, Uint8Array>> = {}
/** The same, issued by the dev issuer (@auth0/mdl), for the dev holder. */
const issuedDev: Partial<Record<AgeDocType, Uint8Array>> = {}
/** A reader PKI: the wallet checks signatures and chains, no key usage, so an mdoc PKI's shape serves. */
let reader: MdocPki

beforeAll(async () => {
  pki = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY) })
  reader = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY), name: 'Reader' })
  trustList = parseTrustList(pki.rootPem)
  holderKeys = await generateP256KeyPair()
  recipient = await generateP256KeyPair()
  for (const docType of DOC_TYPES) {
    issued[docType] = await issue(docType, AGE_DOC_TYPES[docType])
    issuedDev[docType] = await issueDevMdoc({ ...issuance(), docType, ages: { '16': true, '18': true, '21': false } })
  }
})

const issuance = () => ({ signerKey: pki.signer.privateKey, signerCertificate: pki.signerPem, holderPublicKey: holderKeys.publicKey, validFrom: at(NOW - DAY), validUntil: at(NOW + 90 * DAY) })
/** An mdoc of any doc type from our trusted test issuer, by the independent issuer. */
const issue = (docType: string, namespace: string) => issueMdoc({ ...issuance(), docType, namespace, ages: { '16': true, '18': true, '21': false } })

/** The independent holder of the given doc types. */
const holderOf = (...docTypes: AgeDocType[]): AnnexCHolder => ageMdocHolder(Object.fromEntries(docTypes.map((docType) => [docType, issued[docType]!])), holderKeys.privateKey)
/** The dev holder (@auth0/mdl, the verifier's own library) of the given doc types. */
const devHolderOf = (...docTypes: AgeDocType[]): AnnexCHolder =>
  ageMdocHolder(Object.fromEntries(docTypes.map((docType) => [docType, issuedDev[docType]!])), holderKeys.privateKey, presentDevMdoc)

const der = (pem: string) => new Uint8Array(new x509.X509Certificate(pem).rawData)
const readerKey = () => ({ privateKey: reader.signer.privateKey, certificateChain: [der(reader.signerPem)] })

/** A request of ours, with a fresh nonce unless given. */
function request(overrides: Partial<AnnexCRequestParams> = {}) {
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url')
  return annexCRequest({ threshold: 18, nonce, recipientPublicKey: recipient.publicKey, origin: ORIGIN, ...overrides })
}

/** The wallet's answer `data`; fails the test if the wallet refused. */
async function answer(data: unknown, options: WalletOptions, origin = ORIGIN): Promise<{ response: string }> {
  const answered = await answerAnnexCRequest(data, origin, options)
  if (!answered.ok) throw new Error(`the wallet refused: ${answered.refusal}`)
  return answered.data
}

/** What the route does with an answer: open it with this request's key and transcript, then verify. */
async function openAndVerify(data: unknown, encryptionInfo: string, recipientPrivateKey = recipient.privateKey) {
  const sessionTranscript = annexCSessionTranscript({ encryptionInfo, origin: ORIGIN })
  const opened = await openAnnexCResponse(data, { recipientPrivateKey, sessionTranscript })
  if (!opened.ok) return opened
  return verifyMdocAgePresentation(opened.deviceResponse, { trustList, sessionTranscript, docType: DOC_TYPES, threshold: 18, now: NOW, revocation: offlineRevocation(new Date(NOW * 1000)) })
}

const sha256 = (bytes: Uint8Array) => new Uint8Array(createHash('sha256').update(bytes).digest())
const jwkOf = (coseKey: Map<number, Uint8Array>) => ({ kty: 'EC', crv: 'P-256', x: Buffer.from(coseKey.get(-2)!).toString('base64url'), y: Buffer.from(coseKey.get(-3)!).toString('base64url') })
/** cbor2 decodes a Buffer to Buffers, which it would encode as their JSON: read from a plain Uint8Array. */
const bytes = (b64url: string) => Uint8Array.from(Buffer.from(b64url, 'base64url'))
const cbor = (b64url: string) => decode(bytes(b64url), { preferMap: true }) as Map<string, unknown>

describe('EncryptionInfo and SessionTranscript (Annex C)', () => {
  test("rebuilds Apple's and Multipaz's published EncryptionInfo byte for byte from their nonce and key", () => {
    for (const published of [APPLE_SAMPLE.encryptionInfo, MULTIPAZ_CAPTURE.encryptionInfo]) {
      const [, parameters] = decode(bytes(published), { preferMap: true }) as [string, Map<string, unknown>]
      const nonce = parameters.get('nonce') as Uint8Array
      const recipientPublicKey = jwkOf(parameters.get('recipientPublicKey') as Map<number, Uint8Array>)
      expect(annexCEncryptionInfo({ nonce, recipientPublicKey })).toBe(published)
    }
  })

  test('our request nonce is sent as its UTF-8 bytes; a nonce under 16 bytes or a key off P-256 is a programming error', () => {
    const [type, parameters] = decode(bytes(annexCEncryptionInfo({ nonce: 'n-0S6_WzA2Mj-0S6_WzA2Mj', recipientPublicKey: recipient.publicKey })), { preferMap: true }) as [string, Map<string, unknown>]
    expect(type).toBe('dcapi')
    expect(Buffer.from(parameters.get('nonce') as Uint8Array).toString()).toBe('n-0S6_WzA2Mj-0S6_WzA2Mj')
    expect(() => annexCEncryptionInfo({ nonce: 'short', recipientPublicKey: recipient.publicKey })).toThrow(TypeError)
    expect(() => annexCEncryptionInfo({ nonce: 'n-0S6_WzA2Mj-0S6_WzA2Mj', recipientPublicKey: { kty: 'OKP', crv: 'Ed25519', x: 'AA' } })).toThrow(TypeError)
  })

  test('the transcript is [null, null, ["dcapi", sha256(cbor([encryptionInfo, origin]))]], written out by hand, and the wallet builds the same', async () => {
    const encryptionInfo = APPLE_SAMPLE.encryptionInfo
    // cbor([ei, origin]): array(2), text(ei) with a one-byte length, text(origin).
    const info = Buffer.concat([Buffer.from([0x82, 0x78, encryptionInfo.length]), Buffer.from(encryptionInfo), Buffer.from([0x60 + ORIGIN.length]), Buffer.from(ORIGIN)])
    const byHand = Buffer.concat([Buffer.from('83f6f68265646361706958' + '20', 'hex'), sha256(info)])
    expect(Buffer.from(annexCSessionTranscript({ encryptionInfo, origin: ORIGIN })).equals(byHand)).toBe(true)
    expect(Buffer.from(annexCTranscript({ encryptionInfo, origin: ORIGIN })).equals(byHand)).toBe(true)
  })
})

describe('annexCRequest', () => {
  test('asks each age doc type of queries.ts for age_over_NN only, intentToRetain false, as alternatives', async () => {
    const { protocol, data } = await request({ threshold: 21 })
    expect(protocol).toBe(ANNEX_C_PROTOCOL)
    expect(protocol).toBe('org-iso-mdoc')
    const deviceRequest = cbor(data.deviceRequest)
    expect(deviceRequest.get('version')).toBe('1.1')
    const items = (deviceRequest.get('docRequests') as Map<string, Tag>[]).map((docRequest) => decode(docRequest.get('itemsRequest')!.contents as Uint8Array))
    expect(items).toEqual(Object.entries(AGE_DOC_TYPES).map(([docType, namespace]) => ({ docType, nameSpaces: { [namespace]: { age_over_21: false } } })))
    const info = decode((deviceRequest.get('deviceRequestInfo') as Tag).contents as Uint8Array)
    expect(info).toEqual({ useCases: [{ mandatory: true, documentSets: [[0], [1]] }] })
    expect(deviceRequest.has('readerAuthAll')).toBe(false)
  })

  test("the mDL's ItemsRequestBytes for 18 are the ones Multipaz's verifier sends, byte for byte", async () => {
    const theirs = (cbor(MULTIPAZ_CAPTURE.deviceRequest).get('docRequests') as Map<string, Tag>[])[0]!.get('itemsRequest')!
    const ours = (cbor((await request()).data.deviceRequest).get('docRequests') as Map<string, Tag>[])[1]!.get('itemsRequest')!
    expect(Buffer.from(encode(ours)).equals(Buffer.from(encode(theirs)))).toBe(true)
  })

  test("a signed request has the shape of Apple's published sample: its keys, tagged parts, one readerAuthAll {1: -7} with x5chain", async () => {
    const ours = cbor((await request({ reader: readerKey() })).data.deviceRequest)
    const apple = cbor(APPLE_SAMPLE.deviceRequest)
    expect([...ours.keys()].sort()).toEqual([...apple.keys()].sort())
    for (const deviceRequest of [ours, apple]) {
      expect(deviceRequest.get('version')).toBe('1.1')
      expect((deviceRequest.get('deviceRequestInfo') as Tag).tag).toBe(24)
      const readerAuthAll = deviceRequest.get('readerAuthAll') as [Uint8Array, Map<number, unknown>, null, Uint8Array][]
      expect(readerAuthAll).toHaveLength(1)
      const [protectedHeader, unprotected, payload, signature] = readerAuthAll[0]!
      expect(decode(protectedHeader)).toEqual(new Map([[1, -7]]))
      expect(unprotected.get(33)).toBeInstanceOf(Uint8Array)
      expect([payload, signature.length]).toEqual([null, 64])
    }
  })
})

describe('readerAuth, as the wallet checks it', () => {
  for (const signs of ['readerAuthAll', 'readerAuth'] as const) {
    test(`${signs} verifies over the wallet's own transcript, and not for another origin`, async () => {
      const { data } = await request({ reader: { ...readerKey(), signs } })
      const wallet = { holder: holderOf('eu.europa.ec.av.1'), requireReaderAuth: true }
      expect(await answerAnnexCRequest(data, ORIGIN, wallet)).toMatchObject({ ok: true, readerAuth: 'verified' })
      expect(await answerAnnexCRequest(data, 'https://rival.example', wallet)).toEqual({ ok: false, refusal: 'reader_auth' })
    })
  }

  test('a flipped signature byte, or an ItemsRequest changed after signing, is refused', async () => {
    for (const signs of ['readerAuthAll', 'readerAuth'] as const) {
      const { data } = await request({ reader: { ...readerKey(), signs } })
      const deviceRequest = cbor(data.deviceRequest)
      const docRequests = deviceRequest.get('docRequests') as Map<string, unknown>[]
      const signature = ((signs === 'readerAuthAll' ? (deviceRequest.get('readerAuthAll') as unknown[][])[0] : docRequests[0]!.get('readerAuth')) as Uint8Array[])[3]!
      signature[5]! ^= 0x01
      const flipped = Buffer.from(encode(deviceRequest)).toString('base64url')
      signature[5]! ^= 0x01
      docRequests[0]!.set('itemsRequest', new Tag(24, encode({ docType: 'eu.europa.ec.av.1', nameSpaces: { 'eu.europa.ec.av.1': { age_over_18: true } } })))
      const changed = Buffer.from(encode(deviceRequest)).toString('base64url')
      for (const deviceRequest of [flipped, changed]) {
        expect(await answerAnnexCRequest({ ...data, deviceRequest }, ORIGIN, { holder: holderOf('eu.europa.ec.av.1') })).toEqual({ ok: false, refusal: 'reader_auth' })
      }
    }
  })

  test('the reader key may be a WebCrypto key, as the operator\'s is loaded (trust/reader-identity.ts)', async () => {
    const { kty, crv, x, y, d } = reader.signer.privateKey
    const privateKey = await crypto.subtle.importKey('jwk', { kty, crv, x, y, d }, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign'])
    const { data } = await request({ reader: { ...readerKey(), privateKey } })
    expect(await answerAnnexCRequest(data, ORIGIN, { holder: holderOf('eu.europa.ec.av.1'), roots: [der(reader.rootPem)] })).toMatchObject({ ok: true, readerAuth: 'verified' })
  })

  test('a wallet trusting other reader roots refuses our request; one trusting our reader root answers it', async () => {
    const { data } = await request({ reader: readerKey() })
    const holder = holderOf('org.iso.18013.5.1.mDL')
    expect(await answerAnnexCRequest(data, ORIGIN, { holder, roots: [der(pki.rootPem)] })).toEqual({ ok: false, refusal: 'reader_auth' })
    expect(await answerAnnexCRequest(data, ORIGIN, { holder, roots: [der(reader.rootPem)] })).toMatchObject({ ok: true, readerAuth: 'verified' })
  })

  test('an unsigned request is answered by a wallet that does not insist, refused by one that requires readerAuth', async () => {
    const { data } = await request()
    const holder = holderOf('eu.europa.ec.av.1')
    expect(await answerAnnexCRequest(data, ORIGIN, { holder })).toMatchObject({ ok: true, readerAuth: 'none' })
    expect(await answerAnnexCRequest(data, ORIGIN, { holder, requireReaderAuth: true })).toEqual({ ok: false, refusal: 'reader_auth' })
  })
})

describe('openAnnexCResponse and verifyMdocAgePresentation', () => {
  for (const docType of DOC_TYPES) {
    for (const [kind, holder] of [['independent', holderOf], ['dev', devHolderOf]] as const) {
      test(`a holder of only ${docType} (${kind} holder) answers our signed request; the answer opens and proves 18`, async () => {
        const { data } = await request({ reader: readerKey() })
        const answered = await answerAnnexCRequest(data, ORIGIN, { holder: holder(docType), requireReaderAuth: true })
        expect(answered).toMatchObject({ ok: true, docType })
        expect(await openAndVerify((answered as { data: unknown }).data, data.encryptionInfo)).toEqual({ valid: true, ageOver: 18 })
      })
    }
  }

  test('a holder of both answers with the first alternative; a DeviceResponse carrying both documents is verified by its first', async () => {
    const { data } = await request()
    expect(await answerAnnexCRequest(data, ORIGIN, { holder: holderOf('org.iso.18013.5.1.mDL', 'eu.europa.ec.av.1') })).toMatchObject({ ok: true, docType: 'eu.europa.ec.av.1' })
    const both: AnnexCHolder = {
      docTypes: ['eu.europa.ec.av.1'],
      present: (_, sessionTranscript) =>
        presentMdoc(issued['eu.europa.ec.av.1']!, { holderPrivateKey: holderKeys.privateKey, sessionTranscript, threshold: 18, extraDocuments: [issued['org.iso.18013.5.1.mDL']!] }),
    }
    // ISO 18013-5 §8.3.2.1.2.2 allows several documents; we take one answer, the first that answers (device-response.ts).
    expect(await openAndVerify(await answer(data, { holder: both }), data.encryptionInfo)).toEqual({ valid: true, ageOver: 18 })
  })

  test('a ciphertext with a flipped byte, or another enc, is undecryptable', async () => {
    const { data } = await request()
    const sealed = decode(bytes((await answer(data, { holder: holderOf('eu.europa.ec.av.1') })).response), { preferMap: true }) as [string, Map<string, Uint8Array>]
    const reseal = (key: string, value: Uint8Array) => ({ response: Buffer.from(encode([sealed[0], new Map([...sealed[1], [key, value]])])).toString('base64url') })
    const cipherText = Uint8Array.from(sealed[1].get('cipherText')!)
    cipherText[40]! ^= 0x01
    const otherEnc = new Uint8Array(await crypto.subtle.exportKey('raw', (await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits'])).publicKey))
    const offCurve = Uint8Array.from([0x04, ...new Uint8Array(64).fill(7)])
    for (const tampered of [reseal('cipherText', cipherText), reseal('enc', otherEnc), reseal('enc', offCurve)]) {
      expect(await openAndVerify(tampered, data.encryptionInfo)).toEqual({ ok: false, failure: 'undecryptable' })
    }
  })

  test('opens answers sealed to 32 fresh recipient keys: the key pair goes to HPKE, its public half is never guessed', async () => {
    // @hpke/core rebuilt the public key of a non-extractable private key with a guessed y: half of all keys failed.
    for (let index = 0; index < 32; index++) {
      const keys = await generateP256KeyPair()
      const encryptionInfo = annexCEncryptionInfo({ nonce: `nonce-of-request-${index}`, recipientPublicKey: keys.publicKey })
      const sealed = await sealAnnexCResponse(Uint8Array.of(0xa0), { encryptionInfo, origin: ORIGIN })
      const opened = await openAnnexCResponse(sealed, { recipientPrivateKey: keys.privateKey, sessionTranscript: annexCSessionTranscript({ encryptionInfo, origin: ORIGIN }) })
      expect(opened).toEqual({ ok: true, deviceResponse: Uint8Array.of(0xa0) })
    }
  })

  test("an answer sealed to another request's key is undecryptable", async () => {
    const other = await generateP256KeyPair()
    const { data } = await request({ recipientPublicKey: other.publicKey, nonce: 'the-same-nonce-in-both-requests' })
    const ours = await request({ nonce: 'the-same-nonce-in-both-requests' })
    const answered = await answer(data, { holder: holderOf('eu.europa.ec.av.1') })
    expect(await openAndVerify(answered, ours.data.encryptionInfo)).toEqual({ ok: false, failure: 'undecryptable' })
    // The same answer opens for the request it was made for, with that request's key.
    expect(await openAndVerify(answered, data.encryptionInfo, other.privateKey)).toEqual({ valid: true, ageOver: 18 })
  })

  test('an answer made for another origin, or for another EncryptionInfo of ours, is undecryptable', async () => {
    const { data } = await request()
    const elsewhere = await answer(data, { holder: holderOf('org.iso.18013.5.1.mDL') }, 'https://rival.example')
    expect(await openAndVerify(elsewhere, data.encryptionInfo)).toEqual({ ok: false, failure: 'undecryptable' })
    const earlier = await request()
    const forEarlier = await answer(earlier.data, { holder: holderOf('org.iso.18013.5.1.mDL') })
    expect(await openAndVerify(forEarlier, data.encryptionInfo)).toEqual({ ok: false, failure: 'undecryptable' })
  })

  test('a DeviceResponse replayed from another request, sealed anew to this one, opens but fails key binding', async () => {
    const first = await request()
    const opened = await openAnnexCResponse(await answer(first.data, { holder: holderOf('eu.europa.ec.av.1') }), {
      recipientPrivateKey: recipient.privateKey,
      sessionTranscript: annexCSessionTranscript({ encryptionInfo: first.data.encryptionInfo, origin: ORIGIN }),
    })
    if (!opened.ok) throw new Error(opened.failure)
    const second = await request()
    const replayed = await sealAnnexCResponse(opened.deviceResponse, { encryptionInfo: second.data.encryptionInfo, origin: ORIGIN })
    expect(await openAndVerify(replayed, second.data.encryptionInfo)).toEqual({ valid: false, failure: 'key_binding' })
  })

  test('an answer whose document is of a doc type we did not ask is the wrong credential', async () => {
    const { data } = await request()
    // A genuine ISO 23220 photo ID with an age statement, from our trusted issuer: not a doc type we asked for.
    const photoId = await issue('org.iso.23220.photoid.1', 'org.iso.23220.1')
    const lying: AnnexCHolder = { docTypes: ['org.iso.18013.5.1.mDL'], present: (_, sessionTranscript) => presentMdoc(photoId, { holderPrivateKey: holderKeys.privateKey, sessionTranscript, threshold: 18 }) }
    expect(await openAndVerify(await answer(data, { holder: lying }), data.encryptionInfo)).toEqual({ valid: false, failure: 'wrong_credential' })
  })

  test('wrong or unknown structure, a huge input and non-base64url are malformed, never an exception', async () => {
    const { data } = await request()
    const b64 = (value: unknown) => Buffer.from(encode(value)).toString('base64url')
    const enc = Uint8Array.from([0x04, ...new Uint8Array(64)])
    const deep = new Uint8Array(40_000).fill(0x81)
    deep[deep.length - 1] = 0
    const inputs: unknown[] = [
      undefined,
      null,
      'response',
      [],
      { response: 42 },
      { response: '' },
      { response: 'a+b/c=' },
      { response: 'not base64 at all!' },
      { response: 'A'.repeat(MAX_ANNEX_C_RESPONSE_LENGTH + 1) },
      { response: Buffer.from(deep).toString('base64url') },
      { response: b64(['dcapi', new Map([['enc', enc]])]) },
      { response: b64(['dcapi', new Map([['enc', enc.subarray(1)], ['cipherText', new Uint8Array(32)]])]) },
      { response: b64(['other', new Map([['enc', enc], ['cipherText', new Uint8Array(32)]])]) },
      { response: b64(['dcapi', { enc: 'text', cipherText: 'text' }]) },
      { response: b64(['dcapi', new Map([['enc', enc], ['cipherText', new Uint8Array(32)]]), 'extra']) },
      { response: Buffer.concat([Buffer.from(encode(['dcapi', new Map([['enc', enc], ['cipherText', new Uint8Array(32)]])])), Buffer.from([0])]).toString('base64url') },
    ]
    for (const input of inputs) expect(await openAndVerify(input, data.encryptionInfo)).toEqual({ ok: false, failure: 'malformed' })
  })
})
