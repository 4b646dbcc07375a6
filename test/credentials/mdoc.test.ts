import { beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { mdl } from '../../src/credentials/iso-mdoc/cbor-env.ts'
import { issueDevMdoc, presentDevMdoc } from '../../src/credentials/dev/mdoc.ts'
import { verifyMdocAgePresentation, type MdocPresentationCheck } from '../../src/credentials/iso-mdoc/verify.ts'
import { dcApiSessionTranscript, openId4VpSessionTranscript } from '../../src/credentials/openid4vp/session-transcript.ts'
import { AGE_DOC_TYPES, type AgeDocType } from '../../src/credentials/queries.ts'
import { parseTrustList, type TrustList } from '../../src/credentials/trust/trust-list.ts'
import { createMdocPki, generateP256KeyPair, type KeyPair, type MdocPki } from './pki.ts'
import { offlineRevocation } from './status-fixtures.ts'

/**
 * ISO 18013-5 mdoc age presentations over OpenID4VP, made here by a test issuer (an IACA root and its
 * document signer) and a test wallet with the same library: one age_over_NN disclosed, signed by the
 * device key over the SessionTranscript of our request. @auth0/mdl is taken from cbor-env.ts, as in src/.
 */
const NOW = 1_795_000_000
const DAY = 86_400
const at = (seconds: number) => new Date(seconds * 1000)
const REQUEST = { clientId: 'x509_hash:Uvo3HtuIxuhC92rShpgqcT3YXwrqRxWEviRiA0OZszk', nonce: 'n-0S6_WzA2Mj', responseUri: 'https://age.example/openid4vp/response' }
const TRANSCRIPT = openId4VpSessionTranscript(REQUEST)
const DOC_TYPES = Object.keys(AGE_DOC_TYPES) as AgeDocType[]

let pki: MdocPki
let holder: KeyPair
let trustList: TrustList

beforeAll(async () => {
  pki = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY) })
  holder = await generateP256KeyPair()
  trustList = parseTrustList(pki.rootPem)
})

/** Issues an age mdoc and presents it for `threshold`, as a wallet answering our request would. */
type IssueOptions = {
  docType?: AgeDocType
  ages?: Record<string, boolean>
  validFrom?: number
  validUntil?: number
  issuer?: MdocPki
  signerKey?: KeyPair['privateKey']
}

/** An mdoc issued to the test holder by the test PKI (or `issuer`). */
function issue(options: IssueOptions): Promise<Uint8Array> {
  const issuer = options.issuer ?? pki
  return issueDevMdoc({
    signerKey: options.signerKey ?? issuer.signer.privateKey,
    signerCertificate: issuer.signerPem,
    holderPublicKey: holder.publicKey,
    docType: options.docType ?? 'eu.europa.ec.av.1',
    ages: options.ages ?? { '16': true, '18': true, '21': false },
    validFrom: at(options.validFrom ?? NOW - DAY),
    validUntil: at(options.validUntil ?? NOW + 90 * DAY),
  })
}

async function present(options: IssueOptions & { threshold?: number; sessionTranscript?: Uint8Array }): Promise<Uint8Array> {
  const issued = await issue(options)
  return presentDevMdoc(issued, { holderPrivateKey: holder.privateKey, sessionTranscript: options.sessionTranscript ?? TRANSCRIPT, threshold: options.threshold ?? 18 })
}

const check = (overrides: Partial<MdocPresentationCheck> = {}): MdocPresentationCheck => ({
  trustList,
  sessionTranscript: TRANSCRIPT,
  docType: 'eu.europa.ec.av.1',
  threshold: 18,
  now: NOW,
  revocation: offlineRevocation(at(NOW)),
  ...overrides,
})

/** The element identifiers a DeviceResponse discloses, issuer-signed. */
function disclosed(response: Uint8Array): string[] {
  const document = mdl().parse(response).documents[0]!
  return Object.values(document.issuerSigned.nameSpaces).flatMap((items) => items.map((item) => item.elementIdentifier))
}

/** `bytes` with the first occurrence of `find` replaced by `replace` (same length). */
function replaceBytes(bytes: Uint8Array, find: Uint8Array, replace: Uint8Array): Uint8Array {
  const index = Buffer.from(bytes).indexOf(Buffer.from(find))
  expect(index).toBeGreaterThanOrEqual(0)
  const copy = Uint8Array.from(bytes)
  copy.set(replace, index)
  return copy
}

