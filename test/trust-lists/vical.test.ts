import { beforeAll, describe, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { decode, encode, Tag } from 'cbor2'
import { MAX_VICAL_BYTES, readVical } from '../../src/credentials/trust/vical.ts'
import { createMdocPki, type MdocPki } from '../credentials/pki.ts'
import {
  buildVical,
  createVicalSigner,
  encodeCertificateInfo,
  encodeVicalPayload,
  iacaEntry,
  MDL_DOCTYPE,
  signCoseSign1,
  type VicalSigner,
} from './vical-fixtures.ts'

const now = new Date('2026-03-01T12:00:00Z')
const from = new Date('2026-01-01T00:00:00Z')
const date = new Date('2026-02-28T00:00:00Z')
const nextUpdate = new Date('2026-03-07T00:00:00Z')

let signer: VicalSigner
let utopia: MdocPki
let arcadia: MdocPki

beforeAll(async () => {
  signer = await createVicalSigner({ from })
  utopia = await createMdocPki({ from, signerUntil: nextUpdate, name: 'Utopia' })
  arcadia = await createMdocPki({ from, signerUntil: nextUpdate, name: 'Arcadia' })
})

const read = (bytes: Uint8Array, roots = [signer.root], at = now) => readVical(bytes, { signerRoots: roots, now: at })
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256

describe('a VICAL signed by a trusted VICAL signer', () => {
  test('lists the IACAs put in, with their document types, country and state', async () => {
    const entries = [
      iacaEntry(utopia.rootPem, { issuingAuthority: 'Utopia DMV', stateOrProvinceName: 'UT-North' }),
      iacaEntry(arcadia.rootPem, { issuingCountry: 'AR', docTypes: [MDL_DOCTYPE, 'org.iso.23220.photoid.1'] }),
    ]
    const result = await read(await buildVical({ signer, entries, date, nextUpdate, issueId: 42, provider: 'Test DTS' }))
    if (!result.ok) throw new Error(result.reason)
    expect(result.vical).toMatchObject({ provider: 'Test DTS', issuedAt: date, nextUpdate, issueId: 42, skipped: 0 })
    expect(result.vical.entries.map((entry) => entry.certificate.fingerprint256)).toEqual([fingerprint(utopia.rootPem), fingerprint(arcadia.rootPem)])
    expect(result.vical.entries[0]).toMatchObject({ docTypes: [MDL_DOCTYPE], issuingCountry: 'UT', issuingAuthority: 'Utopia DMV', stateOrProvinceName: 'UT-North' })
    expect(result.vical.entries[1]).toMatchObject({ docTypes: [MDL_DOCTYPE, 'org.iso.23220.photoid.1'], issuingCountry: 'AR' })
  })

  test('is read tagged (COSE_Sign1, tag 18) as well as untagged', async () => {
    const bytes = await signCoseSign1({ signer, payload: encodeVicalPayload({ entries: [iacaEntry(utopia.rootPem)], date }), tagged: true })
    expect(await read(bytes)).toMatchObject({ ok: true, vical: { entries: [{ issuingCountry: 'UT' }] } })
  })

  test('is read with the whole chain in x5chain, root included (as AAMVA sends it)', async () => {
    const withRoot = await createVicalSigner({ from, includeRoot: true })
    expect(withRoot.chain).toHaveLength(2)
    const bytes = await buildVical({ signer: withRoot, entries: [iacaEntry(utopia.rootPem)], date })
    expect(await read(bytes, [withRoot.root])).toMatchObject({ ok: true })
  })

  test('is read when signed with ES384 by a P-384 signer', async () => {
    const p384 = await createVicalSigner({ from, curve: 'P-384' })
    expect(await read(await buildVical({ signer: p384, entries: [iacaEntry(utopia.rootPem)], date }), [p384.root])).toMatchObject({ ok: true })
  })

  test('without nextUpdate or vicalIssueID has neither', async () => {
    const result = await read(await buildVical({ signer, entries: [], date }))
    if (!result.ok) throw new Error(result.reason)
    expect(result.vical.nextUpdate).toBeUndefined()
    expect(result.vical.issueId).toBeUndefined()
    expect(result.vical.entries).toEqual([])
  })
})

describe('entries that are no usable IACA are skipped and counted, the rest kept', () => {
  test('a document signer certificate (not a CA) is skipped', async () => {
    const entries = [iacaEntry(utopia.signerPem), iacaEntry(arcadia.rootPem)]
    const result = await read(await buildVical({ signer, entries, date }))
    expect(result).toMatchObject({ ok: true, vical: { skipped: 1 } })
    if (result.ok) expect(result.vical.entries.map((entry) => entry.certificate.fingerprint256)).toEqual([fingerprint(arcadia.rootPem)])
  })

  test('an entry without a document type, or with no certificate that parses, is skipped', async () => {
    const entries = [
      iacaEntry(utopia.rootPem, { docTypes: [] }),
      { certificate: new TextEncoder().encode('not a certificate'), docTypes: [MDL_DOCTYPE] },
      iacaEntry(arcadia.rootPem),
    ]
    expect(await read(await buildVical({ signer, entries, date }))).toMatchObject({ ok: true, vical: { skipped: 2, entries: [{ docTypes: [MDL_DOCTYPE] }] } })
  })

  test('an entry whose docType holds something other than strings is skipped', async () => {
    const info = encodeCertificateInfo(iacaEntry(utopia.rootPem))
    info.set('docType', [MDL_DOCTYPE, 7])
    const payload = encode(new Map<string, unknown>([['version', '1.0'], ['vicalProvider', 'Test'], ['date', new Tag(0, '2026-02-28T00:00:00Z')], ['certificateInfos', [info]]]))
    expect(await read(await signCoseSign1({ signer, payload }))).toMatchObject({ ok: true, vical: { skipped: 1, entries: [] } })
  })
})

describe('the signature and its signer', () => {
  test('a payload changed by one byte after signing is invalid_signature', async () => {
    const payload = encodeVicalPayload({ entries: [iacaEntry(utopia.rootPem)], date })
    const altered = payload.slice()
    altered[altered.length - 1]! ^= 0x01
    expect(await read(await signCoseSign1({ signer, payload: altered, signedPayload: payload }))).toEqual({ ok: false, reason: 'invalid_signature' })
  })

  test('a byte flipped in the signature is invalid_signature', async () => {
    const bytes = await buildVical({ signer, entries: [iacaEntry(utopia.rootPem)], date })
    bytes[bytes.length - 10]! ^= 0x80
    expect(await read(bytes)).toEqual({ ok: false, reason: 'invalid_signature' })
  })

  test('the payload is not read before the signature holds: unsigned garbage is invalid_signature, not malformed', async () => {
    const garbage = new Uint8Array(1000).fill(0x81)
    const bytes = await signCoseSign1({ signer, payload: garbage, signedPayload: encodeVicalPayload({ entries: [], date }) })
    expect(await read(bytes)).toEqual({ ok: false, reason: 'invalid_signature' })
  })

  test('a signer whose chain leads to another root is untrusted_signer', async () => {
    const stranger = await createVicalSigner({ from, name: 'Someone else' })
    expect(await read(await buildVical({ signer: stranger, entries: [iacaEntry(utopia.rootPem)], date }))).toEqual({ ok: false, reason: 'untrusted_signer' })
  })

  test('a signer certificate without the VICAL signer key usage (1.0.18013.5.1.8) is untrusted_signer', async () => {
    const documentSigner = await createVicalSigner({ from, keyUsages: ['1.0.18013.5.1.2'] })
    const noUsage = await createVicalSigner({ from, keyUsages: [] })
    for (const other of [documentSigner, noUsage]) {
      expect(await read(await buildVical({ signer: other, entries: [], date }), [other.root])).toEqual({ ok: false, reason: 'untrusted_signer' })
    }
  })

  test('a signer certificate past its validity is expired, as checkCertificateChain says of any chain', async () => {
    const lapsed = await createVicalSigner({ from, signerUntil: new Date('2026-02-01T00:00:00Z') })
    expect(await read(await buildVical({ signer: lapsed, entries: [], date }), [lapsed.root])).toEqual({ ok: false, reason: 'expired' })
  })

  test('a signer certificate not yet valid is expired', async () => {
    expect(await read(await buildVical({ signer, entries: [], date }), [signer.root], new Date('2025-12-31T00:00:00Z'))).toEqual({ ok: false, reason: 'expired' })
  })

  test('ES384 named over a P-256 key is invalid_signature: the curve goes with the algorithm', async () => {
    const bytes = await signCoseSign1({ signer, payload: encodeVicalPayload({ entries: [], date }), protectedHeader: new Map([[1, -35]]) })
    expect(await read(bytes)).toEqual({ ok: false, reason: 'invalid_signature' })
  })
})

describe('a stale VICAL', () => {
  test('past its nextUpdate is expired: a newer list has replaced it', async () => {
    const bytes = await buildVical({ signer, entries: [iacaEntry(utopia.rootPem)], date, nextUpdate })
    expect(await read(bytes, [signer.root], new Date('2026-03-07T00:00:01Z'))).toEqual({ ok: false, reason: 'expired' })
    expect(await read(bytes, [signer.root], new Date('2026-03-06T23:59:59Z'))).toMatchObject({ ok: true })
  })
})

describe('what is no signed VICAL is malformed, and reading it never throws', () => {
  const payload = () => encodeVicalPayload({ entries: [iacaEntry(utopia.rootPem)], date })

  test('a protected header without alg, with alg "none", HS256 (5) or EdDSA (-8) is malformed', async () => {
    for (const header of [new Map(), new Map([[1, 'none']]), new Map([[1, 5]]), new Map([[1, -8]])]) {
      expect(await read(await signCoseSign1({ signer, payload: payload(), protectedHeader: header }))).toEqual({ ok: false, reason: 'malformed' })
    }
  })

  test('alg in the unprotected header only is malformed: the signature must cover it', async () => {
    const bytes = await signCoseSign1({ signer, payload: payload(), protectedHeader: new Map(), unprotectedHeader: new Map<number, unknown>([[1, -7], [33, signer.chain[0]]]) })
    expect(await read(bytes)).toEqual({ ok: false, reason: 'malformed' })
  })

  test('a critical header (crit, 2) is malformed: none is understood', async () => {
    const bytes = await signCoseSign1({ signer, payload: payload(), protectedHeader: new Map<number, unknown>([[1, -7], [2, [99]], [99, true]]) })
    expect(await read(bytes)).toEqual({ ok: false, reason: 'malformed' })
  })

  test('without x5chain, or with an empty one, is malformed', async () => {
    for (const header of [new Map(), new Map([[33, []]]), new Map([[33, 'MIIB...']])]) {
      expect(await read(await signCoseSign1({ signer, payload: payload(), unprotectedHeader: header }))).toEqual({ ok: false, reason: 'malformed' })
    }
  })

  test('a detached payload (nil) is malformed', async () => {
    expect(await read(await signCoseSign1({ signer, payload: null, signedPayload: payload() }))).toEqual({ ok: false, reason: 'malformed' })
  })

  test('a signed payload that is no VICAL (no certificateInfos, a date as plain text, a negative issue id) is malformed', async () => {
    const base = () => new Map<string, unknown>([['version', '1.0'], ['vicalProvider', 'Test'], ['date', new Tag(0, '2026-02-28T00:00:00Z')], ['certificateInfos', []]])
    const broken = [new Map([...base()].filter(([key]) => key !== 'certificateInfos')), new Map([...base(), ['date', '2026-02-28T00:00:00Z']]), new Map([...base(), ['vicalIssueID', -1]]), ['a VICAL is a map']]
    for (const vical of broken) expect(await read(await signCoseSign1({ signer, payload: encode(vical) }))).toEqual({ ok: false, reason: 'malformed' })
  })

  test('a signed payload nested deeper than any VICAL is malformed', async () => {
    let extension: unknown = 'deep'
    for (let i = 0; i < 100; i++) extension = [extension]
    const vical = new Map<string, unknown>([['version', '1.0'], ['vicalProvider', 'Test'], ['date', new Tag(0, '2026-02-28T00:00:00Z')], ['certificateInfos', []], ['extensions', extension]])
    expect(await read(await signCoseSign1({ signer, payload: encode(vical) }))).toEqual({ ok: false, reason: 'malformed' })
  })

  test('bytes that are not CBOR, truncated, trailed, nested a million deep or claiming four billion items are malformed', async () => {
    const valid = await buildVical({ signer, entries: [iacaEntry(utopia.rootPem)], date })
    const hostile = [
      new Uint8Array(),
      new TextEncoder().encode('-----BEGIN CERTIFICATE-----'),
      valid.subarray(0, valid.length - 1),
      valid.subarray(0, 40),
      Uint8Array.from([...valid, 0x00]),
      new Uint8Array(1_000_000).fill(0x81),
      Uint8Array.from([0x9a, 0xff, 0xff, 0xff, 0xff]),
      Uint8Array.from([0x84, 0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
      Uint8Array.from([0x9f, 0x40, 0xa0, 0x40, 0x40, 0xff]),
      // Tag 28 (a cbor-x shared reference) where a COSE_Sign1 should be.
      Uint8Array.from([0xd8, 0x1c, 0x84, 0x40, 0xa0, 0x40, 0x40]),
      encode(new Tag(17, [new Uint8Array(), new Map(), new Uint8Array(), new Uint8Array()])),
    ]
    for (const bytes of hostile) expect(await read(bytes)).toEqual({ ok: false, reason: 'malformed' })
  })

  test('bytes over MAX_VICAL_BYTES are malformed before they are decoded', async () => {
    expect(MAX_VICAL_BYTES).toBe(16 * 1024 * 1024)
    const started = performance.now()
    expect(await read(new Uint8Array(MAX_VICAL_BYTES + 1))).toEqual({ ok: false, reason: 'malformed' })
    expect(performance.now() - started).toBeLessThan(100)
  })
})

/**
 * Published VICALs, when a copy lies in test/trust-lists/external/ (not committed: AAMVA's list is used under the
 * terms of its Digital Trust Service, and neither provider states a licence for redistribution). Both were
 * found in walt-id/waltid-identity (Apache-2.0), commit 46dce804b3eb3b7943fc90e6094d34670445a715,
 * waltid-libraries/credentials/waltid-vical/src/jvmTest/resources/: vicals/aamva.cbor (AAMVA, vicalIssueID 89782,
 * 2025-08-05, 13 issuers) and vicals/austroads.cbor with root-certificates/austroads_root-certificate.pem
 * (Austroads pre-production, vicalIssueID 27, 2024-12-17, 40 issuers). Their signatures were made by software
 * other than ours: reading them checks our Sig_structure, x5chain and payload reading against the real thing.
 */
const external = (name: string) => `${import.meta.dir}/external/${name}`
const bytesOf = (name: string) => new Uint8Array(readFileSync(external(name)))

describe('published VICALs', () => {
  test.skipIf(!existsSync(external('aamva.cbor')))('AAMVA: signed by AAMVA Prod Vical-Signer-01 under the AAMVA DTS Root CA it carries, 13 mDL issuers', async () => {
    const bytes = bytesOf('aamva.cbor')
    const x5chain = (decode(bytes) as [Uint8Array, Map<number, Uint8Array[]>])[1].get(33)!
    const root = new X509Certificate(x5chain.at(-1)!)
    expect(root.subject).toContain('CN=AAMVA DTS Root CA')
    const result = await readVical(bytes, { signerRoots: [root], now: new Date('2025-08-06T00:00:00Z') })
    if (!result.ok) throw new Error(result.reason)
    expect(result.vical).toMatchObject({ provider: 'AAMVA', issueId: 89782, skipped: 0, nextUpdate: new Date('2025-08-06T20:47:21Z') })
    expect(result.vical.entries).toHaveLength(13)
    expect(result.vical.entries[0]).toMatchObject({ docTypes: [MDL_DOCTYPE], issuingCountry: 'US', stateOrProvinceName: 'US-MD' })
    expect(await readVical(bytes, { signerRoots: [root], now: new Date('2025-08-07T00:00:00Z') })).toEqual({ ok: false, reason: 'expired' })
  })

  test.skipIf(!existsSync(external('austroads.cbor')))('Austroads: a lone signer certificate as x5chain, under the published root, 40 issuers', async () => {
    const root = new X509Certificate(readFileSync(external('austroads_root-certificate.pem')))
    const result = await readVical(bytesOf('austroads.cbor'), { signerRoots: [root], now: new Date('2025-01-01T00:00:00Z') })
    expect(result).toMatchObject({ ok: true, vical: { provider: 'Austroads', issueId: 27, skipped: 0 } })
    if (result.ok) expect(result.vical.entries).toHaveLength(40)
  })
})
