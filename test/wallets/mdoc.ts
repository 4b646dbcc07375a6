import { createHash, createHmac } from 'node:crypto'
import { decode, encode, getEncoded, Tag, type Writer } from 'cbor2'
import type { JWK } from 'jose'

/**
 * An mdoc issuer and holder for tests, written from ISO/IEC 18013-5:2021 and RFC 9052 with libraries the
 * verifier does not use (cbor2, WebCrypto, node:crypto), so that a misreading of the standard the verifier
 * and its library (@auth0/mdl, cbor-x) share does not pass on both sides. Structures as the standard's CDDL
 * names them; where a public implementation was read to confirm a detail, it is cited. The Annex D example
 * (test/credentials/mdoc-independent.test.ts) checks the bytes this module writes.
 */

/** The digest algorithms of ISO 18013-5 §9.1.2.5 (Table 21), as the MSO names them. */
export type MdocDigestAlgorithm = 'SHA-256' | 'SHA-384' | 'SHA-512'

/** What the issuer signs: its key and certificate, the device key it binds the mdoc to, and the age statements. */
export type MdocIssue = {
  /** The document signer's private key, EC P-256: issuerAuth is ES256. */
  signerKey: JWK
  /** The document signer's certificate, then any issuers, as PEM text or DER (leaf first): the x5chain. */
  signerCertificate: string | Uint8Array[]
  /** The device key (EC P-256) the MSO binds the mdoc to (deviceKeyInfo). */
  holderPublicKey: JWK
  docType: string
  /** The namespace of the age statements (`eu.europa.ec.av.1`, `org.iso.18013.5.1`). */
  namespace: string
  /** Age statements by NN, e.g. `{ '18': true, '21': false }`, issued as `age_over_NN` (§7.2.5). */
  ages: Record<string, boolean>
  validFrom: Date
  validUntil: Date
  /** When the MSO was signed (validityInfo.signed); `validFrom` if not given. */
  signed?: Date
  /** SHA-256 if not given. */
  digestAlgorithm?: MdocDigestAlgorithm
  /**
   * The MSO's `status` (draft-ietf-oauth-status-list §6.3.2, ISO 18013-5 second edition), written as given:
   * e.g. `{ status_list: { idx, uri } }`.
   */
  status?: Record<string, unknown>
}

/** How the holder answers one request, and the ways a test can make it answer wrongly. */
export type MdocPresentation = {
  /** The device private key, the pair of the issued `holderPublicKey`. */
  holderPrivateKey: JWK
  /** The verifier's SessionTranscript, CBOR (not wrapped in #6.24): embedded in DeviceAuthentication as it stands. */
  sessionTranscript: Uint8Array
  /** The age asked for: the nearest statement held is disclosed (ISO 18013-5 §7.2.5). */
  threshold: number
  /** The element identifiers to disclose instead of the nearest age statement, in the issuer's order. */
  disclose?: string[]
  /** Sign DeviceAuthentication with this key instead of the device key: a holder without the mdoc's key. */
  deviceSigningKey?: JWK
  /** Authenticate with deviceMac (§9.1.3.5) instead of a signature, keyed by ECDH with this reader key. */
  deviceMacReaderKey?: JWK
  /** Leave deviceAuth empty: no deviceSignature, no deviceMac. */
  omitDeviceAuth?: boolean
  /** New values for disclosed elements, written after the issuer signed them (their digests no longer match). */
  alterValues?: Record<string, unknown>
  /** Further issued mdocs to present in the same DeviceResponse, each answered the same way. */
  extraDocuments?: Uint8Array[]
  /** DocumentErrors beside the documents, by doc type (§8.3.2.1.2.2; error code 0: "Data not returned"). */
  documentErrors?: Record<string, number>
  /** The DeviceResponse's status (Table 8); 0 if not given. */
  status?: number
  /** Per-element errors in each Document (`errors`: { NameSpace => { DataElementIdentifier => ErrorCode } }). */
  elementErrors?: Record<string, Record<string, number>>
}

/** What a holder with no document to return sends: a status of Table 8 and, where it says so, DocumentErrors. */
export type MdocRefusal = { status: number; documentErrors?: Record<string, number> }

/**
 * Issues an mdoc: an IssuerSigned (§8.3.2.1.2.2) whose IssuerSignedItems are the `age_over_NN` statements,
 * each under a fresh 32-byte random, and whose issuerAuth is a COSE_Sign1 over the MobileSecurityObject
 * (§9.1.2.4). Returned as CBOR `{ "docType": tstr, "issuerSigned": IssuerSigned }`, a Document without
 * deviceSigned: what a wallet stores until it presents.
 */
