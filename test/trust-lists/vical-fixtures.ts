import 'reflect-metadata'
import { X509Certificate } from 'node:crypto'
import * as x509 from '@peculiar/x509'
import { encode, Tag } from 'cbor2'

/**
 * Test VICALs (ISO/IEC 18013-5:2021 Annex C.1.7), made apart from the reader in src/credentials/trust/vical.ts:
 * cbor2 (not cbor-x) for CBOR, WebCrypto for the signature, @peculiar/x509 for certificates. The shapes are
 * those of AAMVA's published list: an untagged COSE_Sign1, ES256, x5chain in the unprotected header.
 */

/** id-mdl-kp-mdlVICAL, ISO/IEC 18013-5 Annex C.1.7.2: what AAMVA's and Austroads' signer certificates carry. */
export const VICAL_SIGNER_EKU = '1.0.18013.5.1.8'
export const MDL_DOCTYPE = 'org.iso.18013.5.1.mDL'

const COSE = { alg: 1, x5chain: 33, ES256: -7, ES384: -35 }
const CURVES = {
  'P-256': { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256', alg: COSE.ES256 },
  'P-384': { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384', alg: COSE.ES384 },
} as const

export type VicalSigner = {
  /** The VICAL provider's root, as an operator configures it. */
  root: X509Certificate
  rootPem: string
  /** x5chain, leaf first: the signer certificate, and the root too when asked for (AAMVA sends its whole chain). */
  chain: Uint8Array[]
  privateKey: CryptoKey
  /** The COSE algorithm of the signer's curve. */
  alg: number
  hash: 'SHA-256' | 'SHA-384'
}

/**
 * A VICAL provider's root (a CA, ten years from `from`) and a VICAL signer certificate it issued, valid from
 * `from` to `signerUntil` (a year by default), with the VICAL signer extended key usage unless `keyUsages` says
 * otherwise.
 */
export async function createVicalSigner(
  options: { from: Date; signerUntil?: Date; name?: string; curve?: keyof typeof CURVES; keyUsages?: string[]; includeRoot?: boolean },
): Promise<VicalSigner> {
  const curve = CURVES[options.curve ?? 'P-256']
  const name = options.name ?? 'Test VICAL provider'
  const rootKeys = await crypto.subtle.generateKey(curve, true, ['sign', 'verify'])
  const signerKeys = await crypto.subtle.generateKey(curve, true, ['sign', 'verify'])
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `C=US, O=${name}, CN=${name} Root CA`,
    notBefore: options.from,
    notAfter: new Date(options.from.getTime() + 3650 * 86_400_000),
    keys: rootKeys,
    signingAlgorithm: curve,
    extensions: [
      new x509.BasicConstraintsExtension(true, 1, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  })
  const signer = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: `C=US, O=${name}, CN=${name} VICAL Signer`,
    issuer: root.subject,
    notBefore: options.from,
    notAfter: options.signerUntil ?? new Date(options.from.getTime() + 365 * 86_400_000),
    publicKey: signerKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: curve,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      ...((options.keyUsages ?? [VICAL_SIGNER_EKU]).length > 0 ? [new x509.ExtendedKeyUsageExtension(options.keyUsages ?? [VICAL_SIGNER_EKU], true)] : []),
    ],
  })
  const signerDer = new Uint8Array(signer.rawData)
  return {
    root: new X509Certificate(root.toString('pem')),
    rootPem: root.toString('pem'),
    chain: options.includeRoot ? [signerDer, new Uint8Array(root.rawData)] : [signerDer],
    privateKey: signerKeys.privateKey,
    alg: curve.alg,
    hash: curve.hash,
  }
}

/** One CertificateInfo. `certificate` is DER; serialNumber and ski are taken from it, as Annex C.1.7.1 says. */
export type VicalFixtureEntry = {
  certificate: Uint8Array
  docTypes: string[]
  issuingCountry?: string
  issuingAuthority?: string
  stateOrProvinceName?: string
}

