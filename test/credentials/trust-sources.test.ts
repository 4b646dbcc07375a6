import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { runCommand } from '../../src/cli/run.ts'
import { issueDevMdoc, presentDevMdoc } from '../../src/credentials/dev/mdoc.ts'
import { verifyMdocAgePresentation } from '../../src/credentials/iso-mdoc/verify.ts'
import { openId4VpSessionTranscript } from '../../src/credentials/openid4vp/session-transcript.ts'
import { checkCertificateChain, type TrustList } from '../../src/credentials/trust/trust-list.ts'
import { listTrustSources } from '../../src/credentials/trust/trust-sources.ts'
import { trustAnchors } from '../../src/db/schema.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { derOf, offlineRevocation } from './status-fixtures.ts'
import { createMdocPki, generateP256KeyPair, type KeyPair, type MdocPki } from './pki.ts'
import { buildEtsiTrustedList, createListSigner, type ListSigner } from '../trust-lists/etsi-fixtures.ts'
import { AGE_VERIFICATION_PROVIDER_SERVICE_TYPE, GRANTED_STATUS, PID_PROVIDER_SERVICE_TYPE } from '../../src/credentials/trust/etsi-trusted-list.ts'
import { buildVical, createVicalSigner, iacaEntry, MDL_DOCTYPE, type VicalSigner } from '../trust-lists/vical-fixtures.ts'

/**
 * Published lists put in force (`ofage trust import|list|remove|refresh`): verified before anything changes,
 * scoped to what the list vouches for, replaced whole, never replaced by a worse or older copy, and in force on
 * the running service without a restart. The lists are made here by the test fixtures (cbor2 + WebCrypto), not
 * by the verifier's code.
 */

const DAY = 86_400_000
let dir: string
let context: TestContext
let provider: VicalSigner
let rogueProvider: VicalSigner
let iaca: MdocPki
let otherIaca: MdocPki
let holder: KeyPair
let staticRoot: MdocPki
let listSigner: ListSigner
/** Issuers named in the ETSI list: a PID provider, an age-verification provider, a withdrawn PID provider, a CA for signatures. */
let listed: Record<'pid' | 'av' | 'withdrawn' | 'qes', MdocPki>
let server: ReturnType<typeof Bun.serve>
/** What the local "publisher" serves at /vical, changed by each test. */
let published: Uint8Array = new Uint8Array()

const file = (name: string, content: string | Uint8Array) => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

async function cli(...argv: string[]) {
  const out: string[] = []
  const status = await runCommand({ deps: context.deps, close: async () => {} }, argv, { out: (text) => out.push(text), err: (text) => out.push(text) })
  return { status, output: out.join('\n') }
}

const vical = (entries: MdocPki[], fields: { issueId?: number; signer?: VicalSigner; docTypes?: string[] } = {}) =>
  buildVical({
    signer: fields.signer ?? provider,
    entries: entries.map((pki) => iacaEntry(pki.rootPem, { docTypes: fields.docTypes ?? [MDL_DOCTYPE] })),
    date: new Date(context.clock.now().getTime() - DAY),
    nextUpdate: new Date(context.clock.now().getTime() + 7 * DAY),
    issueId: fields.issueId ?? 10,
  })

/** A copy with one bit flipped inside the signed payload (80 bytes from the end: past the signature's 64). */
function flipped(bytes: Uint8Array): Uint8Array {
  const copy = Uint8Array.from(bytes)
  copy[copy.length - 80]! ^= 0x01
  return copy
}

const trust = (): Promise<TrustList> => context.deps.credentials!.trust.current()

/** Waits for a NOTIFY to reach the store: the trust in force until `ready` says it changed (bounded). */
async function eventually(ready: (list: TrustList) => boolean): Promise<TrustList> {
  for (let i = 0; i < 100; i++) {
    const list = await trust()
    if (ready(list)) return list
    await Bun.sleep(20)
  }
  return trust()
}

const REQUEST = { clientId: 'x509_hash:test', nonce: 'n-trust', responseUri: 'https://age.example/response' }

