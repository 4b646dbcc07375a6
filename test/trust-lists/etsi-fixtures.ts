import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import { X509Certificate } from 'node:crypto'

/**
 * ETSI TS 119 612 trusted lists for tests, signed the way a scheme operator signs them (an enveloped
 * XAdES-BES signature: a Reference URI="" with the enveloped-signature and exclusive c14n transforms, and
 * one to the SignedProperties). Written by hand with WebCrypto and nothing of the verifier: every signed
 * part is written already in its exclusive canonical form (W3C xml-exc-c14n: no whitespace between
 * elements, start and end tags for empty elements, namespaces declared where first used, attributes in
 * order), so that its digest is the SHA-256 of the very text written.
 */

export const TSL_NS = 'http://uri.etsi.org/02231/v2#'
const DSIG = 'http://www.w3.org/2000/09/xmldsig#'
const XADES = 'http://uri.etsi.org/01903/v1.3.2#'
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#'
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'

export const SIGNATURE_METHODS = {
  ecdsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256',
  rsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  rsaPssSha256: 'http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1',
  rsaSha1: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
  hmacSha256: 'http://www.w3.org/2001/04/xmldsig-more#hmac-sha256',
} as const

export const DIGEST_METHODS = {
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  sha1: 'http://www.w3.org/2000/09/xmldsig#sha1',
} as const

/** A list signer: its certificate (what the operator configures) and its private key (PKCS#8). */
export type ListSigner = { certificate: X509Certificate; pkcs8: ArrayBuffer; key: 'EC' | 'RSA' }

/** A self-signed list signer certificate valid from `from` to `until`, P-256 unless RSA (2048 bits) is asked. */
export async function createListSigner(options: { from: Date; until: Date; name?: string; key?: 'EC' | 'RSA' }): Promise<ListSigner> {
  const key = options.key ?? 'EC'
  const algorithm =
    key === 'EC'
      ? { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
      : { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }
  const keys = (await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '0a',
    name: `C=EU, O=Test Scheme Operator, CN=${options.name ?? 'Test list signer'}`,
    notBefore: options.from,
    notAfter: options.until,
    keys,
    signingAlgorithm: algorithm,
    extensions: [new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.nonRepudiation, true)],
  })
  return {
    certificate: new X509Certificate(Buffer.from(certificate.rawData)),
    pkcs8: await crypto.subtle.exportKey('pkcs8', keys.privateKey),
    key,
  }
}

/** A provider's CA certificate (P-256, self-signed) of the kind a list names as a service's digital identity. */
export async function createProviderCertificate(name: string, from = new Date('2025-01-01T00:00:00Z')): Promise<X509Certificate> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
  const keys = (await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `C=UT, O=${name}, CN=${name} CA`,
    notBefore: from,
    notAfter: new Date(from.getTime() + 3650 * 86_400_000),
    keys,
    signingAlgorithm: algorithm,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  })
  return new X509Certificate(Buffer.from(certificate.rawData))
}

/** A service to list; a certificate given as `{ base64 }` is written as it stands (to write one that does not parse). */
export type ServiceEntry = { serviceType: string; status: string; name: string; certificates: Array<X509Certificate | { base64: string }> }

export type TrustedListOptions = {
  signer: ListSigner
  services: ServiceEntry[]
  /** null: a closed list (an empty NextUpdate). */
  nextUpdate: Date | null
  issuedAt?: Date
  sequenceNumber?: number
  territory?: string
  type?: string
  signatureMethod?: string
  digestMethod?: string
  /** '' (the default) signs the whole list; '#scheme' signs only SchemeInformation, which carries that Id. */
  referenceUri?: '' | '#scheme'
  /** An HMAC key, for a SignatureMethod of HMAC. */
  hmacKey?: Uint8Array
}

