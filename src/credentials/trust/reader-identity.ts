import { createHash, createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto'
import type { CredentialConfig } from '../../config.ts'
import { ConfigError } from '../../errors.ts'
import { x509HashClientId, type VerifierInfo } from '../../keys/verifier-key.ts'
import { checkCertificateCurrent, checkChainEndsAtRoot, checkChainOrder, describeName, readCertificates, readRoots, readSettingText, type Setting } from './certificate-chain.ts'
import { peculiarX509 } from './peculiar-x509.ts'
import { loadRegistrationCertificate, REGISTRATION_CERTIFICATE_FORMAT, type RegistrationCertificate } from './registration-certificate.ts'

/**
 * A certificate chain an operator obtained for this deployment (leaf first) and the private key of its
 * leaf. Wallets check the chain against their own trust store (Apple's, Google's, a national scheme's),
 * so everything a wallet would refuse is refused here, at start, instead of on a visitor's phone.
 */
export type CertifiedKey = {
  /** As read from the file, leaf first; each certificate issued by the next. */
  chain: X509Certificate[]
  /** The same chain as base64 DER: JOSE `x5c` as it is; COSE `x5chain` (RFC 9360) takes the decoded bytes. */
  x5c: string[]
  /** ES256 (ECDSA P-256 with SHA-256), WebCrypto, sign only: jose and `crypto.subtle.sign` both take it. */
  privateKey: CryptoKey
}

/** A request-signing identity, with the OpenID4VP 1.0 §5.9.3 client ids its leaf certificate supports. */
export type RequestSigningKey = CertifiedKey & {
  /** `x509_hash:` + base64url SHA-256 of the DER leaf: works with any certificate. */
  clientId: string
  /** `x509_san_dns:` + the leaf's first DNS subjectAltName, when it names one. */
  sanDnsClientId?: string
  /** Google Wallet's `gw_rp_metadata_bytes` (base64url) for this certificate: CREDENTIAL_VERIFIER_RP_METADATA. */
  rpMetadata?: string
  /** The relying party's registration certificate for this access certificate: CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE. */
  registration?: RegistrationCertificate
  /** OpenID4VP 1.0 §5.1 `verifier_info` of signed requests: the registration certificate, when there is one. */
  verifierInfo?: VerifierInfo[]
}

/** The operator's certificates for the digital ID method; each absent while its settings are unset. */
export type ReaderIdentity = {
  /** ISO/IEC 18013-5 §9.1.4 readerAuth of Annex C requests (Apple Wallet): CREDENTIAL_READER_*. */
  readerAuth?: CertifiedKey
  /** Signed OpenID4VP requests (Google Wallet, national schemes): CREDENTIAL_VERIFIER_*. */
  requestSigning?: RequestSigningKey
}

type IdentityFiles = Pick<CredentialConfig, 'readerKeyFile' | 'readerCertificateFile' | 'verifierKeyFile' | 'verifierCertificateFile'> &
  Partial<Pick<CredentialConfig, 'verifierRpMetadata' | 'verifierRegistrationCertificateFile' | 'verifierRootsFile'>>

/**
 * Google's Verifier Registrar extension: non-critical, an OCTET STRING holding the SHA-256 of the
 * RelyingPartyMetadataBytes (developers.google.com/wallet/identity/verify/verifier-registrar, "Certificate profile").
 */
const GOOGLE_RP_METADATA_EXTENSION = '1.3.6.1.4.1.11129.10.1'


/**
 * Reads and checks the operator's certificate files once, at start: a file that cannot be read, a key
 * that is not EC P-256 or not the leaf's, a chain out of order, or a certificate not valid at `now`
 * stops start-up with a {@link ConfigError} naming the setting. So does, for the request-signing
 * (access) certificate, a chain that does not end at a root of CREDENTIAL_VERIFIER_ROOTS_FILE, and a
 * registration certificate that is not well formed, signed, current and about the same relying party.
 */
export async function loadReaderIdentity(files: IdentityFiles, now: Date): Promise<ReaderIdentity> {
  const identity: ReaderIdentity = {}
  if (files.readerCertificateFile && files.readerKeyFile) {
    identity.readerAuth = await loadCertifiedKey(
      { variable: 'CREDENTIAL_READER_CERT_FILE', file: files.readerCertificateFile },
      { variable: 'CREDENTIAL_READER_KEY_FILE', file: files.readerKeyFile },
      now,
    )
  }
  if (files.verifierCertificateFile && files.verifierKeyFile) {
    const signing = await loadCertifiedKey(
      { variable: 'CREDENTIAL_VERIFIER_CERT_FILE', file: files.verifierCertificateFile },
      { variable: 'CREDENTIAL_VERIFIER_KEY_FILE', file: files.verifierKeyFile },
      now,
    )
    const dnsName = firstDnsName(signing.chain[0]!)
    identity.requestSigning = { ...signing, clientId: x509HashClientId(signing.x5c[0]!), ...(dnsName && { sanDnsClientId: `x509_san_dns:${dnsName}` }) }
    if (files.verifierRpMetadata) identity.requestSigning.rpMetadata = await checkRpMetadata(files.verifierRpMetadata, signing.chain[0]!)
    const rootsSetting = files.verifierRootsFile ? { variable: 'CREDENTIAL_VERIFIER_ROOTS_FILE', file: files.verifierRootsFile } : undefined
    const roots = rootsSetting && { setting: rootsSetting, certificates: readRoots(rootsSetting, now) }
    if (roots) checkChainEndsAtRoot(signing.chain, roots, { variable: 'CREDENTIAL_VERIFIER_CERT_FILE', file: files.verifierCertificateFile })
    if (files.verifierRegistrationCertificateFile) {
      const registration = await loadRegistrationCertificate(
        { variable: 'CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE', file: files.verifierRegistrationCertificateFile },
        { certificate: signing.chain[0]!, variable: 'CREDENTIAL_VERIFIER_CERT_FILE' },
        roots,
        now,
      )
      identity.requestSigning.registration = registration
      // No credential_ids: the registration is about every credential the request asks for (the EUDI wallet refuses it with them).
      identity.requestSigning.verifierInfo = [{ format: REGISTRATION_CERTIFICATE_FORMAT, data: registration.jwt }]
    }
  }
  return identity
}

/** One certificate chain (PEM, leaf first) and its leaf's private key (PEM, PKCS#8 or SEC 1), checked. */
export async function loadCertifiedKey(certificates: Setting, key: Setting, now: Date): Promise<CertifiedKey> {
  const chain = readCertificates(certificates)
  const privateKey = readPrivateKey(key)
  const publicKey = createPublicKey(privateKey)
  const leaf = chain[0]!
  // The key is EC P-256 (readPrivateKey), so a leaf it belongs to is too.
  if (!publicKey.equals(leaf.publicKey)) {
    const position = chain.findIndex((certificate) => publicKey.equals(certificate.publicKey))
    if (position > 0) throw new ConfigError(certificates.variable, `is not in order, leaf first: the key of ${key.variable} belongs to certificate ${position + 1} (${certificates.file})`)
    if (!isP256(leaf.publicKey)) throw new ConfigError(certificates.variable, `leaf certificate's key must be EC P-256 (ES256), got ${describeKey(leaf.publicKey)} (${certificates.file})`)
    throw new ConfigError(key.variable, `is not the private key of the leaf certificate in ${certificates.variable} (${describeName(leaf.subject)})`)
  }
  checkChainOrder(chain, certificates)
  for (const certificate of chain) checkCertificateCurrent(certificate, certificates, now)
  const der = privateKey.export({ format: 'der', type: 'pkcs8' })
  return {
    chain,
    x5c: chain.map((certificate) => Buffer.from(certificate.raw).toString('base64')),
    privateKey: await crypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']),
  }
}

/** What the log says at start about the identities from files: enough to check which certificate is in use. */
export function describeReaderIdentity(identity: ReaderIdentity): Record<string, unknown> {
  const about = (key: CertifiedKey) => ({ subject: describeName(key.chain[0]!.subject), issuer: describeName(key.chain[0]!.issuer), expires: new Date(key.chain[0]!.validTo).toISOString() })
  const signing = identity.requestSigning
  const registration = signing?.registration && {
    relying_party: signing.registration.relyingParty,
    ...(signing.registration.name !== undefined && { name: signing.registration.name }),
    signer: signing.registration.signer,
    issued: signing.registration.issuedAt.toISOString(),
    ...(signing.registration.expiresAt && { expires: signing.registration.expiresAt.toISOString() }),
  }
  return {
    ...(identity.readerAuth && { reader_auth: about(identity.readerAuth) }),
    ...(signing && { request_signing: { ...about(signing), client_id: signing.clientId, rp_metadata: signing.rpMetadata !== undefined, ...(registration && { registration }) } }),
  }
}

/**
 * The metadata Google gives with its certificate: base64url, and, when the leaf carries Google's
 * extension, the bytes whose SHA-256 it names (a mismatch shows the wallet another site's name, or nothing).
 */
async function checkRpMetadata(value: string, leaf: X509Certificate): Promise<string> {
  const variable = 'CREDENTIAL_VERIFIER_RP_METADATA'
  if (!/^[A-Za-z0-9_-]+$/.test(value)) throw new ConfigError(variable, 'must be the base64url string Google gave (gw_rp_metadata_bytes)')
  const { X509Certificate: Certificate } = await peculiarX509()
  const extension = new Certificate(leaf.raw).getExtension(GOOGLE_RP_METADATA_EXTENSION)
  if (extension) {
    const named = Buffer.from(extension.value)
    const digest = createHash('sha256').update(Buffer.from(value, 'base64url')).digest()
    // DER OCTET STRING of 32 bytes: 0x04 0x20 then the digest.
    if (!(named.length === 34 && named[0] === 0x04 && named[1] === 0x20 && named.subarray(2).equals(digest))) {
      throw new ConfigError(variable, `is not the metadata the certificate in CREDENTIAL_VERIFIER_CERT_FILE names (extension ${GOOGLE_RP_METADATA_EXTENSION})`)
    }
  }
  return value
}

function readPrivateKey(setting: Setting): KeyObject {
  const text = readSettingText(setting)
  let key: KeyObject
  try {
    key = createPrivateKey(text)
  } catch {
    throw new ConfigError(setting.variable, `is not an unencrypted PEM private key (${setting.file})`)
  }
  if (!isP256(key)) throw new ConfigError(setting.variable, `must be an EC P-256 key (ES256), got ${describeKey(key)} (${setting.file})`)
  return key
}

function isP256(key: KeyObject): boolean {
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1'
}

function describeKey(key: KeyObject): string {
  return [key.asymmetricKeyType, key.asymmetricKeyDetails?.namedCurve ?? key.asymmetricKeyDetails?.modulusLength].filter(Boolean).join(' ')
}

function firstDnsName(certificate: X509Certificate): string | undefined {
  return certificate.subjectAltName?.split(', ').find((name) => name.startsWith('DNS:'))?.slice(4)
}