export async function issueMdoc(issue: MdocIssue): Promise<Uint8Array> {
  const digestAlgorithm = issue.digestAlgorithm ?? 'SHA-256'
  const statements = Object.entries(issue.ages)
  const digestIds = shuffled(statements.map((_, index) => index))
  // IssuerSignedItemBytes = #6.24(bstr .cbor IssuerSignedItem); the key order is the CDDL's (and Annex D's).
  const items = statements.map(([age, over], index) =>
    encode(
      embedded(
        encode({ digestID: digestIds[index]!, random: crypto.getRandomValues(new Uint8Array(32)), elementIdentifier: ageOverElement(Number(age)), elementValue: over }),
      ),
    ),
  )
  // §9.1.2.5: the digest is over IssuerSignedItemBytes, tag 24 and all (checked against Annex D in the tests).
  const digests = new Map(items.map((item, index) => [digestIds[index]!, digest(digestAlgorithm, item)] as const).sort(([a], [b]) => a - b))
  const mso = {
    version: '1.0',
    digestAlgorithm,
    // ValueDigests = { + NameSpace => DigestIDs }, DigestIDs = { + DigestID => Digest }: no empty namespace.
    valueDigests: digests.size > 0 ? { [issue.namespace]: digests } : {},
    deviceKeyInfo: { deviceKey: coseKey(issue.holderPublicKey) },
    docType: issue.docType,
    validityInfo: { signed: tdate(issue.signed ?? issue.validFrom), validFrom: tdate(issue.validFrom), validUntil: tdate(issue.validUntil) },
    ...(issue.status && { status: issue.status }),
  }
  const x5chain = derChain(issue.signerCertificate)
  // RFC 9360 §2: x5chain is one bstr for a single certificate, an array for more. ISO 18013-5 §9.1.2.4
  // puts it in the unprotected header; the payload is MobileSecurityObjectBytes = #6.24(bstr .cbor MSO).
  const issuerAuth = await coseSign1(issue.signerKey, new Map([[X5CHAIN, x5chain.length === 1 ? x5chain[0]! : x5chain]]), encode(embedded(encode(mso))))
  const nameSpaces = items.length === 0 ? undefined : { [issue.namespace]: items.map((item) => new Encoded(item)) }
  return encode({ docType: issue.docType, issuerSigned: { ...(nameSpaces && { nameSpaces }), issuerAuth } })
}

/**
 * Presents issued mdocs as a DeviceResponse (§8.3.2.1.2.2): version "1.0", one Document per mdoc, status 0
 * (or `status`), and `documentErrors` where given.
 * Each discloses the nearest age statement (or `disclose`), the issuer's bytes as issued, and DeviceSigned
 * with empty DeviceNameSpaces and a deviceSignature: a COSE_Sign1 with detached payload over
 * DeviceAuthenticationBytes = #6.24(bstr .cbor ["DeviceAuthentication", SessionTranscript, DocType,
 * DeviceNameSpacesBytes]) (§9.1.3.4; as a-sit-plus/vck's DeviceAuthentication.kt also reads it).
 */
export async function presentMdoc(issued: Uint8Array, presentation: MdocPresentation): Promise<Uint8Array> {
  const documents = []
  for (const mdoc of [issued, ...(presentation.extraDocuments ?? [])]) documents.push(await presentDocument(mdoc, presentation))
  return encode({ version: '1.0', documents, ...documentErrorsOf(presentation.documentErrors), status: presentation.status ?? 0 })
}

/**
 * A DeviceResponse without documents (§8.3.2.1.2.2: `? "documents"`, left out when there is none to return): a
 * holder that reports an error (status 10, 11, 12) or declines to return what was asked (a DocumentError).
 */
export function answerWithoutDocuments(refusal: MdocRefusal): Uint8Array {
  return encode({ version: '1.0', ...documentErrorsOf(refusal.documentErrors), status: refusal.status })
}

/** DocumentErrors = [+DocumentError], DocumentError = { DocType => ErrorCode }: one map per doc type, as Multipaz writes them. */
function documentErrorsOf(errors: Record<string, number> | undefined) {
  const entries = Object.entries(errors ?? {})
  return entries.length === 0 ? {} : { documentErrors: entries.map(([docType, code]) => new Map([[docType, code]])) }
}

type IssuedDocument = { docType: string; issuerSigned: { nameSpaces?: Record<string, Tag[]>; issuerAuth: unknown[] } }
type IssuerSignedItem = { digestID: number; random: Uint8Array; elementIdentifier: string; elementValue: unknown }