/** An mDL or EU AV mdoc issued by `pki` and presented over our transcript, verified with the trust in force. */
async function verifyWith(pki: MdocPki, docType: 'org.iso.18013.5.1.mDL' | 'eu.europa.ec.av.1') {
  const now = context.clock.now()
  const issued = await issueDevMdoc({
    signerKey: pki.signer.privateKey,
    signerCertificate: pki.signerPem,
    holderPublicKey: holder.publicKey,
    docType,
    ages: { '18': true },
    validFrom: new Date(now.getTime() - DAY),
    validUntil: new Date(now.getTime() + 30 * DAY),
  })
  const sessionTranscript = openId4VpSessionTranscript(REQUEST)
  const response = await presentDevMdoc(issued, { holderPrivateKey: holder.privateKey, sessionTranscript, threshold: 18 })
  return verifyMdocAgePresentation(response, { trustList: await trust(), sessionTranscript, docType, threshold: 18, now: Math.floor(now.getTime() / 1000), revocation: offlineRevocation(now) })
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ofage-trust-'))
  const from = new Date('2026-10-01T00:00:00Z')
  ;[provider, rogueProvider, iaca, otherIaca, staticRoot, holder] = await Promise.all([
    createVicalSigner({ from }),
    createVicalSigner({ from, name: 'Rogue VICAL provider' }),
    createMdocPki({ from, signerUntil: new Date('2027-10-01T00:00:00Z'), name: 'State A' }),
    createMdocPki({ from, signerUntil: new Date('2027-10-01T00:00:00Z'), name: 'State B' }),
    createMdocPki({ from, signerUntil: new Date('2027-10-01T00:00:00Z'), name: 'Static' }),
    generateP256KeyPair(),
  ])
  listSigner = await createListSigner({ from, until: new Date('2028-01-01T00:00:00Z') })
  const issuers = await Promise.all(['pid', 'av', 'withdrawn', 'qes'].map((name) => createMdocPki({ from, signerUntil: new Date('2027-10-01T00:00:00Z'), name })))
  listed = { pid: issuers[0]!, av: issuers[1]!, withdrawn: issuers[2]!, qes: issuers[3]! }
  server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(Buffer.from(published), { headers: { 'content-type': 'application/cbor' } }) })
  context = await createTestContext({
    env: {
      CREDENTIAL_TRUST_LIST: file('static.pem', staticRoot.rootPem),
      CREDENTIAL_VICAL_SIGNER_FILE: file('vical-signer.pem', provider.rootPem),
      CREDENTIAL_TRUSTED_LIST_SIGNER_FILE: file('tl-signer.pem', listSigner.certificate.toString()),
    },
  })
})

