import 'reflect-metadata'
import * as x509 from '@peculiar/x509'

/**
 * A test member state's relying-party PKI (Implementing Regulation (EU) 2025/848): an access CA that issued
 * the relying party's access certificate (ETSI TS 119 411-8: the relying party's identifier in the subject's
 * organizationIdentifier, 2.5.4.97), and a registration certificate provider whose signer issues
 * registration certificates (ETSI TS 119 475 §5.2.2: a JWT typed `rc-wrp+jwt`, the signer's chain in
 * `x5c`). The JWTs are signed here with WebCrypto, not with jose, which the verifier checks them with.
 */

export const NOW = new Date('2026-11-22T12:00:00.000Z')
export const DAY = 86_400_000
export const RELYING_PARTY = 'VATUT-123456789'
const ES256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }

export type AccessChain = { leafPem: string; rootPem: string; keyPem: string }
export type Registrar = { rootPem: string; signerPem: string; signerKey: CryptoKey; x5c: string[] }

async function pkcs8Pem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await crypto.subtle.exportKey('pkcs8', key)).toString('base64')
  return `-----BEGIN PRIVATE KEY-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`
}

async function createRoot(name: string) {
  const keys = (await crypto.subtle.generateKey(ES256, true, ['sign', 'verify'])) as CryptoKeyPair
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name,
    notBefore: new Date(NOW.getTime() - 365 * DAY),
    notAfter: new Date(NOW.getTime() + 3650 * DAY),
    keys,
    signingAlgorithm: ES256,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  })
  return { keys, certificate }
}

async function issueLeaf(root: Awaited<ReturnType<typeof createRoot>>, subject: string, options: { from?: Date; until?: Date } = {}) {
  const keys = (await crypto.subtle.generateKey(ES256, true, ['sign', 'verify'])) as CryptoKeyPair
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject,
    issuer: root.certificate.subject,
    notBefore: options.from ?? new Date(NOW.getTime() - DAY),
    notAfter: options.until ?? new Date(NOW.getTime() + 365 * DAY),
    publicKey: keys.publicKey,
    signingKey: root.keys.privateKey,
    signingAlgorithm: ES256,
    extensions: [new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true)],
  })
  return { keys, certificate }
}

/**
 * An access CA and the access certificate it issued to the relying party: organizationIdentifier `identifier`
 * (none with `null`), or serialNumber `serialNumber` for a natural person; valid from `from` to `until`.
 */
export async function createAccessChain(options: { identifier?: string | null; serialNumber?: string; from?: Date; until?: Date } = {}): Promise<AccessChain> {
  const root = await createRoot('C=UT, O=Test Access CA, CN=Test WRPAC Root')
  const identifier = options.identifier === undefined ? RELYING_PARTY : options.identifier
  const names = [identifier === null ? undefined : `2.5.4.97=${identifier}`, options.serialNumber && `2.5.4.5=${options.serialNumber}`].filter(Boolean)
  const leaf = await issueLeaf(root, `C=UT, O=Test Shop, ${names.map((name) => `${name}, `).join('')}CN=age.example`, options)
  return { leafPem: leaf.certificate.toString('pem'), rootPem: root.certificate.toString('pem'), keyPem: await pkcs8Pem(leaf.keys.privateKey) }
}

/** A registration certificate provider: its root and the signer certificate it issued (valid until `signerUntil`). */
export async function createRegistrar(options: { signerFrom?: Date; signerUntil?: Date } = {}): Promise<Registrar> {
  const root = await createRoot('C=UT, O=Test Registrar, CN=Test WRPRC Root')
  const signer = await issueLeaf(root, 'C=UT, O=Test Registrar, CN=Test WRPRC Signer', { from: options.signerFrom, until: options.signerUntil })
  const der = (certificate: x509.X509Certificate) => Buffer.from(certificate.rawData).toString('base64')
  return { rootPem: root.certificate.toString('pem'), signerPem: signer.certificate.toString('pem'), signerKey: signer.keys.privateKey, x5c: [der(signer.certificate), der(root.certificate)] }
}

/** The payload of a registration certificate as ETSI TS 119 475 Table 7 and the EUDI library's sample shape it. */
export function registrationClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sub: RELYING_PARTY,
    name: 'Test Shop',
    country: 'UT',
    entitlements: ['https://uri.etsi.org/19475/Entitlement/Service_Provider'],
    policy_id: ['0.4.0.19475.3.1'],
    credentials: [{ format: 'mso_mdoc', meta: { doctype_value: 'eu.europa.ec.av.1' }, claim: [{ path: ['eu.europa.ec.av.1', 'age_over_18'] }] }],
    purpose: [{ lang: 'en', value: 'Age verification' }],
    iat: Math.floor((NOW.getTime() - 30 * DAY) / 1000),
    ...overrides,
  }
}

/** A compact JWS over `claims`, signed ES256 (R || S) with `key`; the header is `rc-wrp+jwt` with `x5c` unless `header` says otherwise. */
export async function signRegistrationCertificate(registrar: Registrar, claims: Record<string, unknown>, header: Record<string, unknown> = {}, key = registrar.signerKey): Promise<string> {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const input = `${part({ typ: 'rc-wrp+jwt', alg: 'ES256', x5c: registrar.x5c, ...header })}.${part(claims)}`
  const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key, new TextEncoder().encode(input))
  return `${input}.${Buffer.from(signature).toString('base64url')}`
}