async function presentDocument(issued: Uint8Array, presentation: MdocPresentation) {
  // saveOriginal keeps each item's bytes: what the issuer signed is written back as it was, never re-encoded.
  const { docType, issuerSigned } = decode(issued, { saveOriginal: true }) as IssuedDocument
  const nameSpaces: Record<string, Encoded[]> = {}
  for (const [namespace, tagged] of Object.entries(issuerSigned.nameSpaces ?? {})) {
    const items = tagged.map((tag) => ({ bytes: getEncoded(tag)!, item: decode(tag.contents as Uint8Array) as IssuerSignedItem }))
    const chosen = presentation.disclose ?? nearestAgeStatement(items.map(({ item }) => item), presentation.threshold)
    const disclosed = items.filter(({ item }) => chosen.includes(item.elementIdentifier)).map(({ bytes, item }) => alter(bytes, item, presentation.alterValues))
    if (disclosed.length > 0) nameSpaces[namespace] = disclosed
  }
  const deviceNameSpacesBytes = embedded(encode({}))
  const deviceAuthentication = ['DeviceAuthentication', new Encoded(presentation.sessionTranscript), docType, deviceNameSpacesBytes]
  const deviceAuthenticationBytes = encode(embedded(encode(deviceAuthentication)))
  return {
    docType,
    // §8.3.2.1.2.2: IssuerSigned = { ? "nameSpaces": IssuerNameSpaces, "issuerAuth": IssuerAuth }, and a namespace
    // holds one item or more (as Multipaz's MdocCredential.kt also quotes it): with nothing to disclose, no nameSpaces.
    issuerSigned: { ...(Object.keys(nameSpaces).length > 0 && { nameSpaces }), issuerAuth: new Encoded(getEncoded(issuerSigned.issuerAuth)!) },
    deviceSigned: { nameSpaces: deviceNameSpacesBytes, deviceAuth: await deviceAuth(deviceAuthenticationBytes, presentation) },
    ...(presentation.elementErrors && { errors: presentation.elementErrors }),
  }
}

async function deviceAuth(deviceAuthenticationBytes: Uint8Array, presentation: MdocPresentation) {
  if (presentation.omitDeviceAuth) return {}
  if (presentation.deviceMacReaderKey) {
    const key = await deviceMacKey(presentation.holderPrivateKey, presentation.deviceMacReaderKey, presentation.sessionTranscript)
    const protectedHeader = encode(new Map([[ALG, HMAC_256_256]]))
    // RFC 9052 §6.3: MAC_structure = ["MAC0", protected, external_aad, payload], the payload detached.
    const tag = createHmac('sha256', key).update(encode(['MAC0', protectedHeader, new Uint8Array(), deviceAuthenticationBytes])).digest()
    return { deviceMac: [protectedHeader, new Map(), null, new Uint8Array(tag)] }
  }
  return { deviceSignature: await coseSign1(presentation.deviceSigningKey ?? presentation.holderPrivateKey, new Map(), deviceAuthenticationBytes, { detached: true }) }
}

/**
 * ISO 18013-5 §7.2.5: asked for age_over_NN, a holder answers with the smallest NN' >= NN whose statement is
 * true; failing that, the largest NN' <= NN whose statement is false; failing that, nothing.
 */
function nearestAgeStatement(items: IssuerSignedItem[], threshold: number): string[] {
  const statements = items.flatMap(({ elementIdentifier, elementValue }) => {
    const age = /^age_over_(\d{2})$/.exec(elementIdentifier)?.[1]
    return age === undefined || typeof elementValue !== 'boolean' ? [] : [{ elementIdentifier, age: Number(age), over: elementValue }]
  })
  const over = statements.filter((s) => s.over && s.age >= threshold).sort((a, b) => a.age - b.age)[0]
  const under = statements.filter((s) => !s.over && s.age <= threshold).sort((a, b) => b.age - a.age)[0]
  const nearest = over ?? under
  return nearest ? [nearest.elementIdentifier] : []
}

function alter(bytes: Uint8Array, item: IssuerSignedItem, values: Record<string, unknown> | undefined): Encoded {
  if (!values || !Object.hasOwn(values, item.elementIdentifier)) return new Encoded(bytes)
  return new Encoded(encode(embedded(encode({ ...item, elementValue: values[item.elementIdentifier] }))))
}

/**
 * ISO 18013-5 §9.1.3.5: EMacKey = HKDF-SHA-256(ECDH(device key, reader key), salt = SHA-256(SessionTranscriptBytes),
 * info = "EMacKey", 32 bytes), SessionTranscriptBytes being the transcript wrapped in #6.24.
 */
