import { beforeAll, describe, expect, test } from 'bun:test'
import { digest, ES256, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import type { JWK } from 'jose'
import { verifySdJwtAgePresentation, type PresentationCheck } from '../../src/credentials/sd-jwt-vc/verify.ts'
import { parseTrustList, type TrustList } from '../../src/credentials/trust/trust-list.ts'
import { offlineRevocation } from './status-fixtures.ts'

/**
 * SD-JWT VC age presentations, made here by a test issuer and a test holder with the same library a
 * wallet would use: only `age_equal_or_over` is disclosed, bound to the holder's key with our nonce.
 */
const NOW = 1_795_000_000
const AUDIENCE = 'x509_san_dns:age.example'
const NONCE = 'n-0S6_WzA2Mj'

type Keys = { publicKey: JWK; privateKey: JWK }
let issuer: Keys
let otherIssuer: Keys
let holder: Keys
let trust: TrustList

beforeAll(async () => {
  const keys = (await Promise.all([ES256.generateKeyPair(), ES256.generateKeyPair(), ES256.generateKeyPair()])) as Keys[]
  issuer = keys[0]!
  otherIssuer = keys[1]!
  holder = keys[2]!
  trust = parseTrustList(JSON.stringify({ keys: [{ ...issuer.publicKey, kid: 'pid-issuer-1' }] }))
})

/** Issues a PID-like credential with age claims and presents only `age_equal_or_over` (and its keys). */
async function present(options: {
  ages?: Record<string, boolean>
  disclose?: string[]
  signWith?: Keys
  kid?: string
  exp?: number
  nbf?: number
  /** Signs the key-binding JWT with another key than the one the credential binds. */
  kbKey?: Keys
  nonce?: string
  aud?: string
  kbIat?: number
  header?: Record<string, unknown>
  vct?: string
}) {
  const signWith = options.signWith ?? issuer
  const instance = new SDJwtVcInstance({
    signer: await ES256.getSigner(signWith.privateKey),
    signAlg: 'ES256',
    kbSigner: await ES256.getSigner((options.kbKey ?? holder).privateKey),
    kbSignAlg: 'ES256',
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: generateSalt,
  })
  const ages = options.ages ?? { '16': true, '18': true, '21': false }
  const credential = await instance.issue(
    {
      iss: 'https://pid.example',
      iat: NOW - 86_400,
      exp: options.exp ?? NOW + 86_400 * 365,
      ...(options.nbf === undefined ? {} : { nbf: options.nbf }),
      vct: options.vct ?? 'urn:eudi:pid:de:1',
      cnf: { jwk: holder.publicKey },
      given_name: 'Erika',
      birthdate: '2001-08-12',
      age_equal_or_over: ages,
    },
    { _sd: ['given_name', 'birthdate'], age_equal_or_over: { _sd: Object.keys(ages) } } as never,
    { header: options.header ?? { kid: options.kid ?? 'pid-issuer-1' } },
  )
  const disclose = Object.fromEntries((options.disclose ?? ['18']).map((age) => [age, true]))
  return instance.present(credential, { age_equal_or_over: disclose } as never, {
    kb: { payload: { iat: options.kbIat ?? NOW, aud: options.aud ?? AUDIENCE, nonce: options.nonce ?? NONCE } },
  })
}

const check = (overrides: Partial<PresentationCheck> = {}): PresentationCheck => ({
  trustList: trust,
  nonce: NONCE,
  audience: AUDIENCE,
  threshold: 18,
  now: NOW,
  // The EUDI PID rulebook's type and the German PID's, as a query names them.
  vctValues: ['urn:eudi:pid:1', 'urn:eudi:pid:de:1'],
  revocation: offlineRevocation(new Date(NOW * 1000)),
  ...overrides,
})

describe('verifySdJwtAgePresentation', () => {
  test('a trusted issuer\'s credential of another type than the query asked for is refused (issue 20, item 0)', async () => {
    const loyaltyCard = await present({ vct: 'urn:example:loyalty-card:1' })
    expect(await verifySdJwtAgePresentation(loyaltyCard, check())).toEqual({ valid: false, failure: 'wrong_credential' })
    expect(await verifySdJwtAgePresentation(loyaltyCard, check({ vctValues: ['urn:example:loyalty-card:1'] }))).toEqual({ valid: true, ageOver: 18 })
  })

  test('a presentation of age_equal_or_over.18, bound to our nonce and audience, proves 18', async () => {
    const presentation = await present({})
    expect(await verifySdJwtAgePresentation(presentation, check())).toEqual({ valid: true, ageOver: 18 })
    // Nothing else was disclosed: the name and birth date stay with the wallet.
    expect(presentation).not.toContain('Erika')
    expect(Buffer.from(presentation.split('~').slice(1).join(''), 'base64url').toString()).not.toContain('2001')
  })

  test('a higher age that is true proves a lower threshold; the proven age is the threshold asked', async () => {
    const presentation = await present({ ages: { '18': true, '21': true }, disclose: ['21'] })
    expect(await verifySdJwtAgePresentation(presentation, check({ threshold: 18 }))).toEqual({ valid: true, ageOver: 18 })
  })

  test('a threshold lower than asked, a false claim, or no claim at all is refused', async () => {
    expect(await verifySdJwtAgePresentation(await present({ disclose: ['16'] }), check())).toEqual({ valid: false, failure: 'under_threshold' })
    expect(await verifySdJwtAgePresentation(await present({ disclose: ['21'] }), check({ threshold: 21 }))).toEqual({ valid: false, failure: 'under_threshold' })
    expect(await verifySdJwtAgePresentation(await present({ disclose: [] }), check())).toEqual({ valid: false, failure: 'claim_missing' })
  })

  test('a wrong nonce (a presentation made for another request) is refused', async () => {
    expect(await verifySdJwtAgePresentation(await present({ nonce: 'another-session' }), check())).toEqual({ valid: false, failure: 'wrong_nonce' })
    expect(await verifySdJwtAgePresentation(await present({}), check({ nonce: 'another-session' }))).toMatchObject({ valid: false })
  })

  test('a presentation for another verifier (audience) is refused', async () => {
    expect(await verifySdJwtAgePresentation(await present({ aud: 'x509_san_dns:rival.example' }), check())).toEqual({ valid: false, failure: 'wrong_audience' })
  })

  test('a stale key-binding JWT is refused', async () => {
    expect(await verifySdJwtAgePresentation(await present({ kbIat: NOW - 3600 }), check())).toEqual({ valid: false, failure: 'key_binding' })
  })

  test('an expired credential is refused', async () => {
    expect(await verifySdJwtAgePresentation(await present({ exp: NOW - 3600 }), check())).toEqual({ valid: false, failure: 'expired' })
  })

  test('a credential not valid yet (nbf an hour ahead) is refused as expired, not as malformed', async () => {
    expect(await verifySdJwtAgePresentation(await present({ nbf: NOW + 3600 }), check())).toEqual({ valid: false, failure: 'expired' })
    expect(await verifySdJwtAgePresentation(await present({ nbf: NOW - 60 }), check())).toEqual({ valid: true, ageOver: 18 })
  })

  test('a key-binding JWT signed by a key the credential does not bind is key_binding, with our nonce or another', async () => {
    const stranger = (await ES256.generateKeyPair()) as Keys
    expect(await verifySdJwtAgePresentation(await present({ kbKey: stranger }), check())).toEqual({ valid: false, failure: 'key_binding' })
    expect(await verifySdJwtAgePresentation(await present({ kbKey: stranger, nonce: 'another-session' }), check())).toEqual({ valid: false, failure: 'wrong_nonce' })
  })

  test('an issuer not in the trust list is refused, whatever kid it claims', async () => {
    expect(await verifySdJwtAgePresentation(await present({ signWith: otherIssuer, kid: 'rogue' }), check())).toEqual({ valid: false, failure: 'untrusted_issuer' })
    const forged = await present({ signWith: otherIssuer })
    expect(await verifySdJwtAgePresentation(forged, check())).toEqual({ valid: false, failure: 'invalid_signature' })
  })

  test('a tampered disclosure (16 turned into 18) breaks the digests and is refused', async () => {
    const presentation = await present({ disclose: ['16'] })
    const [jwt, ...rest] = presentation.split('~')
    const tampered = rest.map((part) => {
      if (!part || part.includes('.')) return part
      const decoded = Buffer.from(part, 'base64url').toString()
      return decoded.includes('"16"') ? Buffer.from(decoded.replace('"16"', '"18"')).toString('base64url') : part
    })
    expect(await verifySdJwtAgePresentation([jwt, ...tampered].join('~'), check())).toMatchObject({ valid: false })
  })

  test('garbage is malformed, not an exception', async () => {
    for (const input of ['', 'not-a-jwt', 'a.b.c~', '~~~']) expect(await verifySdJwtAgePresentation(input, check())).toMatchObject({ valid: false })
  })
})

describe('parseTrustList', () => {
  test('accepts public P-256 keys and refuses anything else, private keys included', () => {
    expect(parseTrustList(JSON.stringify({ keys: [issuer.publicKey] })).keys).toHaveLength(1)
    expect(() => parseTrustList(JSON.stringify({ keys: [issuer.privateKey] }))).toThrow('private key')
    expect(() => parseTrustList(JSON.stringify({ keys: [{ kty: 'RSA', n: 'x', e: 'AQAB' }] }))).toThrow('P-256')
    expect(() => parseTrustList('{}')).toThrow('keys')
  })
})

/** A root CA and a document signer certificate it issued, as an issuer's PKI would have (ECDSA P-256). */
/** A root and a leaf; the leaf names the issuer `https://pid.example` (the SAN URI the draft binds `iss` to) unless `names` says otherwise. */
async function pki(options: { leafNotAfter?: Date; names?: x509.JsonGeneralName[] } = {}) {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
  const rootKeys = await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])
  const leafKeys = await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])
  const from = new Date((NOW - 86_400 * 30) * 1000)
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=Test PID Root',
    notBefore: from,
    notAfter: new Date((NOW + 86_400 * 3650) * 1000),
    keys: rootKeys,
    signingAlgorithm: algorithm,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  })
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: 'CN=Test PID Document Signer',
    issuer: root.subject,
    notBefore: from,
    notAfter: options.leafNotAfter ?? new Date((NOW + 86_400 * 365) * 1000),
    publicKey: leafKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: algorithm,
    extensions: [new x509.SubjectAlternativeNameExtension(options.names ?? [{ type: 'url', value: 'https://pid.example' }])],
  })
  const signer: Keys = {
    publicKey: (await crypto.subtle.exportKey('jwk', leafKeys.publicKey)) as JWK,
    privateKey: (await crypto.subtle.exportKey('jwk', leafKeys.privateKey)) as JWK,
  }
  return { rootPem: root.toString('pem'), leafX5c: Buffer.from(leaf.rawData).toString('base64'), signer }
}