/** A signed trusted list (XML text) with these services, each under a provider of its own. */
export async function buildEtsiTrustedList(options: TrustedListOptions): Promise<string> {
  const whole = (options.referenceUri ?? '') === ''
  const schemeInformation = (apex: boolean) =>
    `<SchemeInformation${apex ? ` xmlns="${TSL_NS}"` : ''}${whole ? '' : ' Id="scheme"'}>` +
    `<TSLVersionIdentifier>6</TSLVersionIdentifier>` +
    `<TSLSequenceNumber>${options.sequenceNumber ?? 7}</TSLSequenceNumber>` +
    element('TSLType', options.type ?? 'http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric') +
    `<SchemeOperatorName><Name xml:lang="en">Test Supervisory Body</Name></SchemeOperatorName>` +
    element('SchemeTerritory', options.territory ?? 'EU') +
    element('ListIssueDateTime', xsdDateTime(options.issuedAt ?? new Date('2026-01-01T00:00:00Z'))) +
    (options.nextUpdate ? `<NextUpdate>${element('dateTime', xsdDateTime(options.nextUpdate))}</NextUpdate>` : '<NextUpdate></NextUpdate>') +
    `</SchemeInformation>`
  const providers = options.services.map(
    (service) =>
      `<TrustServiceProvider><TSPInformation><TSPName><Name xml:lang="en">${escapeText(service.name)} Ltd</Name></TSPName></TSPInformation>` +
      `<TSPServices><TSPService><ServiceInformation>` +
      element('ServiceTypeIdentifier', service.serviceType) +
      `<ServiceName><Name xml:lang="en">${escapeText(service.name)}</Name></ServiceName>` +
      `<ServiceDigitalIdentity>` +
      service.certificates
        .map((certificate) => `<DigitalId>${element('X509Certificate', 'base64' in certificate ? certificate.base64 : certificate.raw.toString('base64'))}</DigitalId>`)
        .join('') +
      `</ServiceDigitalIdentity>` +
      element('ServiceStatus', service.status) +
      element('StatusStartingTime', '2025-06-01T00:00:00Z') +
      `</ServiceInformation></TSPService></TSPServices></TrustServiceProvider>`,
  )
  const body = schemeInformation(false) + `<TrustServiceProviderList>${providers.join('')}</TrustServiceProviderList>`
  const rootStart = `<TrustServiceStatusList xmlns="${TSL_NS}" TSLTag="http://uri.etsi.org/19612/TSLTag">`
  // With URI="" the signature covers the root less the signature; with an Id it covers that element alone.
  const signedContent = whole ? `${rootStart}${body}</TrustServiceStatusList>` : schemeInformation(true)
  const signature = await signEnveloped(options, signedContent, whole)
  return `<?xml version="1.0" encoding="UTF-8"?>\n${rootStart}${body}${signature}</TrustServiceStatusList>`
}

