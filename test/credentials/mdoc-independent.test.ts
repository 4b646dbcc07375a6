import { beforeAll, describe, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { decode, encode, Tag } from 'cbor2'
import { verifyMdocAgePresentation, type MdocPresentationCheck } from '../../src/credentials/iso-mdoc/verify.ts'
import { dcApiSessionTranscript, openId4VpSessionTranscript } from '../../src/credentials/openid4vp/session-transcript.ts'
import { AGE_DOC_TYPES, type AgeDocType } from '../../src/credentials/queries.ts'
import { parseTrustList, type TrustList } from '../../src/credentials/trust/trust-list.ts'
import { issueMdoc, presentMdoc, type MdocIssue, type MdocPresentation } from '../wallets/mdoc.ts'
import { dcApiTranscript, openId4VpTranscript } from '../wallets/transcripts.ts'
import { createMdocPki, generateP256KeyPair, type KeyPair, type MdocPki } from './pki.ts'
import { offlineRevocation } from './status-fixtures.ts'

/**
 * Our mdoc verifier against an issuer and holder written apart from it (test/wallets/mdoc.ts: cbor2 and
 * WebCrypto, from ISO 18013-5 and RFC 9052), so that a misreading @auth0/mdl shares with its own dev wallet
 * cannot pass both sides. The holder signs over its own transcript; the verifier checks its own.
 */
const NOW = 1_795_000_000
const DAY = 86_400
const at = (seconds: number) => new Date(seconds * 1000)
const REQUEST = { clientId: 'x509_hash:Uvo3HtuIxuhC92rShpgqcT3YXwrqRxWEviRiA0OZszk', nonce: 'n-0S6_WzA2Mj', responseUri: 'https://age.example/openid4vp/response' }
const DOC_TYPES = Object.keys(AGE_DOC_TYPES) as AgeDocType[]

let pki: MdocPki
let holder: KeyPair
let trustList: TrustList

beforeAll(async () => {
  pki = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY) })
  holder = await generateP256KeyPair()
  trustList = parseTrustList(pki.rootPem)
})

function issue(options: Partial<MdocIssue> = {}): Promise<Uint8Array> {
  const docType = options.docType ?? 'eu.europa.ec.av.1'
  return issueMdoc({
    signerKey: pki.signer.privateKey,
    signerCertificate: pki.signerPem,
    holderPublicKey: holder.publicKey,
    docType,
    namespace: AGE_DOC_TYPES[docType as AgeDocType],
    ages: { '16': true, '18': true, '21': false },
    validFrom: at(NOW - DAY),
    validUntil: at(NOW + 90 * DAY),
    ...options,
  })
}

async function present(issueOptions: Partial<MdocIssue> = {}, options: Partial<MdocPresentation> = {}): Promise<Uint8Array> {
  return presentMdoc(await issue(issueOptions), { holderPrivateKey: holder.privateKey, sessionTranscript: openId4VpTranscript(REQUEST), threshold: 18, ...options })
}

const check = (overrides: Partial<MdocPresentationCheck> = {}): MdocPresentationCheck => ({
  trustList,
  sessionTranscript: openId4VpSessionTranscript(REQUEST),
  docType: 'eu.europa.ec.av.1',
  threshold: 18,
  now: NOW,
  revocation: offlineRevocation(at(NOW)),
  ...overrides,
})

/** The element identifiers a DeviceResponse discloses, read with cbor2. */
function disclosed(response: Uint8Array): string[] {
  const { documents } = decode(response) as { documents: { issuerSigned: { nameSpaces?: Record<string, Tag[]> } }[] }
  return Object.values(documents[0]!.issuerSigned.nameSpaces ?? {}).flatMap((items) =>
    items.map((item) => (decode(item.contents as Uint8Array) as { elementIdentifier: string }).elementIdentifier),
  )
}