/** An entry for an IACA in PEM (test/credentials/pki.ts's `rootPem`), an mDL issuer of country UT by default. */
export function iacaEntry(pem: string, fields: Partial<VicalFixtureEntry> = {}): VicalFixtureEntry {
  return { certificate: new Uint8Array(new x509.X509Certificate(pem).rawData), docTypes: [MDL_DOCTYPE], issuingCountry: 'UT', ...fields }
}

export type VicalFields = { entries: VicalFixtureEntry[]; date: Date; nextUpdate?: Date; issueId?: number; provider?: string }

/** A signed VICAL, as bytes. */
export async function buildVical(options: { signer: VicalSigner } & VicalFields): Promise<Uint8Array> {
  return signCoseSign1({ signer: options.signer, payload: encodeVicalPayload(options) })
}

/** The VICAL structure of Annex C.1.7.1, CBOR-encoded: what the COSE_Sign1 carries as its payload. */
export function encodeVicalPayload(fields: VicalFields): Uint8Array {
  const vical = new Map<string, unknown>([
    ['version', '1.0'],
    ['vicalProvider', fields.provider ?? 'Test VICAL provider'],
    ['date', tdate(fields.date)],
  ])
  if (fields.issueId !== undefined) vical.set('vicalIssueID', fields.issueId)
  if (fields.nextUpdate) vical.set('nextUpdate', tdate(fields.nextUpdate))
  vical.set('certificateInfos', fields.entries.map(encodeCertificateInfo))
  return encode(vical)
}

export function encodeCertificateInfo(entry: VicalFixtureEntry): Map<string, unknown> {
  const info = new Map<string, unknown>([['certificate', entry.certificate]])
  try {
    const certificate = new x509.X509Certificate(new Uint8Array(entry.certificate))
    info.set('serialNumber', new Tag(2, Buffer.from(certificate.serialNumber, 'hex')))
    const ski = certificate.getExtension(x509.SubjectKeyIdentifierExtension)
    info.set('ski', ski ? Buffer.from(ski.keyId, 'hex') : new Uint8Array())
  } catch {
    // Not a certificate at all: a test of what the reader skips.
  }
  info.set('docType', entry.docTypes)
  for (const field of ['issuingAuthority', 'issuingCountry', 'stateOrProvinceName'] as const) if (entry[field] !== undefined) info.set(field, entry[field])
  return info
}

/**
 * COSE_Sign1 (RFC 9052 §4.2) over `payload` with the signer's key: protected header `{1: alg}` unless given,
 * x5chain (33) unprotected unless `unprotectedHeader` replaces it, tagged 18 when asked. A `null` payload is
 * detached: the signature still covers the VICAL's bytes, which travel apart.
 */
export async function signCoseSign1(options: {
  signer: VicalSigner
  payload: Uint8Array | null
  signedPayload?: Uint8Array
  protectedHeader?: Map<number, unknown>
  unprotectedHeader?: Map<number, unknown>
  tagged?: boolean
}): Promise<Uint8Array> {
  const { signer } = options
  const protectedBytes = encode(options.protectedHeader ?? new Map([[COSE.alg, signer.alg]]))
  const signedPayload = options.signedPayload ?? options.payload ?? new Uint8Array()
  const toBeSigned = encode(['Signature1', protectedBytes, new Uint8Array(), signedPayload])
  const signature = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: signer.hash }, signer.privateKey, new Uint8Array(toBeSigned)))
  const x5chain = signer.chain.length === 1 ? signer.chain[0]! : signer.chain
  const sign1 = [protectedBytes, options.unprotectedHeader ?? new Map([[COSE.x5chain, x5chain]]), options.payload, signature]
  return encode(options.tagged ? new Tag(18, sign1) : sign1)
}

/** tdate: RFC 3339 date-time, tag 0 (RFC 8949 §3.4.1), without fractions of a second as AAMVA writes it. */
function tdate(date: Date): Tag {
  return new Tag(0, date.toISOString().replace(/\.\d{3}Z$/, 'Z'))
}
