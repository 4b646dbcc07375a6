import { X509Certificate } from 'node:crypto'
import { digest, ES256, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import type { JWK } from 'jose'
import { issueDevMdoc } from './mdoc.ts'
import { peculiarX509 } from '../trust/peculiar-x509.ts'
import { DEV_ISSUER_ORGANIZATION } from '../trust/trust-list.ts'

/**
 * A test issuer (`ofage dev issuer`): a root certificate, a document signer it certified, and the
 * signer's private key, all in one file. It issues age credentials in both formats a real wallet holds,
 * so integrators and tests run the whole flow without a phone. Its root names itself as a dev issuer, and
 * a production deployment refuses a trust list that contains it (src/config.ts).
 */
export type DevIssuer = { rootCertificate: string; signerCertificate: string; signerKey: JWK }

/** A holder's credential as the test wallet keeps it. */
export type DevCredential =
  | { format: 'dc+sd-jwt'; credential: string }
  | { format: 'mso_mdoc'; docType: 'eu.europa.ec.av.1' | 'org.iso.18013.5.1.mDL'; credential: string }

export type DevCredentialFormat = 'sd-jwt' | 'av' | 'mdl'

/**
 * Where a credential's revocation status is kept: entry `idx` of the Token Status List at `uri`
 * (draft-ietf-oauth-status-list §6.2). The list must be signed by a key the verifier trusts for this issuer,
 * e.g. the dev issuer's signer with its certificate in `x5c`.
 */
export type DevStatusReference = { idx: number; uri: string }

/** The age statements issued for a holder of `age`: the usual thresholds, true or false (ISO 18013-5 §7.2.5). */
export const DEV_AGE_THRESHOLDS = [12, 13, 14, 16, 18, 21, 25, 65]

/** The `iss` of the test issuer's SD-JWTs, named in its signer certificate. */
const DEV_ISSUER_ID = 'https://dev-issuer.ofage.invalid'

const ECDSA = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
const DAY_MS = 86_400_000

export async function createDevIssuer(now: Date): Promise<DevIssuer> {
  const x509 = await peculiarX509()
  const rootKeys = await crypto.subtle.generateKey(ECDSA, true, ['sign', 'verify'])
  const signerKeys = await crypto.subtle.generateKey(ECDSA, true, ['sign', 'verify'])
  const notBefore = new Date(now.getTime() - DAY_MS)
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: `CN=ofage dev issuer root, O=${DEV_ISSUER_ORGANIZATION}, C=UT`,
    notBefore,
    notAfter: new Date(now.getTime() + 3 * 365 * DAY_MS),
    keys: rootKeys,
    signingAlgorithm: ECDSA,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(rootKeys.publicKey),
    ],
  })
  const signer = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `CN=ofage dev document signer, O=${DEV_ISSUER_ORGANIZATION}, C=UT`,
    issuer: root.subject,
    notBefore,
    notAfter: new Date(now.getTime() + 365 * DAY_MS),
    publicKey: signerKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: ECDSA,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      // ISO 18013-5 Annex B: a document signer certificate is for mdoc signing (1.0.18013.5.1.2).
      new x509.ExtendedKeyUsageExtension(['1.0.18013.5.1.2'], true),
      await x509.AuthorityKeyIdentifierExtension.create(rootKeys.publicKey),
      // The SD-JWT's `iss` is bound to this certificate (draft-ietf-oauth-sd-jwt-vc §3.5: a uniformResourceIdentifier SAN).
      new x509.SubjectAlternativeNameExtension([{ type: 'url', value: DEV_ISSUER_ID }]),
    ],
  })
  return {
    rootCertificate: root.toString('pem'),
    signerCertificate: signer.toString('pem'),
    signerKey: (await crypto.subtle.exportKey('jwk', signerKeys.privateKey)) as JWK,
  }
}

/**
 * An age credential for a holder of `age`, bound to the holder's key, valid for a year from `now`. With
 * `status`, the SD-JWT names its status list entry as an EUDI PID does: `status: { status_list: { idx, uri } }`.
 */
export async function issueDevCredential(
  issuer: DevIssuer,
  options: { format: DevCredentialFormat; age: number; holderPublicKey: JWK; now: Date; status?: DevStatusReference },
): Promise<DevCredential> {
  const ages = Object.fromEntries(DEV_AGE_THRESHOLDS.map((threshold) => [String(threshold), options.age >= threshold]))
  const validUntil = new Date(options.now.getTime() + 365 * DAY_MS)
  if (options.format !== 'sd-jwt') {
    // @auth0/mdl writes a fixed set of MSO fields; an mdoc silently issued without its status would test nothing.
    if (options.status) throw new TypeError('the dev issuer writes a status reference into SD-JWT VCs only')
    const docType = options.format === 'av' ? 'eu.europa.ec.av.1' : 'org.iso.18013.5.1.mDL'
    const issued = await issueDevMdoc({ ...issuer, holderPublicKey: options.holderPublicKey, docType, ages, validFrom: options.now, validUntil })
    return { format: 'mso_mdoc', docType, credential: Buffer.from(issued).toString('base64url') }
  }
  const instance = new SDJwtVcInstance({
    signer: await ES256.getSigner(issuer.signerKey),
    signAlg: 'ES256',
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: generateSalt,
  })
  const iat = Math.floor(options.now.getTime() / 1000)
  const credential = await instance.issue(
    {
      iss: DEV_ISSUER_ID,
      iat,
      exp: Math.floor(validUntil.getTime() / 1000),
      vct: 'urn:eudi:pid:1',
      cnf: { jwk: options.holderPublicKey },
      age_equal_or_over: ages,
      ...(options.status && { status: { status_list: { idx: options.status.idx, uri: options.status.uri } } }),
    },
    { age_equal_or_over: { _sd: Object.keys(ages) } } as never,
    { header: { typ: 'dc+sd-jwt', x5c: [Buffer.from(new X509Certificate(issuer.signerCertificate).raw).toString('base64')] } },
  )
  return { format: 'dc+sd-jwt', credential }
}

function randomSerial(): string {
  // Positive, 8 bytes: RFC 5280 §4.1.2.2 asks for a positive integer of at most 20 octets.
  return `01${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex')}`
}