describe('verifyMdocAgePresentation, given mdocs of an independent issuer and holder', () => {
  for (const docType of DOC_TYPES) {
    test(`${docType}: the nearest statement, age_over_18, proves 18`, async () => {
      const response = await present({ docType })
      expect(disclosed(response)).toEqual(['age_over_18'])
      expect(await verifyMdocAgePresentation(response, check({ docType }))).toEqual({ valid: true, ageOver: 18 })
    })
  }

  test('asked for 18 with only age_over_21: true held, the holder discloses 21, which proves 18 (§7.2.5)', async () => {
    const response = await present({ ages: { '16': true, '21': true } })
    expect(disclosed(response)).toEqual(['age_over_21'])
    expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: true, ageOver: 18 })
  })

  test('asked for 18 with age_over_18: false, the holder discloses it, and it is under the threshold', async () => {
    const response = await present({ docType: 'org.iso.18013.5.1.mDL', ages: { '16': true, '18': false, '21': false } })
    expect(disclosed(response)).toEqual(['age_over_18'])
    expect(await verifyMdocAgePresentation(response, check({ docType: 'org.iso.18013.5.1.mDL' }))).toEqual({ valid: false, failure: 'under_threshold' })
  })

  test('a true age_over_16, disclosed on purpose, does not prove 18', async () => {
    const response = await present({}, { disclose: ['age_over_16'] })
    expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: false, failure: 'under_threshold' })
  })

  // ISO 18013-5 §8.3.2.1.2.2: IssuerSigned = { ? "nameSpaces": IssuerNameSpaces, "issuerAuth": IssuerAuth }, and
  // IssuerNameSpaces holds one item or more: with nothing to disclose, a holder leaves nameSpaces out. @auth0/mdl's
  // parse reads nameSpaces unconditionally (Array.from(undefined.entries())), which once made this malformed.
  test('a response disclosing no element (IssuerSigned without nameSpaces) is a missing claim, not malformed', async () => {
    const response = await present({ ages: { '16': true } })
    expect(disclosed(response)).toEqual([])
    expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: false, failure: 'claim_missing' })
  })

  test('each digest algorithm of ISO 18013-5 (SHA-256, SHA-384, SHA-512) verifies', async () => {
    for (const digestAlgorithm of ['SHA-256', 'SHA-384', 'SHA-512'] as const) {
      expect(await verifyMdocAgePresentation(await present({ digestAlgorithm }), check())).toEqual({ valid: true, ageOver: 18 })
    }
  })

  test('an x5chain of several certificates (an array, RFC 9360), the root included, verifies', async () => {
    const chain = [pki.signerPem, pki.rootPem].map((pem) => new Uint8Array(new X509Certificate(pem).raw))
    expect(await verifyMdocAgePresentation(await present({ signerCertificate: chain }), check())).toEqual({ valid: true, ageOver: 18 })
  })

  test('the Digital Credentials API transcript verifies when both sides compute it, and not for a redirect request', async () => {
    const origin = 'https://age.example'
    const response = await present({}, { sessionTranscript: dcApiTranscript({ origin, nonce: REQUEST.nonce }) })
    expect(await verifyMdocAgePresentation(response, check({ sessionTranscript: dcApiSessionTranscript({ origin, nonce: REQUEST.nonce }) }))).toEqual({ valid: true, ageOver: 18 })
    expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: false, failure: 'key_binding' })
  })
})

describe('verifyMdocAgePresentation refuses what a dishonest holder or issuer makes', () => {
  test('DeviceAuthentication signed by a key other than the MSO device key is a key binding failure', async () => {
    const thief = await generateP256KeyPair()
    expect(await verifyMdocAgePresentation(await present({}, { deviceSigningKey: thief.privateKey }), check())).toEqual({ valid: false, failure: 'key_binding' })
  })

  test('a presentation signed over another nonce, client id or response URI is a key binding failure', async () => {
    for (const other of [{ nonce: 'another-session' }, { clientId: 'x509_san_dns:rival.example' }, { responseUri: 'https://rival.example/response' }]) {
      const response = await present({}, { sessionTranscript: openId4VpTranscript({ ...REQUEST, ...other }) })
      expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: false, failure: 'key_binding' })
    }
  })

  test('deviceMac instead of a signature is a key binding failure: OpenID4VP has no reader key to agree one with', async () => {
    const reader = await generateP256KeyPair()
    expect(await verifyMdocAgePresentation(await present({}, { deviceMacReaderKey: reader.publicKey }), check())).toEqual({ valid: false, failure: 'key_binding' })
  })

  test('a response disclosing no element is still refused when its device signature, transcript or MSO signature is wrong', async () => {
    const thief = await generateP256KeyPair()
    const forger = await generateP256KeyPair()
    const nothing = { ages: { '16': true } }
    expect(await verifyMdocAgePresentation(await present(nothing, { deviceSigningKey: thief.privateKey }), check())).toEqual({ valid: false, failure: 'key_binding' })
    const elsewhere = await present(nothing, { sessionTranscript: openId4VpTranscript({ ...REQUEST, nonce: 'another-session' }) })
    expect(await verifyMdocAgePresentation(elsewhere, check())).toEqual({ valid: false, failure: 'key_binding' })
    expect(await verifyMdocAgePresentation(await present({ ...nothing, signerKey: forger.privateKey }), check())).toEqual({ valid: false, failure: 'invalid_signature' })
  })

  test('a DeviceAuth with neither deviceSignature nor deviceMac is malformed (the CDDL requires one)', async () => {
    expect(await verifyMdocAgePresentation(await present({}, { omitDeviceAuth: true }), check())).toEqual({ valid: false, failure: 'malformed' })
  })

  test('a disclosed value changed after issuance (false turned true) no longer matches its digest', async () => {
    const response = await present({ ages: { '18': false } }, { alterValues: { age_over_18: true } })
    expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: false, failure: 'invalid_signature' })
  })

  test('a Document naming another doc type than its signed MSO is malformed', async () => {
    const licence = decode(await issue({ docType: 'org.iso.18013.5.1.mDL' }), { saveOriginal: true }) as { issuerSigned: unknown }
    const relabelled = encode({ docType: 'eu.europa.ec.av.1', issuerSigned: licence.issuerSigned })
    const response = await presentMdoc(relabelled, { holderPrivateKey: holder.privateKey, sessionTranscript: openId4VpTranscript(REQUEST), threshold: 18 })
    expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: false, failure: 'malformed' })
  })

  test("an MSO signed by a key other than the document signer certificate's is an invalid signature", async () => {
    const forger = await generateP256KeyPair()
    expect(await verifyMdocAgePresentation(await present({ signerKey: forger.privateKey }), check())).toEqual({ valid: false, failure: 'invalid_signature' })
  })

  test('an issuer whose root is not in the trust list is untrusted', async () => {
    const rogue = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY), name: 'Rogue' })
    const response = await present({ signerKey: rogue.signer.privateKey, signerCertificate: rogue.signerPem })
    expect(await verifyMdocAgePresentation(response, check())).toEqual({ valid: false, failure: 'untrusted_issuer' })
  })

  test('an MSO past its validUntil, or before its validFrom, is expired', async () => {
    expect(await verifyMdocAgePresentation(await present({ validFrom: at(NOW - 20 * DAY), validUntil: at(NOW - 60) }), check())).toEqual({ valid: false, failure: 'expired' })
    expect(await verifyMdocAgePresentation(await present({ validFrom: at(NOW + 60) }), check())).toEqual({ valid: false, failure: 'expired' })
  })

  test('a document of another doc type than the query asked for is the wrong credential', async () => {
    const response = await present({ docType: 'org.iso.18013.5.1.mDL' })
    expect(await verifyMdocAgePresentation(response, check({ docType: 'eu.europa.ec.av.1' }))).toEqual({ valid: false, failure: 'wrong_credential' })
  })
})

