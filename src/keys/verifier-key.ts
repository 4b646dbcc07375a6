import { createHash, X509Certificate } from 'node:crypto'
import { importJWK, type CryptoKey, type JWK } from 'jose'
import type { Database } from '../db/client.ts'
import { peculiarX509 } from '../credentials/trust/peculiar-x509.ts'
import { findSecret, getOrCreateSecret } from './server-secrets.ts'

/**
 * How we sign OpenID4VP requests to wallets: an ES256 key and its certificate chain (leaf first). The
 * wallet sees our `client_id` as `x509_hash:` + the SHA-256 of the leaf certificate (OpenID4VP 1.0
 * §5.9.3), so the request's signature and the identity it names cannot be separated.
 */
export type VerifierKey = {
  clientId: string
  x5c: string[]
  privateKey: CryptoKey
  /** `x509_san_dns:<host>`, for an operator's certificate that names a DNS host (never the generated one). */
  sanDnsClientId?: string
  /** Google Wallet's `gw_rp_metadata_bytes` (base64url), sent in `client_metadata` with the certificate Google signed. */
  rpMetadata?: string
  /** Attestations about us from third parties, sent in every signed request (the EU registration certificate). */
  verifierInfo?: VerifierInfo[]
}

/**
 * One `verifier_info` entry (OpenID4VP 1.0 §5.1): an attestation about the verifier in a `format` the
 * wallet's ecosystem defines, its `data` a string (a JWT) or an object, and the credential queries it is
 * about (all of them when absent).
 */
export type VerifierInfo = { format: string; data: string | Record<string, unknown>; credential_ids?: string[] }

const ECDSA = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }

/**
 * The verifier key generated once for the deployment (a self-signed certificate naming the page's host)
 * and shared by every instance through the database. An operator's certificate that wallets trust
 * (CREDENTIAL_VERIFIER_KEY_FILE and _CERT_FILE) is read and checked by the trust room instead
 * (credentials/trust/reader-identity.ts) and replaces this one.
 */
export async function loadVerifierKey(db: Database, options: { appUrl: string }, now: Date): Promise<VerifierKey> {
  const stored = await findSecret(db, 'credential_verifier_key')
  if (stored) return fromStored(stored)
  // Of instances starting together on a fresh database, the first one stored wins and all use its key.
  const generated = JSON.stringify(await generateVerifierKey(new URL(options.appUrl).hostname, now))
  return fromStored(await getOrCreateSecret(db, 'credential_verifier_key', () => generated, now))
}

async function fromStored(stored: string): Promise<VerifierKey> {
  const { jwk, certificate } = JSON.parse(stored) as { jwk: JWK; certificate: string }
  const x5c = [Buffer.from(new X509Certificate(certificate).raw).toString('base64')]
  return { clientId: x509HashClientId(x5c[0]!), x5c, privateKey: (await importJWK(jwk, 'ES256')) as CryptoKey }
}

/** `x509_hash:<base64url SHA-256 of the DER leaf certificate>` (OpenID4VP 1.0 §5.9.3). */
export function x509HashClientId(leafBase64: string): string {
  return `x509_hash:${createHash('sha256').update(Buffer.from(leafBase64, 'base64')).digest('base64url')}`
}

async function generateVerifierKey(hostname: string, now: Date): Promise<{ jwk: JWK; certificate: string }> {
  const keys = await crypto.subtle.generateKey(ECDSA, true, ['sign', 'verify'])
  // Loaded only here, once per database: @peculiar/x509 is large.
  const x509 = await peculiarX509()
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex').replace(/^[89a-f]/, '1'),
    name: `CN=${hostname.replace(/[,=+<>#;"\\]/g, '')}, O=ofage verifier`,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + 5 * 365 * 86_400_000),
    keys,
    signingAlgorithm: ECDSA,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.SubjectAlternativeNameExtension([{ type: /^[\d.]+$/.test(hostname) ? 'ip' : 'dns', value: hostname }]),
    ],
  })
  return { jwk: (await crypto.subtle.exportKey('jwk', keys.privateKey)) as JWK, certificate: certificate.toString('pem') }
}