describe('issuers with certificate chains (x5c to a trusted root)', () => {
  test('a credential whose x5c chains to a root in the trust list verifies with the leaf key', async () => {
    const { rootPem, leafX5c, signer } = await pki()
    const trustList = parseTrustList(rootPem)
    const presentation = await present({ signWith: signer, header: { x5c: [leafX5c] } })
    expect(await verifySdJwtAgePresentation(presentation, check({ trustList }))).toEqual({ valid: true, ageOver: 18 })
  })

  test('a chain to a root not in the trust list, or an expired document signer, is an untrusted issuer', async () => {
    const trusted = await pki()
    const rogue = await pki()
    const trustList = parseTrustList(trusted.rootPem)
    const fromRogue = await present({ signWith: rogue.signer, header: { x5c: [rogue.leafX5c] } })
    expect(await verifySdJwtAgePresentation(fromRogue, check({ trustList }))).toEqual({ valid: false, failure: 'untrusted_issuer' })
    const expired = await pki({ leafNotAfter: new Date((NOW - 60) * 1000) })
    const late = await present({ signWith: expired.signer, header: { x5c: [expired.leafX5c] } })
    expect(await verifySdJwtAgePresentation(late, check({ trustList: parseTrustList(expired.rootPem) }))).toEqual({ valid: false, failure: 'untrusted_issuer' })
  })

  test('a trusted chain whose leaf does not name the credential\'s iss is an untrusted issuer (issue 21: iss bound to x5c)', async () => {
    // The credential says https://pid.example; each leaf names someone else, or nothing.
    for (const names of [[], [{ type: 'url', value: 'https://pid-provider.example' }], [{ type: 'dns', value: 'pid.example.evil' }], [{ type: 'url', value: 'https://pid.example/' }]] as x509.JsonGeneralName[][]) {
      const { rootPem, leafX5c, signer } = await pki({ names })
      const presentation = await present({ signWith: signer, header: { x5c: [leafX5c] } })
      expect(await verifySdJwtAgePresentation(presentation, check({ trustList: parseTrustList(rootPem) }))).toEqual({ valid: false, failure: 'untrusted_issuer' })
    }
  })

  test('an https iss may also be bound by its host as a dNSName SAN (HAIP), in any case', async () => {
    const { rootPem, leafX5c, signer } = await pki({ names: [{ type: 'dns', value: 'PID.example' }] })
    const presentation = await present({ signWith: signer, header: { x5c: [leafX5c] } })
    expect(await verifySdJwtAgePresentation(presentation, check({ trustList: parseTrustList(rootPem) }))).toEqual({ valid: true, ageOver: 18 })
  })

  test('a trusted JWK that names an iss verifies only credentials of that issuer', async () => {
    const bound = (iss: string) => parseTrustList(JSON.stringify({ keys: [{ ...issuer.publicKey, kid: 'pid-issuer-1', iss }] }))
    expect(await verifySdJwtAgePresentation(await present({}), check({ trustList: bound('https://pid.example') }))).toEqual({ valid: true, ageOver: 18 })
    expect(await verifySdJwtAgePresentation(await present({}), check({ trustList: bound('https://other.example') }))).toEqual({ valid: false, failure: 'untrusted_issuer' })
  })

  test("a trusted chain does not lend its trust to another key's signature", async () => {
    const { rootPem, leafX5c } = await pki()
    const forged = await present({ signWith: otherIssuer, header: { x5c: [leafX5c] } })
    expect(await verifySdJwtAgePresentation(forged, check({ trustList: parseTrustList(rootPem) }))).toEqual({ valid: false, failure: 'invalid_signature' })
  })

  test('one trust list file may hold PEM roots and a JWK set together', async () => {
    const { rootPem } = await pki()
    const list = parseTrustList(`${rootPem}\n${JSON.stringify({ keys: [issuer.publicKey] })}`)
    expect([list.roots.length, list.keys.length]).toEqual([1, 1])
    expect(() => parseTrustList('-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----')).toThrow('certificate 0')
  })
})