describe('SessionTranscripts written apart from the verifier (OpenID4VP 1.0 Appendix B.2.6)', () => {
  // The non-normative examples of Appendix B.2.6.1 and B.2.6.2 (the same bytes test/credentials/mdoc.test.ts holds).
  const nonce = 'exc7gBkxjx1rdc9udRrveKvSsJIq80avlXeLHhGwqtA'
  const jwkThumbprint = Buffer.from('4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047', 'hex')
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

  test('the redirect transcript is the specification example, byte for byte', () => {
    expect(hex(openId4VpTranscript({ clientId: 'x509_san_dns:example.com', nonce, jwkThumbprint, responseUri: 'https://example.com/response' }))).toBe(
      '83f6f682714f70656e494434565048616e646f7665725820048bc053c00442af9b8eed494cefdd9d95240d254b046b11b68013722aad38ac',
    )
  })

  test('the DC API transcript is the specification example, byte for byte', () => {
    expect(hex(dcApiTranscript({ origin: 'https://example.com', nonce, jwkThumbprint }))).toBe(
      '83f6f682764f70656e4944345650444341504948616e646f7665725820fbece366f4212f9762c74cfdbf83b8c69e371d5d68cea09cb4c48ca6daab761a',
    )
  })

  test("cbor2's transcripts are the verifier's (cbor-x) bytes, across string length boundaries and with or without a thumbprint", () => {
    for (const length of [0, 23, 24, 255, 256, 65_535, 65_536]) {
      const text = 'é'.repeat(Math.floor(length / 2)) + 'a'.repeat(length % 2)
      for (const thumbprint of [undefined, new Uint8Array(jwkThumbprint)]) {
        const redirect = { clientId: `x509_hash:${text}`, nonce: text, responseUri: `https://age.example/${text}`, jwkThumbprint: thumbprint }
        expect(hex(openId4VpTranscript(redirect))).toBe(hex(openId4VpSessionTranscript(redirect)))
        const dcApi = { origin: `https://${text}.example`, nonce: text, jwkThumbprint: thumbprint }
        expect(hex(dcApiTranscript(dcApi))).toBe(hex(dcApiSessionTranscript(dcApi)))
      }
    }
  })

  test('a thumbprint given as a Buffer is written as a byte string (cbor2 would write a Buffer as a map)', () => {
    const asBuffer = openId4VpTranscript({ ...REQUEST, jwkThumbprint })
    expect(hex(asBuffer)).toBe(hex(openId4VpTranscript({ ...REQUEST, jwkThumbprint: new Uint8Array(jwkThumbprint) })))
    expect(hex(asBuffer)).toBe(hex(openId4VpSessionTranscript({ ...REQUEST, jwkThumbprint })))
  })
})
