import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import { importJWK, type CryptoKey, type JWK } from 'jose'
import { x509HashClientId, type VerifierKey } from '../../src/keys/verifier-key.ts'

const ECDSA = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }

/**
 * A verifier key as `loadVerifierKey` makes one on first start, without a database: an ES256 key and a
 * self-signed certificate naming `hostname`, the client id `x509_hash:` + the certificate's SHA-256.
 */
export async function createTestVerifierKey(now: Date, hostname = 'age.example'): Promise<VerifierKey> {
  const keys = await crypto.subtle.generateKey(ECDSA, true, ['sign', 'verify'])
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${hostname}`,
    notBefore: new Date(now.getTime() - 86_400_000),
    notAfter: new Date(now.getTime() + 365 * 86_400_000),
    keys,
    signingAlgorithm: ECDSA,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: hostname }])],
  })
  const leaf = Buffer.from(certificate.rawData).toString('base64')
  const privateKey = (await importJWK((await crypto.subtle.exportKey('jwk', keys.privateKey)) as JWK, 'ES256')) as CryptoKey
  return { clientId: x509HashClientId(leaf), x5c: [leaf], privateKey }
}
