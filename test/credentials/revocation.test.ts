import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ES256 } from '@sd-jwt/crypto-nodejs'
import { verifyMdocAgePresentation, type MdocPresentationCheck } from '../../src/credentials/iso-mdoc/verify.ts'
import { openId4VpSessionTranscript } from '../../src/credentials/openid4vp/session-transcript.ts'
import { verifySdJwtAgePresentation, type PresentationCheck } from '../../src/credentials/sd-jwt-vc/verify.ts'
import { createRevocation, type Revocation } from '../../src/credentials/status/revocation.ts'
import { parseTrustList, type TrustList } from '../../src/credentials/trust/trust-list.ts'
import { issueMdoc, presentMdoc } from '../wallets/mdoc.ts'
import { openId4VpTranscript } from '../wallets/transcripts.ts'
import { createMdocPki, generateP256KeyPair, type KeyPair, type MdocPki } from './pki.ts'
import { createCrl, derOf, presentSdJwtWithStatus, signStatusListCwt, signStatusListJwt, startStatusServer, type Keys, type StatusServer } from './status-fixtures.ts'

/**
 * Revocation through the verifiers, end to end: a PID (SD-JWT VC) and an mdoc naming a status list entry, an
 * mdoc whose document signer names a CRL, all served by a local server. Only a presentation that passed every
 * local check (its issuer trusted above all) makes the verifier fetch anything.
 */
const NOW = 1_795_000_000
const DAY = 86_400
const at = (seconds: number) => new Date(seconds * 1000)
const AUDIENCE = 'x509_san_dns:age.example'
const NONCE = 'n-0S6_WzA2Mj'
const KID = 'pid-issuer-1'
const REQUEST = { clientId: 'x509_hash:Uvo3HtuIxuhC92rShpgqcT3YXwrqRxWEviRiA0OZszk', nonce: NONCE, responseUri: 'https://age.example/openid4vp/response' }
// idx:      0 VALID, 1 INVALID, 2 SUSPENDED
const STATUSES = [0, 1, 2]

let issuer: Keys
let stranger: Keys
let holder: Keys
let pki: MdocPki
let revokedSignerPki: MdocPki
let mdocHolder: KeyPair
let trustList: TrustList
let server: StatusServer
let revocation: Revocation

beforeAll(async () => {
  ;[issuer, stranger, holder] = (await Promise.all([ES256.generateKeyPair(), ES256.generateKeyPair(), ES256.generateKeyPair()])) as [Keys, Keys, Keys]
  server = startStatusServer()
  const from = at(NOW - 30 * DAY)
  pki = await createMdocPki({ from, signerUntil: at(NOW + 365 * DAY), crlDistributionPoint: server.url('/iaca.crl') })
  revokedSignerPki = await createMdocPki({ from, signerUntil: at(NOW + 365 * DAY), name: 'Leaked', crlDistributionPoint: server.url('/leaked-iaca.crl') })
  mdocHolder = await generateP256KeyPair()
  trustList = parseTrustList(`${pki.rootPem}\n${revokedSignerPki.rootPem}\n${JSON.stringify({ keys: [{ ...issuer.publicKey, kid: KID }] })}`)
  const claims = (path: string) => ({ statuses: STATUSES, bits: 2 as const, sub: server.url(path), iat: NOW - 60, exp: NOW + 3600, ttl: 600 })
  server.route('/pid/list', await signStatusListJwt(claims('/pid/list'), issuer.privateKey, { kid: KID }))
  server.route('/mdoc/list', await signStatusListCwt(claims('/mdoc/list'), pki.signer.privateKey, [derOf(pki.signerPem)]))
  server.route('/iaca.crl', await createCrl({ issuerPem: pki.rootPem, signingKey: pki.rootKeys.privateKey, revoked: ['7e57'], thisUpdate: at(NOW - DAY), nextUpdate: at(NOW + DAY) }))
  server.route('/leaked-iaca.crl', await createCrl({ issuerPem: revokedSignerPki.rootPem, signingKey: revokedSignerPki.rootKeys.privateKey, revoked: ['02'], thisUpdate: at(NOW - DAY), nextUpdate: at(NOW + DAY) }))
  revocation = createRevocation({ trustList: () => trustList, now: () => at(NOW), fetch: { allowLoopback: true, timeoutMs: 500 } })
})
afterAll(() => server.stop())

const statusAt = (idx: number, path = '/pid/list') => ({ status_list: { idx, uri: server.url(path) } })
const pid = (status: unknown, options: { signWith?: Keys; kid?: string } = {}) =>
  presentSdJwtWithStatus({ issuer: options.signWith ?? issuer, holder, header: { kid: options.kid ?? KID }, status, now: NOW, nonce: NONCE, audience: AUDIENCE })