afterAll(async () => {
  server.stop(true)
  await context.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('ofage trust import --vical', () => {
  test('a signed VICAL puts its IACAs in force at once, for the doc types it names, beside the static file', async () => {
    expect(await verifyWith(iaca, MDL_DOCTYPE)).toEqual({ valid: false, failure: 'untrusted_issuer' })
    const { status, output } = await cli('trust', 'import', '--vical', file('aamva.vical', await vical([iaca])))
    expect({ status, output }).toMatchObject({ status: 0 })
    expect(output).toContain('1 roots from Test VICAL provider')
    await eventually((list) => (list.anchors ?? []).length === 1)
    expect(await verifyWith(iaca, MDL_DOCTYPE)).toEqual({ valid: true, ageOver: 18 })
    // The VICAL vouches for this IACA's mDLs only: not for another doc type, nor for an SD-JWT's chain.
    expect(await verifyWith(iaca, 'eu.europa.ec.av.1')).toEqual({ valid: false, failure: 'untrusted_issuer' })
    const der = [derOf(iaca.signerPem), derOf(iaca.rootPem)]
    expect(checkCertificateChain(await trust(), der, context.clock.now(), { format: 'sd-jwt' })).toEqual({ trusted: false, failure: 'untrusted' })
    // The static file's roots stay in force for every format.
    expect(await verifyWith(staticRoot, 'eu.europa.ec.av.1')).toEqual({ valid: true, ageOver: 18 })
  })

  test('a tampered VICAL is refused, and the trust in force is untouched', async () => {
    const before = await listTrustSources(context.deps.db)
    const good = await vical([iaca, otherIaca], { issueId: 11 })
    const tampered = flipped(good)
    const location = before[0]!.location
    writeFileSync(location, tampered)
    const { status, output } = await cli('trust', 'import', '--vical', location)
    expect(status).toBe(1)
    expect(output).toContain('its signature does not hold')
    expect(output).toContain('The trust in force is unchanged')
    expect(await listTrustSources(context.deps.db)).toEqual(before)
    expect(await verifyWith(otherIaca, MDL_DOCTYPE)).toEqual({ valid: false, failure: 'untrusted_issuer' })
    expect(await verifyWith(iaca, MDL_DOCTYPE)).toEqual({ valid: true, ageOver: 18 })
  })

  test('a VICAL signed by another provider than the configured one is refused', async () => {
    const { status, output } = await cli('trust', 'import', '--vical', file('rogue.vical', await vical([otherIaca], { signer: rogueProvider })))
    expect(status).toBe(1)
    expect(output).toContain('not signed by the configured list signer')
    expect((await listTrustSources(context.deps.db)).map((s) => s.location)).not.toContain(join(dir, 'rogue.vical'))
  })

  test('a command line naming both kinds, or neither, is a usage error', async () => {
    expect((await cli('trust', 'import', '--vical', 'a', '--etsi-tl', 'b')).status).toBe(2)
    expect((await cli('trust', 'import')).status).toBe(2)
  })
})

describe('ofage trust refresh: a URL source read again', () => {
  let id: string

  test('imported from an address, its roots are in force', async () => {
    published = await vical([iaca], { issueId: 20 })
    const { status, output } = await cli('trust', 'import', '--vical', `http://127.0.0.1:${server.port}/vical`, '--json')
    expect({ status, output: status === 0 ? '' : output }).toEqual({ status: 0, output: '' })
    id = JSON.parse(output).source_id
  })

  test('a refresh that reads a tampered, foreign or older list keeps the copy in force and says why', async () => {
    const anchorsBefore = await context.deps.db.select().from(trustAnchors).where(eq(trustAnchors.sourceId, id))
    const cases: [Uint8Array, string][] = [
      [flipped(await vical([iaca, otherIaca], { issueId: 21 })), 'signature does not hold'],
      [await vical([otherIaca], { issueId: 21, signer: rogueProvider }), 'not signed by the configured list signer'],
      [await vical([otherIaca], { issueId: 19 }), 'older than 20 in force'],
      [new TextEncoder().encode('<html>maintenance</html>'), 'not a readable list'],
    ]
    for (const [bytes, why] of cases) {
      published = bytes
      const { status, output } = await cli('trust', 'refresh')
      expect(status).toBe(0)
      expect(output).toContain(`${id}  kept the copy in force`)
      expect(output).toContain(why)
      expect(await context.deps.db.select().from(trustAnchors).where(eq(trustAnchors.sourceId, id))).toEqual(anchorsBefore)
    }
    const listed = JSON.parse((await cli('trust', 'list', '--json')).output).find((s: { source_id: string }) => s.source_id === id)
    expect(listed.last_error).toContain('not a readable list')
  })

  test('a refresh that reads a newer good list replaces the roots whole, and clears the error', async () => {
    published = await vical([otherIaca], { issueId: 22 })
    expect((await cli('trust', 'refresh')).output).toContain(`${id}  refreshed`)
    const rows = await context.deps.db.select().from(trustAnchors).where(eq(trustAnchors.sourceId, id))
    expect(rows.map((row) => row.label)).toEqual(['UT'])
    expect(rows.map((row) => row.fingerprint)).toEqual([new Bun.CryptoHasher('sha256').update(derOf(otherIaca.rootPem)).digest('hex')])
    expect((await listTrustSources(context.deps.db)).find((s) => s.id === id)?.lastError).toBeNull()
  })

  test('removing a source withdraws its roots from the running service', async () => {
    await eventually((list) => (list.anchors ?? []).length === 2)
    expect(await verifyWith(otherIaca, MDL_DOCTYPE)).toEqual({ valid: true, ageOver: 18 })
    expect((await cli('trust', 'remove', id)).status).toBe(0)
    await eventually((list) => (list.anchors ?? []).length === 1)
    expect(await verifyWith(otherIaca, MDL_DOCTYPE)).toEqual({ valid: false, failure: 'untrusted_issuer' })
    expect((await cli('trust', 'remove', id)).status).toBe(1)
  })
})

describe('ofage trust import --etsi-tl', () => {
  const WITHDRAWN = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn'
  const QES_CA = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC'
  const pem = (pki: MdocPki) => ({ base64: Buffer.from(derOf(pki.rootPem)).toString('base64') })
  const list = () =>
    buildEtsiTrustedList({
      signer: listSigner,
      nextUpdate: new Date(context.clock.now().getTime() + 90 * DAY),
      issuedAt: new Date(context.clock.now().getTime() - DAY),
      services: [
        { serviceType: PID_PROVIDER_SERVICE_TYPE, status: GRANTED_STATUS, name: 'PID provider', certificates: [pem(listed.pid)] },
        { serviceType: AGE_VERIFICATION_PROVIDER_SERVICE_TYPE, status: GRANTED_STATUS, name: 'Age attestations', certificates: [pem(listed.av)] },
        { serviceType: PID_PROVIDER_SERVICE_TYPE, status: WITHDRAWN, name: 'Former PID provider', certificates: [pem(listed.withdrawn)] },
        { serviceType: QES_CA, status: GRANTED_STATUS, name: 'Signature CA', certificates: [pem(listed.qes)] },
      ],
    })

  test('a signed trusted list puts its granted PID and age-verification providers in force, and nothing else it lists', async () => {
    const { status, output } = await cli('trust', 'import', '--etsi-tl', file('eu.xml', await list()))
    expect({ status, output: status === 0 ? '' : output }).toEqual({ status: 0, output: '' })
    expect(output).toContain('2 roots from trusted list of EU')
    await eventually((list) => (list.anchors ?? []).length === 3)
    expect(await verifyWith(listed.pid, 'eu.europa.ec.av.1')).toEqual({ valid: true, ageOver: 18 })
    expect(await verifyWith(listed.av, MDL_DOCTYPE)).toEqual({ valid: true, ageOver: 18 })
    expect(await verifyWith(listed.withdrawn, 'eu.europa.ec.av.1')).toEqual({ valid: false, failure: 'untrusted_issuer' })
    expect(await verifyWith(listed.qes, 'eu.europa.ec.av.1')).toEqual({ valid: false, failure: 'untrusted_issuer' })
  })

  test('a list whose withdrawn provider was turned back to granted is refused, and the trust in force is untouched', async () => {
    const before = await listTrustSources(context.deps.db)
    const tampered = (await list()).replace(WITHDRAWN, GRANTED_STATUS)
    const { status, output } = await cli('trust', 'import', '--etsi-tl', file('eu.xml', tampered))
    expect(status).toBe(1)
    expect(output).toContain('its signature does not hold')
    expect(await listTrustSources(context.deps.db)).toEqual(before)
    expect(await verifyWith(listed.withdrawn, 'eu.europa.ec.av.1')).toEqual({ valid: false, failure: 'untrusted_issuer' })
  })

  test('an import without the list signer configured says which setting is missing', async () => {
    const bare = { ...context.deps, config: { ...context.deps.config, trust: { ...context.deps.config.trust, trustedListSignerFile: undefined } } }
    const out: string[] = []
    const status = await runCommand({ deps: bare, close: async () => {} }, ['trust', 'import', '--etsi-tl', join(dir, 'eu.xml')], { out: (t) => out.push(t), err: (t) => out.push(t) })
    expect(status).toBe(1)
    expect(out.join('\n')).toContain('CREDENTIAL_TRUSTED_LIST_SIGNER_FILE is not set')
  })
})

describe('the static trust list', () => {
  test('an edit is read without a restart; an edit that breaks it keeps the last good copy', async () => {
    const path = join(dir, 'static.pem')
    writeFileSync(path, `${staticRoot.rootPem}\n${otherIaca.rootPem}`)
    context.deps.credentials!.trust.invalidate()
    expect((await trust()).roots.length).toBe(2)
    writeFileSync(path, '-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n')
    context.deps.credentials!.trust.invalidate()
    expect((await trust()).roots.length).toBe(2)
  })
})