async function deviceMacKey(devicePrivateKey: JWK, readerPublicKey: JWK, sessionTranscript: Uint8Array): Promise<Uint8Array> {
  const curve = { name: 'ECDH', namedCurve: 'P-256' }
  const own = await crypto.subtle.importKey('jwk', ecJwk(devicePrivateKey, true), curve, false, ['deriveBits'])
  const peer = await crypto.subtle.importKey('jwk', ecJwk(readerPublicKey, false), curve, false, [])
  const shared = await crypto.subtle.deriveBits({ name: 'ECDH', public: peer }, own, 256)
  const ikm = await crypto.subtle.importKey('raw', shared, 'HKDF', false, ['deriveBits'])
  const salt = createHash('sha256').update(encode(embedded(sessionTranscript))).digest()
  return new Uint8Array(await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt, info: new TextEncoder().encode('EMacKey') }, ikm, 256))
}

/** COSE labels and values (RFC 9052 §3.1, RFC 9053, RFC 9360). */
const ALG = 1
const ES256 = -7
const HMAC_256_256 = 5
const X5CHAIN = 33

/**
 * An untagged COSE_Sign1 (ISO 18013-5 uses it bare) with protected header { alg: ES256 }: the signature is
 * over Sig_structure = ["Signature1", protected, external_aad = h'', payload] (RFC 9052 §4.4), and is ECDSA's
 * r || s, 64 bytes (RFC 9053 §2.1), which is what WebCrypto's ECDSA returns.
 */
async function coseSign1(key: JWK, unprotected: Map<number, unknown>, payload: Uint8Array, options: { detached?: boolean } = {}): Promise<unknown[]> {
  const protectedHeader = encode(new Map([[ALG, ES256]]))
  const signingKey = await crypto.subtle.importKey('jwk', ecJwk(key, true), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign'])
  const toBeSigned = bytes(encode(['Signature1', protectedHeader, new Uint8Array(), payload]))
  const signature = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, signingKey, toBeSigned))
  return [protectedHeader, unprotected, options.detached ? null : payload, signature]
}

/** A COSE_Key of an EC2 P-256 public key (RFC 9053 §7.1): kty 2, crv 1, x, y. */
function coseKey(jwk: JWK): Map<number, unknown> {
  return new Map<number, unknown>([
    [1, 2],
    [-1, 1],
    [-2, bytes(Buffer.from(jwk.x!, 'base64url'))],
    [-3, bytes(Buffer.from(jwk.y!, 'base64url'))],
  ])
}

/** Only the members WebCrypto needs: a JWK's `key_ops` or `alg` for another use would make it refuse the import. */
function ecJwk(jwk: JWK, withPrivate: boolean): JsonWebKey {
  return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, ...(withPrivate && { d: jwk.d }) }
}

/** tdate = #6.0(tstr) (RFC 8949 §3.4.1), in whole seconds and UTC, as Annex D writes its validityInfo. */
function tdate(date: Date): Tag {
  return new Tag(0, date.toISOString().replace(/\.\d{3}Z$/, 'Z'))
}

/** #6.24(bstr): an encoded CBOR data item (RFC 8949 §3.4.5.1). */
function embedded(encoded: Uint8Array): Tag {
  return new Tag(24, encoded)
}

/** Bytes written into the output as they stand (cbor2 calls toCBOR and writes nothing more). */
class Encoded {
  constructor(readonly encoded: Uint8Array) {}
  toCBOR(writer: Writer): undefined {
    writer.write(this.encoded)
  }
}

function digest(algorithm: MdocDigestAlgorithm, data: Uint8Array): Uint8Array {
  return bytes(createHash(algorithm.replace('-', '').toLowerCase()).update(data).digest())
}

function derChain(certificates: string | Uint8Array[]): Uint8Array[] {
  if (typeof certificates !== 'string') return certificates.map(bytes)
  const blocks = certificates.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  if (blocks.length === 0) throw new TypeError('signerCertificate holds no PEM certificate')
  return blocks.map((block) => bytes(Buffer.from(block.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64')))
}

/** A plain Uint8Array: cbor2 writes a Buffer through its toJSON, as a map, not as a byte string. */
function bytes(data: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(data)
}

function shuffled(values: number[]): number[] {
  const random = crypto.getRandomValues(new Uint32Array(values.length))
  return values.map((value, index) => ({ value, key: random[index]! })).sort((a, b) => a.key - b.key).map(({ value }) => value)
}

/** ISO 18013-5 §7.2.5 names age statements with two digits: age_over_18, age_over_09. */
function ageOverElement(age: number): string {
  return `age_over_${String(age).padStart(2, '0')}`
}