const sdJwtCheck = (overrides: Partial<PresentationCheck> = {}): PresentationCheck => ({
  trustList,
  nonce: NONCE,
  audience: AUDIENCE,
  threshold: 18,
  now: NOW,
  vctValues: ['urn:eudi:pid:1'],
  revocation,
  ...overrides,
})

describe('verifySdJwtAgePresentation with a status list entry (EUDI PID)', () => {
  test('a PID whose entry is VALID is approved; INVALID is revoked; SUSPENDED is suspended', async () => {
    expect(await verifySdJwtAgePresentation(await pid(statusAt(0)), sdJwtCheck())).toEqual({ valid: true, ageOver: 18 })
    expect(await verifySdJwtAgePresentation(await pid(statusAt(1)), sdJwtCheck())).toEqual({ valid: false, failure: 'revoked' })
    expect(await verifySdJwtAgePresentation(await pid(statusAt(2)), sdJwtCheck())).toEqual({ valid: false, failure: 'suspended' })
  })

  test('a PID whose list cannot be fetched is status_unavailable, not approved', async () => {
    expect(await verifySdJwtAgePresentation(await pid(statusAt(0, '/no-such-list')), sdJwtCheck())).toEqual({ valid: false, failure: 'status_unavailable' })
    const unreachable = { status_list: { idx: 0, uri: 'https://10.0.0.1/statuslists/1' } }
    expect(await verifySdJwtAgePresentation(await pid(unreachable), sdJwtCheck())).toEqual({ valid: false, failure: 'status_unavailable' })
  })

  test('a PID without status is checked as before, with no fetch', async () => {
    const hits = server.hits.get('/pid/list')
    expect(await verifySdJwtAgePresentation(await pid(undefined), sdJwtCheck())).toEqual({ valid: true, ageOver: 18 })
    expect(server.hits.get('/pid/list')).toBe(hits)
  })

  test('a status naming only another mechanism is status_unavailable; a status_list we cannot read is malformed', async () => {
    expect(await verifySdJwtAgePresentation(await pid({ identifier_list: { id: '0x12', uri: server.url('/ids') } }), sdJwtCheck())).toEqual({ valid: false, failure: 'status_unavailable' })
    for (const status of [{ status_list: { idx: -1, uri: server.url('/pid/list') } }, { status_list: { idx: '0', uri: server.url('/pid/list') } }, { status_list: { idx: 0 } }, 'revoked']) {
      expect(await verifySdJwtAgePresentation(await pid(status), sdJwtCheck())).toEqual({ valid: false, failure: 'malformed' })
    }
    expect(server.hits.get('/ids')).toBeUndefined()
  })

  test('attack: a credential from an untrusted issuer naming a status uri makes us fetch nothing', async () => {
    expect(await verifySdJwtAgePresentation(await pid(statusAt(0, '/attack/untrusted'), { signWith: stranger, kid: 'rogue' }), sdJwtCheck())).toEqual({ valid: false, failure: 'untrusted_issuer' })
    // The trusted issuer's kid on a stranger's signature: refused before the status is looked at.
    expect(await verifySdJwtAgePresentation(await pid(statusAt(0, '/attack/forged'), { signWith: stranger }), sdJwtCheck())).toEqual({ valid: false, failure: 'invalid_signature' })
    // A presentation that fails a local check (under the threshold, another audience) fetches nothing either.
    expect(await verifySdJwtAgePresentation(await pid(statusAt(0, '/attack/under')), sdJwtCheck({ threshold: 21 }))).toEqual({ valid: false, failure: 'under_threshold' })
    expect(await verifySdJwtAgePresentation(await pid(statusAt(0, '/attack/audience')), sdJwtCheck({ audience: 'x509_san_dns:rival.example' }))).toEqual({ valid: false, failure: 'wrong_audience' })
    for (const path of ['/attack/untrusted', '/attack/forged', '/attack/under', '/attack/audience']) expect([path, server.hits.get(path)]).toEqual([path, undefined])
  })

  test("@sd-jwt/sd-jwt-vc's own status check never runs: only our checker is asked", async () => {
    const asked: string[] = []
    const stub: Revocation = { ...revocation, status: async (reference) => (asked.push(reference.uri), 'valid') }
    expect(await verifySdJwtAgePresentation(await pid(statusAt(1, '/library/list')), sdJwtCheck({ revocation: stub }))).toEqual({ valid: true, ageOver: 18 })
    expect(asked).toEqual([server.url('/library/list')])
    expect(server.hits.get('/library/list')).toBeUndefined()
  })
})

