import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import type { JWK } from 'jose'

/**
 * Test PKIs for mdoc issuers, as ISO 18013-5 Annex B profiles them: an IACA root (a CA naming its
 * country) and a document signer certificate it issued, ECDSA P-256. @auth0/mdl reads the country (C) of
 * the document signer's issuer; the chain itself is checked by our trust list.
 */

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
/** ISO 18013-5 Annex B: id-mdl-kp-mdlDS, the extended key usage of a document signer. */
const MDL_DOCUMENT_SIGNER = '1.0.18013.5.1.2'

export type KeyPair = { publicKey: JWK; privateKey: JWK }

export type MdocPki = {
  /** The IACA root, PEM: what a trust list holds. */
  rootPem: string
  /** The document signer certificate, PEM. */
  signerPem: string
  /** The document signer's key pair (private JWK for signing). */
  signer: KeyPair
  /** The IACA's keys, for what else it signs (its CRL). */
  rootKeys: CryptoKeyPair
}

/** A fresh P-256 key pair as JWKs (a wallet's device key, an issuer's signing key). */
export async function generateP256KeyPair(): Promise<KeyPair> {
  const keys = await crypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])
  return {
    publicKey: (await crypto.subtle.exportKey('jwk', keys.publicKey)) as JWK,
    privateKey: (await crypto.subtle.exportKey('jwk', keys.privateKey)) as JWK,
  }
}

/**
 * An IACA root valid from `from` for ten years, and a document signer valid from `from` to `signerUntil`. Both
 * name the country UT unless `rootName`/`signerName` give other distinguished-name fields (Annex B: the two agree);
 * with `crlDistributionPoint`, the document signer names that CRL.
 */
export async function createMdocPki(options: { from: Date; signerUntil: Date; name?: string; rootName?: string; signerName?: string; crlDistributionPoint?: string }): Promise<MdocPki> {
  const name = options.name ?? 'Test'
  const rootKeys = await crypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])
  const signerKeys = await crypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `${options.rootName ?? 'C=UT'}, CN=${name} IACA`,
    notBefore: options.from,
    notAfter: new Date(options.from.getTime() + 3650 * 86_400_000),
    keys: rootKeys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(rootKeys.publicKey),
    ],
  })
  const signer = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: `${options.signerName ?? 'C=UT'}, CN=${name} Document Signer`,
    issuer: root.subject,
    notBefore: options.from,
    notAfter: options.signerUntil,
    publicKey: signerKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([MDL_DOCUMENT_SIGNER], true),
      await x509.AuthorityKeyIdentifierExtension.create(rootKeys.publicKey),
      // ISO 18013-5 Annex B: the document signer names where its IACA publishes revocations.
      ...(options.crlDistributionPoint ? [new x509.CRLDistributionPointsExtension([options.crlDistributionPoint])] : []),
    ],
  })
  return {
    rootPem: root.toString('pem'),
    signerPem: signer.toString('pem'),
    signer: {
      publicKey: (await crypto.subtle.exportKey('jwk', signerKeys.publicKey)) as JWK,
      privateKey: (await crypto.subtle.exportKey('jwk', signerKeys.privateKey)) as JWK,
    },
    rootKeys,
  }
}
