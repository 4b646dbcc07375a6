import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash, createPublicKey, verify } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServices } from '../../src/boot.ts'
import { loadConfig } from '../../src/config.ts'
import { loadReaderIdentity } from '../../src/credentials/trust/reader-identity.ts'
import { ConfigError } from '../../src/errors.ts'
import { fixedClock } from '../../src/lib/clock.ts'
import { silentLogger } from '../../src/lib/log.ts'

/**
 * The operator's own certificates (docs/deploy.md, "Going live with Apple and Google"): a readerAuth chain
 * for Annex C requests and a request-signing chain for OpenID4VP, read and checked at start.
 */

const NOW = new Date('2026-11-22T12:00:00Z')
const DAY = 86_400_000
const ES256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
const RS256 = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }
/** ISO/IEC 18013-5 Annex B: id-mdl-kp-mdlReaderAuth, the extended key usage of a reader certificate. */
const MDL_READER_AUTH = '1.0.18013.5.1.6'
const GOOGLE_RP_METADATA = '1.3.6.1.4.1.11129.10.1'
/** RelyingPartyMetadataBytes = #6.24(bstr .cbor {"schema_version": "v1"}), as bytes: a stand-in for Google's. */
const RP_METADATA = Buffer.from('d81853a16e736368656d615f76657273696f6e627631', 'hex')

let dir: string
const file = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

type Chain = { leafPem: string; rootPem: string; keyPem: string }

async function pkcs8Pem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await crypto.subtle.exportKey('pkcs8', key)).toString('base64')
  return `-----BEGIN PRIVATE KEY-----\n${der.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`
}

/** A CA and a reader (or request-signing) leaf it issued, as an Apple- or registrar-issued chain is shaped. */
async function createChain(options: { leafFrom?: Date; leafUntil?: Date; rsa?: boolean; dnsName?: string; rpMetadata?: Buffer } = {}): Promise<Chain> {
  const algorithm = options.rsa ? RS256 : ES256
  const rootKeys = (await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair
  const leafKeys = (await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'C=UT, O=Test Registrar, CN=Test Reader CA',
    notBefore: new Date(NOW.getTime() - 30 * DAY),
    notAfter: new Date(NOW.getTime() + 3650 * DAY),
    keys: rootKeys,
    signingAlgorithm: algorithm,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  })
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: 'C=UT, O=Test Shop, CN=age.example',
    issuer: root.subject,
    notBefore: options.leafFrom ?? new Date(NOW.getTime() - DAY),
    notAfter: options.leafUntil ?? new Date(NOW.getTime() + 397 * DAY),
    publicKey: leafKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([MDL_READER_AUTH], true),
      ...(options.dnsName ? [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: options.dnsName }])] : []),
      // Google's Verifier Registrar profile: SHA-256 of the RelyingPartyMetadataBytes as a DER OCTET STRING.
      ...(options.rpMetadata ? [new x509.Extension(GOOGLE_RP_METADATA, false, Buffer.concat([Buffer.from([0x04, 0x20]), createHash('sha256').update(options.rpMetadata).digest()]))] : []),
    ],
  })
  return { leafPem: leaf.toString('pem'), rootPem: root.toString('pem'), keyPem: await pkcs8Pem(leafKeys.privateKey) }
}