describe('verifyMdocAgePresentation', () => {
  for (const docType of DOC_TYPES) {
    test(`${docType}: age_over_18, issued by a trusted IACA and signed over our transcript, proves 18`, async () => {
      const response = await present({ docType })
      expect(await verifyMdocAgePresentation(response, check({ docType }))).toEqual({ valid: true, ageOver: 18 })
      // The wallet disclosed the one statement asked for: not 16, not 21.
      expect(disclosed(response)).toEqual(['age_over_18'])
    })
  }

  test('a true age_over_21 proves a threshold of 18; the proven age is the threshold asked', async () => {
    const response = await present({ ages: { '21': true } })
    expect(disclosed(response)).toEqual(['age_over_21'])
    expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: true, ageOver: 18 })
  })

  test('a false age_over_18 is under the threshold', async () => {
    const response = await present({ docType: 'org.iso.18013.5.1.mDL', ages: { '16': true, '18': false } })
    expect(disclosed(response)).toEqual(['age_over_18'])
    expect(await verifyMdocAgePresentation(response, check({ docType: 'org.iso.18013.5.1.mDL' }))).toEqual({ valid: false, failure: 'under_threshold' })
  })

  test('a document of another doc type than the query answered asks for is refused, each way round', async () => {
    // An mdoc answered under the mDL query carried either doc type before (issue 20, item 0).
    const attestation = await present({ docType: 'eu.europa.ec.av.1' })
    expect(await verifyMdocAgePresentation(attestation, check({ docType: 'org.iso.18013.5.1.mDL' }))).toEqual({ valid: false, failure: 'wrong_credential' })
    const licence = await present({ docType: 'org.iso.18013.5.1.mDL' })
    expect(await verifyMdocAgePresentation(licence, check({ docType: 'eu.europa.ec.av.1' }))).toEqual({ valid: false, failure: 'wrong_credential' })
    expect(await verifyMdocAgePresentation(licence, check({ docType: 'org.iso.18013.5.1.mDL' }))).toEqual({ valid: true, ageOver: 18 })
  })

  test('a true age_over_16 does not prove 18', async () => {
    const response = await present({ threshold: 16 })
    expect(disclosed(response)).toEqual(['age_over_16'])
    expect(await verifyMdocAgePresentation(response, check({ threshold: 18 }))).toEqual({ valid: false, failure: 'under_threshold' })
  })

  test('an mdoc without any age statement is a missing claim', async () => {
    const response = await present({ ages: {} })
    expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: false, failure: 'claim_missing' })
  })

  test('a byte flipped in the issuer signature is an invalid signature', async () => {
    const response = await present({})
    const signature = mdl().parse(response).documents[0]!.issuerSigned.issuerAuth.signature
    const flipped = Uint8Array.from(signature)
    flipped[10]! ^= 0x01
    expect(await verifyMdocAgePresentation(replaceBytes(response, signature, flipped), check())).toEqual({ valid: false, failure: 'invalid_signature' })
  })

  test('a disclosed value changed after issuance (false turned true) breaks its digest', async () => {
    const response = await present({ ages: { '18': false } })
    const elementValue = Buffer.concat([Buffer.from([0x6c]), Buffer.from('elementValue')])
    const tampered = replaceBytes(response, Buffer.concat([elementValue, Buffer.from([0xf4])]), Buffer.concat([elementValue, Buffer.from([0xf5])]))
    expect(mdl().parse(tampered).documents[0]!.issuerSigned.nameSpaces['eu.europa.ec.av.1']![0]!.elementValue).toBe(true)
    expect(await verifyMdocAgePresentation(tampered, check())).toEqual({ valid: false, failure: 'invalid_signature' })
  })

  test('a presentation made for another nonce or another client id is refused', async () => {
    const otherNonce = openId4VpSessionTranscript({ ...REQUEST, nonce: 'another-session' })
    const otherClient = openId4VpSessionTranscript({ ...REQUEST, clientId: 'x509_san_dns:rival.example' })
    const otherResponseUri = openId4VpSessionTranscript({ ...REQUEST, responseUri: 'https://rival.example/response' })
    for (const sessionTranscript of [otherNonce, otherClient, otherResponseUri]) {
      expect(await verifyMdocAgePresentation(await present({ sessionTranscript }), check())).toEqual({ valid: false, failure: 'key_binding' })
    }
  })

  test('an MSO past its validUntil, or before its validFrom, is expired', async () => {
    const late = await present({ validFrom: NOW - 20 * DAY, validUntil: NOW - 60 })
    expect(await verifyMdocAgePresentation(late, check())).toEqual({ valid: false, failure: 'expired' })
    const early = await present({ validFrom: NOW + 60, validUntil: NOW + 90 * DAY })
    expect(await verifyMdocAgePresentation(early, check())).toEqual({ valid: false, failure: 'expired' })
  })

  test('an expired document signer certificate is expired, however current the MSO', async () => {
    const expired = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW - DAY) })
    const response = await present({ issuer: expired, validFrom: NOW - 10 * DAY })
    expect(await verifyMdocAgePresentation(response, check({ trustList: parseTrustList(expired.rootPem) }))).toEqual({ valid: false, failure: 'expired' })
  })

  test('an issuer whose root is not in the trust list is untrusted', async () => {
    const rogue = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY), name: 'Rogue' })
    expect(await verifyMdocAgePresentation(await present({ issuer: rogue }), check())).toEqual({ valid: false, failure: 'untrusted_issuer' })
  })

  test('a document signer naming another country or state than its IACA is untrusted, however well signed (Annex B)', async () => {
    for (const names of [
      { rootName: 'C=UT', signerName: 'C=XX' },
      { rootName: 'C=US, ST=US-CA', signerName: 'C=US, ST=US-NY' },
      { rootName: 'C=US, ST=US-CA', signerName: 'C=US' },
    ]) {
      const crossing = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY), ...names })
      const response = await present({ issuer: crossing })
      expect(await verifyMdocAgePresentation(response, check({ trustList: parseTrustList(crossing.rootPem) }))).toEqual({ valid: false, failure: 'untrusted_issuer' })
    }
    const agreeing = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY), rootName: 'C=US, ST=US-CA', signerName: 'C=US, ST=US-CA, O=DMV' })
    expect(await verifyMdocAgePresentation(await present({ issuer: agreeing }), check({ trustList: parseTrustList(agreeing.rootPem) }))).toEqual({ valid: true, ageOver: 18 })
  })

  test("a trusted document signer certificate does not lend its trust to another key's signature", async () => {
    const other = await generateP256KeyPair()
    expect(await verifyMdocAgePresentation(await present({ signerKey: other.privateKey }), check())).toEqual({ valid: false, failure: 'invalid_signature' })
  })

  test('a response authenticated by deviceMac is refused: we never do the key agreement it needs', async () => {
    const issued = await issue({ ages: { '18': true }, validUntil: NOW + DAY })
    const reader = await generateP256KeyPair()
    const { publicKey: readerPublicKey } = reader
    const response = await mdl().DeviceResponse.from(issued)
      .usingPresentationDefinition({
        id: 'age',
        input_descriptors: [
          {
            id: 'eu.europa.ec.av.1',
            format: { mso_mdoc: { alg: ['ES256'] } },
            constraints: { limit_disclosure: 'required', fields: [{ path: ["$['eu.europa.ec.av.1']['age_over_18']"], intent_to_retain: false }] },
          },
        ],
      })
      .usingSessionTranscriptBytes(Buffer.from(mdl().DataItem.fromData(new (mdl().DataItem)({ buffer: TRANSCRIPT })).buffer))
      .authenticateWithMAC({ ...holder.privateKey, alg: 'ES256' }, coseKey(readerPublicKey), 'HS256')
      .sign()
    expect(await verifyMdocAgePresentation(response.encode(), check())).toEqual({ valid: false, failure: 'key_binding' })
  })

  test('garbage, an empty body or a bare issued mdoc (no device signature) is malformed, not an exception', async () => {
    const issued = await issue({ ages: { '18': true }, validUntil: NOW + DAY })
    const valid = await present({})
    for (const input of [new Uint8Array(), crypto.getRandomValues(new Uint8Array(300)), Buffer.from('not cbor at all'), Uint8Array.from([0xa0]), issued, valid.subarray(0, valid.length - 20)]) {
      expect(await verifyMdocAgePresentation(input, check())).toEqual({ valid: false, failure: 'malformed' })
    }
  })

  test('the Digital Credentials API transcript verifies when both sides use it, and not for another origin', async () => {
    const ours = dcApiSessionTranscript({ origin: 'https://age.example', nonce: REQUEST.nonce })
    const response = await present({ sessionTranscript: ours })
    expect(await verifyMdocAgePresentation(response, check({ sessionTranscript: ours }))).toEqual({ valid: true, ageOver: 18 })
    const theirs = dcApiSessionTranscript({ origin: 'https://rival.example', nonce: REQUEST.nonce })
    expect(await verifyMdocAgePresentation(await present({ sessionTranscript: theirs }), check({ sessionTranscript: ours }))).toEqual({ valid: false, failure: 'key_binding' })
    // Nor does a redirect transcript stand in for a DC API one.
    expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: false, failure: 'key_binding' })
  })

  test('a SessionTranscript the library would encode differently is a programming error, not a refusal', async () => {
    const indefinite = Uint8Array.from([0x9f, 0xf6, 0xf6, 0xf6, 0xff])
    await expect(verifyMdocAgePresentation(await present({}), check({ sessionTranscript: indefinite }))).rejects.toThrow('SessionTranscript')
  })
})