async function signEnveloped(options: TrustedListOptions, signedContent: string, whole: boolean): Promise<string> {
  const digestMethod = options.digestMethod ?? DIGEST_METHODS.sha256
  const signatureMethod = options.signatureMethod ?? (options.signer.key === 'EC' ? SIGNATURE_METHODS.ecdsaSha256 : SIGNATURE_METHODS.rsaSha256)
  const digest = async (text: string) => base64(await crypto.subtle.digest(digestMethod === DIGEST_METHODS.sha1 ? 'SHA-1' : 'SHA-256', utf8(text)))
  const ds = `xmlns:ds="${DSIG}"`
  const certificateDigest = base64(await crypto.subtle.digest('SHA-256', new Uint8Array(options.signer.certificate.raw)))
  const signedProperties =
    `<xades:SignedProperties xmlns:xades="${XADES}" Id="xades-sig"><xades:SignedSignatureProperties>` +
    `<xades:SigningTime>2026-01-01T00:00:00Z</xades:SigningTime>` +
    `<xades:SigningCertificateV2><xades:Cert><xades:CertDigest>` +
    `<ds:DigestMethod ${ds} Algorithm="${DIGEST_METHODS.sha256}"></ds:DigestMethod><ds:DigestValue ${ds}>${certificateDigest}</ds:DigestValue>` +
    `</xades:CertDigest></xades:Cert></xades:SigningCertificateV2></xades:SignedSignatureProperties></xades:SignedProperties>`
  const transforms = whole
    ? `<ds:Transform Algorithm="${ENVELOPED}"></ds:Transform><ds:Transform Algorithm="${EXC_C14N}"></ds:Transform>`
    : `<ds:Transform Algorithm="${EXC_C14N}"></ds:Transform>`
  const signedInfo =
    `<ds:SignedInfo ${ds}><ds:CanonicalizationMethod Algorithm="${EXC_C14N}"></ds:CanonicalizationMethod>` +
    `<ds:SignatureMethod Algorithm="${signatureMethod}"></ds:SignatureMethod>` +
    `<ds:Reference Id="ref-list" URI="${options.referenceUri ?? ''}"><ds:Transforms>${transforms}</ds:Transforms>` +
    `<ds:DigestMethod Algorithm="${digestMethod}"></ds:DigestMethod><ds:DigestValue>${await digest(signedContent)}</ds:DigestValue></ds:Reference>` +
    `<ds:Reference Type="http://uri.etsi.org/01903#SignedProperties" URI="#xades-sig"><ds:Transforms><ds:Transform Algorithm="${EXC_C14N}"></ds:Transform></ds:Transforms>` +
    `<ds:DigestMethod Algorithm="${digestMethod}"></ds:DigestMethod><ds:DigestValue>${await digest(signedProperties)}</ds:DigestValue></ds:Reference>` +
    `</ds:SignedInfo>`
  const signatureValue = await sign(options, signatureMethod, utf8(signedInfo))
  return (
    `<ds:Signature ${ds} Id="sig">${signedInfo}<ds:SignatureValue>${signatureValue}</ds:SignatureValue>` +
    `<ds:KeyInfo><ds:X509Data><ds:X509Certificate>${options.signer.certificate.raw.toString('base64')}</ds:X509Certificate></ds:X509Data></ds:KeyInfo>` +
    `<ds:Object><xades:QualifyingProperties xmlns:xades="${XADES}" Target="#sig">${signedProperties}</xades:QualifyingProperties></ds:Object>` +
    `</ds:Signature>`
  )
}

async function sign(options: TrustedListOptions, method: string, data: Uint8Array<ArrayBuffer>): Promise<string> {
  if (method === SIGNATURE_METHODS.hmacSha256) {
    const key = await crypto.subtle.importKey('raw', new Uint8Array(options.hmacKey ?? new Uint8Array(32)), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
    return base64(await crypto.subtle.sign('HMAC', key, data))
  }
  if (method === SIGNATURE_METHODS.rsaPssSha256) {
    // RFC 6931 §2.3.10: MGF1 with the signature's hash, a salt as long as the hash, trailer 0xBC.
    const key = await crypto.subtle.importKey('pkcs8', options.signer.pkcs8, { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['sign'])
    return base64(await crypto.subtle.sign({ name: 'RSA-PSS', saltLength: 32 }, key, data))
  }
  const hash = method === SIGNATURE_METHODS.rsaSha1 ? 'SHA-1' : 'SHA-256'
  const algorithm = options.signer.key === 'EC' ? { name: 'ECDSA', namedCurve: 'P-256' } : { name: 'RSASSA-PKCS1-v1_5', hash }
  const key = await crypto.subtle.importKey('pkcs8', options.signer.pkcs8, algorithm, false, ['sign'])
  // XML Signature's ECDSA value is r || s, which is what WebCrypto returns (RFC 4050 §3.3).
  return base64(await crypto.subtle.sign(options.signer.key === 'EC' ? { name: 'ECDSA', hash } : 'RSASSA-PKCS1-v1_5', key, data))
}

function element(name: string, text: string): string {
  return `<${name}>${escapeText(text)}</${name}>`
}

/** Exclusive c14n's escaping of text: &, <, > and carriage return. */
function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;')
}

function xsdDateTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

const utf8 = (text: string) => new TextEncoder().encode(text)
const base64 = (bytes: ArrayBuffer) => Buffer.from(bytes).toString('base64')