const mdocCheck = (overrides: Partial<MdocPresentationCheck> = {}): MdocPresentationCheck => ({
  trustList,
  sessionTranscript: openId4VpSessionTranscript(REQUEST),
  docType: 'eu.europa.ec.av.1',
  threshold: 18,
  now: NOW,
  revocation,
  ...overrides,
})

async function mdoc(options: { status?: Record<string, unknown>; issuer?: MdocPki; threshold?: number } = {}): Promise<Uint8Array> {
  const issuerPki = options.issuer ?? pki
  const issued = await issueMdoc({
    signerKey: issuerPki.signer.privateKey,
    signerCertificate: issuerPki.signerPem,
    holderPublicKey: mdocHolder.publicKey,
    docType: 'eu.europa.ec.av.1',
    namespace: 'eu.europa.ec.av.1',
    ages: { '18': true, '21': false },
    validFrom: at(NOW - DAY),
    validUntil: at(NOW + 90 * DAY),
    status: options.status,
  })
  return presentMdoc(issued, { holderPrivateKey: mdocHolder.privateKey, sessionTranscript: openId4VpTranscript(REQUEST), threshold: options.threshold ?? 18 })
}

describe('verifyMdocAgePresentation with an MSO status and document signer CRLs', () => {
  test('an mdoc whose entry is VALID (CWT list) and whose signer the CRL does not list is approved', async () => {
    expect(await verifyMdocAgePresentation(await mdoc({ status: statusAt(0, '/mdoc/list') }), mdocCheck())).toEqual({ valid: true, ageOver: 18 })
  })

  test('INVALID is revoked, SUSPENDED suspended, an unreachable list status_unavailable', async () => {
    expect(await verifyMdocAgePresentation(await mdoc({ status: statusAt(1, '/mdoc/list') }), mdocCheck())).toEqual({ valid: false, failure: 'revoked' })
    expect(await verifyMdocAgePresentation(await mdoc({ status: statusAt(2, '/mdoc/list') }), mdocCheck())).toEqual({ valid: false, failure: 'suspended' })
    expect(await verifyMdocAgePresentation(await mdoc({ status: statusAt(0, '/mdoc/gone') }), mdocCheck())).toEqual({ valid: false, failure: 'status_unavailable' })
  })

  test('an mdoc signed by a revoked document signer is revoked, with or without a status', async () => {
    expect(await verifyMdocAgePresentation(await mdoc({ issuer: revokedSignerPki }), mdocCheck())).toEqual({ valid: false, failure: 'revoked' })
  })

  test("an mdoc whose signer's CRL cannot be fetched is status_unavailable", async () => {
    const lost = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY), name: 'Lost', crlDistributionPoint: server.url('/lost.crl') })
    const check = mdocCheck({ trustList: parseTrustList(lost.rootPem) })
    expect(await verifyMdocAgePresentation(await mdoc({ issuer: lost }), check)).toEqual({ valid: false, failure: 'status_unavailable' })
  })

  test('attack: an mdoc of an untrusted IACA naming a status uri and a CRL makes us fetch nothing', async () => {
    const rogue = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY), name: 'Rogue', crlDistributionPoint: server.url('/attack/rogue.crl') })
    const response = await mdoc({ issuer: rogue, status: statusAt(0, '/attack/rogue-list') })
    expect(await verifyMdocAgePresentation(response, mdocCheck())).toEqual({ valid: false, failure: 'untrusted_issuer' })
    const under = await mdoc({ status: statusAt(0, '/attack/mdoc-under'), threshold: 21 })
    expect(await verifyMdocAgePresentation(under, mdocCheck({ threshold: 21 }))).toEqual({ valid: false, failure: 'under_threshold' })
    for (const path of ['/attack/rogue.crl', '/attack/rogue-list', '/attack/mdoc-under']) expect([path, server.hits.get(path)]).toEqual([path, undefined])
  })

  test('an MSO status naming another mechanism is status_unavailable; an unreadable status_list malformed', async () => {
    expect(await verifyMdocAgePresentation(await mdoc({ status: { identifier_list: { id: new Uint8Array([1]), uri: server.url('/ids') } } }), mdocCheck())).toEqual({
      valid: false,
      failure: 'status_unavailable',
    })
    expect(await verifyMdocAgePresentation(await mdoc({ status: { status_list: { idx: -1, uri: server.url('/mdoc/list') } } }), mdocCheck())).toEqual({ valid: false, failure: 'malformed' })
  })
})