describe('cbor-env', () => {
  test('cbor-x, as @auth0/mdl loads it, runs without its native extractor, even when importers load the library first', () => {
    const cbor = createRequire(require.resolve('@auth0/mdl'))('cbor-x') as { isNativeAccelerationEnabled: boolean }
    expect(process.env.CBOR_NATIVE_ACCELERATION_DISABLED).toBe('true')
    expect(cbor.isNativeAccelerationEnabled).toBe(false)
  })
})

/** The public half of a JWK as a COSE_Key (the library's MAC builder takes that form). */
function coseKey(jwk: KeyPair['publicKey']): Uint8Array {
  const map = new Map<number, unknown>([
    [1, 2],
    [-1, 1],
    [-2, Buffer.from(jwk.x!, 'base64url')],
    [-3, Buffer.from(jwk.y!, 'base64url')],
  ])
  return mdl().DataItem.fromData(map).buffer
}

describe('SessionTranscripts (OpenID4VP 1.0 Appendix B.2.6)', () => {
  // The non-normative examples of Appendix B.2.6.1 and B.2.6.2: same nonce and JWK thumbprint in both.
  const nonce = 'exc7gBkxjx1rdc9udRrveKvSsJIq80avlXeLHhGwqtA'
  const jwkThumbprint = Buffer.from('4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047', 'hex')
  const decode = (bytes: Uint8Array) => new (mdl().DataItem)({ buffer: bytes }).data as unknown[]
  const sha256 = (bytes: Uint8Array) => new Uint8Array(createHash('sha256').update(bytes).digest())

  test('the redirect transcript is the specification example, byte for byte', () => {
    const transcript = openId4VpSessionTranscript({ clientId: 'x509_san_dns:example.com', nonce, jwkThumbprint, responseUri: 'https://example.com/response' })
    expect(Buffer.from(transcript).toString('hex')).toBe(
      '83f6f682714f70656e494434565048616e646f7665725820048bc053c00442af9b8eed494cefdd9d95240d254b046b11b68013722aad38ac',
    )
  })

  test('the DC API transcript is the specification example, byte for byte', () => {
    const transcript = dcApiSessionTranscript({ origin: 'https://example.com', nonce, jwkThumbprint })
    expect(Buffer.from(transcript).toString('hex')).toBe(
      '83f6f682764f70656e4944345650444341504948616e646f7665725820fbece366f4212f9762c74cfdbf83b8c69e371d5d68cea09cb4c48ca6daab761a',
    )
  })

  test('without an encrypted response, the thumbprint is null: [null, null, [name, sha256(cbor(info))]]', () => {
    const redirect = decode(openId4VpSessionTranscript(REQUEST))
    const redirectInfo = mdl().DataItem.fromData([REQUEST.clientId, REQUEST.nonce, null, REQUEST.responseUri]).buffer
    expect(redirect).toEqual([null, null, ['OpenID4VPHandover', sha256(redirectInfo)]])
    const dcApi = decode(dcApiSessionTranscript({ origin: 'https://age.example', nonce: REQUEST.nonce }))
    const dcApiInfo = mdl().DataItem.fromData(['https://age.example', REQUEST.nonce, null]).buffer
    expect(dcApi).toEqual([null, null, ['OpenID4VPDCAPIHandover', sha256(dcApiInfo)]])
    // The info's encoding, written out by hand: array(4), text(53), text(12), null, text(38).
    const text = (value: string) => Buffer.concat([Buffer.from(value.length < 24 ? [0x60 + value.length] : [0x78, value.length]), Buffer.from(value)])
    const byHand = Buffer.concat([Buffer.from([0x84]), text(REQUEST.clientId), text(REQUEST.nonce), Buffer.from([0xf6]), text(REQUEST.responseUri)])
    expect(Buffer.from(redirectInfo).equals(byHand)).toBe(true)
  })
})