let good: Chain
let other: Chain
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ofage-reader-identity-'))
  good = await createChain({ dnsName: 'age.example' })
  other = await createChain()
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The error loading these reader files gives, which must be a ConfigError. */
async function readerFailure(certificate: string, key: string): Promise<ConfigError> {
  const error = await loadReaderIdentity({ readerCertificateFile: certificate, readerKeyFile: key, verifierCertificateFile: undefined, verifierKeyFile: undefined }, NOW).catch((e: unknown) => e)
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${error}`)
  return error
}

describe('loadReaderIdentity: the operator files that load', () => {
  test('a readerAuth chain (leaf first) and its key load; the key signs ES256 that the leaf certificate verifies', async () => {
    const identity = await loadReaderIdentity(
      { readerCertificateFile: file('reader.pem', good.leafPem + good.rootPem), readerKeyFile: file('reader-key.pem', good.keyPem), verifierCertificateFile: undefined, verifierKeyFile: undefined },
      NOW,
    )
    expect(identity.requestSigning).toBeUndefined()
    const reader = identity.readerAuth!
    expect(reader.x5c).toEqual([good.leafPem, good.rootPem].map((pem) => Buffer.from(new x509.X509Certificate(pem).rawData).toString('base64')))
    expect(reader.chain[0]!.subject).toContain('CN=age.example')
    const message = new TextEncoder().encode('ReaderAuthentication')
    const signature = new Uint8Array(await crypto.subtle.sign(ES256, reader.privateKey, message))
    // Checked by node:crypto against the certificate from the file, not by the key that signed.
    expect(verify('sha256', message, { key: createPublicKey(good.leafPem), dsaEncoding: 'ieee-p1363' }, signature)).toBe(true)
  })

  test('a request-signing chain gives its x509_hash client id (SHA-256 of the DER leaf) and x509_san_dns from its DNS name', async () => {
    const identity = await loadReaderIdentity(
      { readerCertificateFile: undefined, readerKeyFile: undefined, verifierCertificateFile: file('signing.pem', good.leafPem + good.rootPem), verifierKeyFile: file('signing-key.pem', good.keyPem) },
      NOW,
    )
    const thumbprint = Buffer.from(await new x509.X509Certificate(good.leafPem).getThumbprint('SHA-256')).toString('base64url')
    expect(identity.requestSigning!.clientId).toBe(`x509_hash:${thumbprint}`)
    expect(identity.requestSigning!.sanDnsClientId).toBe('x509_san_dns:age.example')
    expect(identity.readerAuth).toBeUndefined()
  })

  test('a leaf alone is a chain; a leaf without a DNS name has no x509_san_dns client id', async () => {
    const identity = await loadReaderIdentity(
      { readerCertificateFile: undefined, readerKeyFile: undefined, verifierCertificateFile: file('leaf.pem', other.leafPem), verifierKeyFile: file('leaf-key.pem', other.keyPem) },
      NOW,
    )
    expect(identity.requestSigning!.x5c).toHaveLength(1)
    expect(identity.requestSigning!.sanDnsClientId).toBeUndefined()
  })

  test('nothing set: no identity from files', async () => {
    expect(await loadReaderIdentity({ readerCertificateFile: undefined, readerKeyFile: undefined, verifierCertificateFile: undefined, verifierKeyFile: undefined }, NOW)).toEqual({})
  })
})

describe('loadReaderIdentity: what stops start-up, naming the setting', () => {
  test('a key that is not the leaf certificate’s: CREDENTIAL_READER_KEY_FILE', async () => {
    const error = await readerFailure(file('c1.pem', good.leafPem), file('k1.pem', other.keyPem))
    expect(error.variable).toBe('CREDENTIAL_READER_KEY_FILE')
    expect(error.message).toContain('not the private key of the leaf certificate')
  })

  test('an expired leaf: CREDENTIAL_READER_CERT_FILE, with the date it expired', async () => {
    const expired = await createChain({ leafFrom: new Date(NOW.getTime() - 400 * DAY), leafUntil: new Date(NOW.getTime() - DAY) })
    const error = await readerFailure(file('c2.pem', expired.leafPem + expired.rootPem), file('k2.pem', expired.keyPem))
    expect(error.variable).toBe('CREDENTIAL_READER_CERT_FILE')
    expect(error.message).toContain(`expired on ${new Date(NOW.getTime() - DAY).toISOString().slice(0, 10)}`)
  })

  test('a leaf not yet valid: CREDENTIAL_READER_CERT_FILE', async () => {
    const early = await createChain({ leafFrom: new Date(NOW.getTime() + DAY) })
    expect((await readerFailure(file('c3.pem', early.leafPem), file('k3.pem', early.keyPem))).message).toContain('is not valid before')
  })

  test('an RSA key: the key file is refused (ES256 needs EC P-256)', async () => {
    const rsa = await createChain({ rsa: true })
    const error = await readerFailure(file('c4.pem', rsa.leafPem + rsa.rootPem), file('k4.pem', rsa.keyPem))
    expect(error.variable).toBe('CREDENTIAL_READER_KEY_FILE')
    expect(error.message).toContain('EC P-256')
  })

  test('an RSA leaf with a P-256 key: the certificate file is refused', async () => {
    const rsa = await createChain({ rsa: true })
    const error = await readerFailure(file('c5.pem', rsa.leafPem), file('k5.pem', good.keyPem))
    expect(error.variable).toBe('CREDENTIAL_READER_CERT_FILE')
    expect(error.message).toContain('EC P-256')
  })

  test('garbage PEM: the certificate file, then the key file', async () => {
    const garbage = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n'
    expect((await readerFailure(file('c6.pem', garbage), file('k6.pem', good.keyPem))).variable).toBe('CREDENTIAL_READER_CERT_FILE')
    expect((await readerFailure(file('c7.pem', 'not PEM at all'), file('k7.pem', good.keyPem))).message).toContain('holds no PEM certificate')
    const badKey = '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n'
    expect((await readerFailure(file('c8.pem', good.leafPem), file('k8.pem', badKey))).variable).toBe('CREDENTIAL_READER_KEY_FILE')
  })

  test('a missing file: the setting that names it, with the path', async () => {
    const missing = join(dir, 'missing.pem')
    const error = await readerFailure(missing, file('k9.pem', good.keyPem))
    expect(error.variable).toBe('CREDENTIAL_READER_CERT_FILE')
    expect(error.message).toContain(missing)
    expect((await readerFailure(file('c10.pem', good.leafPem), missing)).variable).toBe('CREDENTIAL_READER_KEY_FILE')
  })

  test('a chain out of order (root first): CREDENTIAL_READER_CERT_FILE, saying whose key the key file holds', async () => {
    const error = await readerFailure(file('c11.pem', good.rootPem + good.leafPem), file('k11.pem', good.keyPem))
    expect(error.variable).toBe('CREDENTIAL_READER_CERT_FILE')
    expect(error.message).toContain('not in order, leaf first')
  })

  test('a certificate after the leaf that did not issue it: CREDENTIAL_READER_CERT_FILE', async () => {
    const error = await readerFailure(file('c11b.pem', good.leafPem + other.rootPem), file('k11b.pem', good.keyPem))
    expect(error.variable).toBe('CREDENTIAL_READER_CERT_FILE')
    expect(error.message).toContain('not a chain in order')
  })

  test('a private key inside the certificate file is refused: the chain is public, the key must not travel with it', async () => {
    const error = await readerFailure(file('c12.pem', good.leafPem + good.keyPem), file('k12.pem', good.keyPem))
    expect(error.variable).toBe('CREDENTIAL_READER_CERT_FILE')
  })

  test('the request-signing files are checked the same way, naming CREDENTIAL_VERIFIER_*', async () => {
    const error = await loadReaderIdentity(
      { readerCertificateFile: undefined, readerKeyFile: undefined, verifierCertificateFile: file('c13.pem', good.leafPem), verifierKeyFile: file('k13.pem', other.keyPem) },
      NOW,
    ).catch((e: unknown) => e)
    expect((error as ConfigError).variable).toBe('CREDENTIAL_VERIFIER_KEY_FILE')
  })
})

describe('CREDENTIAL_VERIFIER_RP_METADATA (Google Wallet gw_rp_metadata_bytes)', () => {
  const signingFiles = (chain: Chain, name: string) => ({
    readerCertificateFile: undefined,
    readerKeyFile: undefined,
    verifierCertificateFile: file(`${name}.pem`, chain.leafPem),
    verifierKeyFile: file(`${name}-key.pem`, chain.keyPem),
  })

  test('metadata whose SHA-256 the leaf names in Google’s extension is kept for client_metadata', async () => {
    const bound = await createChain({ rpMetadata: RP_METADATA })
    const identity = await loadReaderIdentity({ ...signingFiles(bound, 'g1'), verifierRpMetadata: RP_METADATA.toString('base64url') }, NOW)
    expect(identity.requestSigning!.rpMetadata).toBe(RP_METADATA.toString('base64url'))
  })

  test('other metadata than the extension names stops start-up', async () => {
    const bound = await createChain({ rpMetadata: RP_METADATA })
    const error = await loadReaderIdentity({ ...signingFiles(bound, 'g2'), verifierRpMetadata: Buffer.from('d81843a10102', 'hex').toString('base64url') }, NOW).catch((e: unknown) => e)
    expect((error as ConfigError).variable).toBe('CREDENTIAL_VERIFIER_RP_METADATA')
  })

  test('a leaf without the extension (a directly onboarded relying party) takes the metadata as given; a value that is not base64url is refused', async () => {
    expect((await loadReaderIdentity({ ...signingFiles(good, 'g3'), verifierRpMetadata: 'AbC-_1' }, NOW)).requestSigning!.rpMetadata).toBe('AbC-_1')
    const error = await loadReaderIdentity({ ...signingFiles(good, 'g4'), verifierRpMetadata: 'not base64url!' }, NOW).catch((e: unknown) => e)
    expect((error as ConfigError).variable).toBe('CREDENTIAL_VERIFIER_RP_METADATA')
  })

  test('set without the request-signing certificate: a configuration error', () => {
    expect(() => loadConfig({ CREDENTIAL_TRUST_LIST: 'trust.pem', CREDENTIAL_VERIFIER_RP_METADATA: 'AbC' })).toThrow(ConfigError)
  })
})

describe('the settings (config.ts) and start-up (boot.ts)', () => {
  test('CREDENTIAL_READER_KEY_FILE and _CERT_FILE are set together, and only with a trust list', () => {
    const trust = file('trust.pem', good.rootPem)
    const failure = (env: Record<string, string>) => {
      try {
        loadConfig(env)
      } catch (error) {
        return error as ConfigError
      }
      throw new Error('expected a ConfigError')
    }
    expect(failure({ CREDENTIAL_TRUST_LIST: trust, CREDENTIAL_READER_CERT_FILE: trust }).variable).toBe('CREDENTIAL_READER_KEY_FILE')
    expect(failure({ CREDENTIAL_READER_CERT_FILE: trust, CREDENTIAL_READER_KEY_FILE: trust }).variable).toBe('CREDENTIAL_READER_CERT_FILE')
    expect(loadConfig({ CREDENTIAL_TRUST_LIST: trust, CREDENTIAL_READER_CERT_FILE: 'a.pem', CREDENTIAL_READER_KEY_FILE: 'b.pem' }).credentials).toMatchObject({
      readerCertificateFile: 'a.pem',
      readerKeyFile: 'b.pem',
    })
  })

  test('deps.credentials carries the readerAuth certificate and signs OpenID4VP requests with the operator’s chain', async () => {
    const env = {
      DATABASE_URL: 'memory:',
      CREDENTIAL_TRUST_LIST: file('trust-list.pem', good.rootPem),
      CREDENTIAL_READER_CERT_FILE: file('app-reader.pem', good.leafPem + good.rootPem),
      CREDENTIAL_READER_KEY_FILE: file('app-reader-key.pem', good.keyPem),
      CREDENTIAL_VERIFIER_CERT_FILE: file('app-signing.pem', other.leafPem + other.rootPem),
      CREDENTIAL_VERIFIER_KEY_FILE: file('app-signing-key.pem', other.keyPem),
    }
    const services = await startServices(loadConfig(env), { clock: fixedClock(NOW), log: silentLogger })
    try {
      const credentials = services.deps.credentials!
      expect(credentials.readerAuth!.x5c).toHaveLength(2)
      const thumbprint = Buffer.from(await new x509.X509Certificate(other.leafPem).getThumbprint('SHA-256')).toString('base64url')
      expect(credentials.verifier.clientId).toBe(`x509_hash:${thumbprint}`)
    } finally {
      await services.close()
    }
  })

  test('a bad file stops start-up with the ConfigError, before the database is opened', async () => {
    const env = {
      DATABASE_URL: 'memory:',
      CREDENTIAL_TRUST_LIST: file('trust-list-2.pem', good.rootPem),
      CREDENTIAL_READER_CERT_FILE: file('app-reader-2.pem', good.leafPem),
      CREDENTIAL_READER_KEY_FILE: file('app-reader-key-2.pem', other.keyPem),
    }
    const error = await startServices(loadConfig(env), { clock: fixedClock(NOW), log: silentLogger }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe('CREDENTIAL_READER_KEY_FILE')
  })
})
