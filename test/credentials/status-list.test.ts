import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { deflateSync, inflateSync } from 'node:zlib'
import { ES256 } from '@sd-jwt/crypto-nodejs'
import { createStatusChecker, MAX_CACHE_S, MIN_CACHE_S, type StatusOutcome } from '../../src/credentials/status/status-check.ts'
import { statusAt } from '../../src/credentials/status/status-list.ts'
import { parseTrustList, type TrustList } from '../../src/credentials/trust/trust-list.ts'
import { createMdocPki, type MdocPki } from './pki.ts'
import { derOf, packStatuses, signStatusListCwt, signStatusListJwt, startStatusServer, type Keys, type ListClaims, type StatusServer } from './status-fixtures.ts'

/**
 * Token Status Lists (draft-ietf-oauth-status-list), served by a local server and read by the checker: the
 * lists are packed from §4.1, deflated with node:zlib and signed with jose (JWT) or cbor2 and WebCrypto (CWT).
 */
const NOW = 1_795_000_000
const KID = 'pid-issuer-1'
// idx:          0  1  2  3  4  5
const STATUSES = [0, 1, 2, 3, 0, 0]

let issuer: Keys
let stranger: Keys
let pki: MdocPki
let trustList: TrustList
let server: StatusServer
let clock = NOW * 1000

beforeAll(async () => {
  ;[issuer, stranger] = (await Promise.all([ES256.generateKeyPair(), ES256.generateKeyPair()])) as [Keys, Keys]
  pki = await createMdocPki({ from: new Date((NOW - 30 * 86_400) * 1000), signerUntil: new Date((NOW + 365 * 86_400) * 1000) })
  trustList = parseTrustList(`${pki.rootPem}\n${JSON.stringify({ keys: [{ ...issuer.publicKey, kid: KID }] })}`)
  server = startStatusServer()
})
afterAll(() => server.stop())

const claims = (path: string, overrides: Partial<ListClaims> = {}): ListClaims => ({ statuses: STATUSES, bits: 2, sub: server.url(path), iat: NOW - 60, exp: NOW + 3600, ttl: 600, ...overrides })
const jwtList = (path: string, overrides: Partial<ListClaims> = {}, key = issuer) => signStatusListJwt(claims(path, overrides), key.privateKey, { kid: KID })
const cwtList = (path: string, overrides: Partial<ListClaims> = {}) => signStatusListCwt(claims(path, overrides), pki.signer.privateKey, [derOf(pki.signerPem)])

function checker(options: { maxEntries?: number } = {}) {
  const outcomes: StatusOutcome[] = []
  const check = createStatusChecker({
    trustList: () => trustList,
    now: () => new Date(clock),
    fetch: { allowLoopback: true, timeoutMs: 500, maxBytes: 64 * 1024 },
    onOutcome: (outcome) => outcomes.push(outcome),
    ...options,
  })
  return { check, outcomes }
}

describe('the status list byte array (draft-ietf-oauth-status-list §4.1)', () => {
  test("reads the draft's 1-bit example: 0xB9 0xA3 are statuses 1,0,0,1,1,1,0,1,1,1,0,0,0,1,0,1", () => {
    const bytes = new Uint8Array(inflateSync(Buffer.from('eNrbuRgAAhcBXQ', 'base64url')))
    expect([...bytes]).toEqual([0xb9, 0xa3])
    expect(Array.from({ length: 16 }, (_, idx) => statusAt({ bits: 1, bytes }, idx))).toEqual([1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1])
  })

  test("reads the draft's 2-bit example: 0xC9 0x44 0xF9 are statuses 1,2,0,3,0,1,0,1,1,2,3,3", () => {
    const bytes = new Uint8Array(inflateSync(Buffer.from('eNo76fITAAPfAgc', 'base64url')))
    expect(Array.from({ length: 12 }, (_, idx) => statusAt({ bits: 2, bytes }, idx))).toEqual([1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3])
    // The tests' packer writes the draft's bytes, so the lists below mean what they say.
    expect([...packStatuses([1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3], 2)]).toEqual([0xc9, 0x44, 0xf9])
  })

  test('4 and 8 bits; an index past the end has no status', () => {
    expect([statusAt({ bits: 4, bytes: new Uint8Array([0x21]) }, 0), statusAt({ bits: 4, bytes: new Uint8Array([0x21]) }, 1)]).toEqual([1, 2])
    expect(statusAt({ bits: 8, bytes: new Uint8Array([0, 0xff]) }, 1)).toBe(255)
    expect(statusAt({ bits: 1, bytes: new Uint8Array([0xff]) }, 8)).toBeUndefined()
    expect(statusAt({ bits: 1, bytes: new Uint8Array([0xff]) }, Number.MAX_SAFE_INTEGER)).toBeUndefined()
  })
})

describe('createStatusChecker, JWT lists (SD-JWT VC)', () => {
  test('VALID, INVALID and SUSPENDED entries are valid, invalid and suspended; any other value is invalid', async () => {
    server.route('/jwt/1', await jwtList('/jwt/1'))
    const { check, outcomes } = checker()
    const verdicts = await Promise.all([0, 1, 2, 3].map((idx) => check({ idx, uri: server.url('/jwt/1') }, 'jwt')))
    expect(verdicts).toEqual(['valid', 'invalid', 'suspended', 'invalid'])
    expect(outcomes.sort()).toEqual(['invalid', 'suspended', 'unknown_status', 'valid'])
  })

  test('an index outside the list is unavailable: the issuer’s list does not cover its own credential', async () => {
    server.route('/jwt/short', await jwtList('/jwt/short'))
    const { check, outcomes } = checker()
    // Six 2-bit statuses fill two bytes: indexes 6 and 7 are padding inside the list, 8 is past it.
    expect(await check({ idx: 7, uri: server.url('/jwt/short') }, 'jwt')).toBe('valid')
    expect(await check({ idx: 8, uri: server.url('/jwt/short') }, 'jwt')).toBe('unavailable')
    expect(outcomes).toEqual(['valid', 'index_out_of_range'])
  })

  test('a list signed by a key the trust list does not hold, or for another uri, or of another type, is unavailable', async () => {
    server.route('/jwt/stranger', await jwtList('/jwt/stranger', {}, stranger))
    server.route('/jwt/other-sub', await jwtList('/jwt/other-sub', { sub: server.url('/jwt/1') }))
    server.route('/jwt/unsigned', `${Buffer.from('{"alg":"none","typ":"statuslist+jwt"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: server.url('/jwt/unsigned'), iat: NOW, status_list: { bits: 1, lst: 'eNrbuRgAAhcBXQ' } })).toString('base64url')}.`)
    const notAList = await signStatusListJwt(claims('/jwt/typ'), issuer.privateKey, { kid: KID, typ: 'JWT' })
    server.route('/jwt/typ', notAList)
    const { check, outcomes } = checker()
    for (const path of ['/jwt/stranger', '/jwt/other-sub', '/jwt/unsigned', '/jwt/typ']) expect([path, await check({ idx: 0, uri: server.url(path) }, 'jwt')]).toEqual([path, 'unavailable'])
    // alg "none" names no trusted key: untrusted, like any other signer we do not know.
    expect(outcomes).toEqual(['untrusted_list', 'untrusted_list', 'untrusted_list', 'malformed_list'])
  })

  test('an expired list, or one issued in the future, is unavailable', async () => {
    server.route('/jwt/expired', await jwtList('/jwt/expired', { exp: NOW - 120 }))
    server.route('/jwt/future', await jwtList('/jwt/future', { iat: NOW + 3600 }))
    const { check, outcomes } = checker()
    expect(await check({ idx: 0, uri: server.url('/jwt/expired') }, 'jwt')).toBe('unavailable')
    expect(await check({ idx: 0, uri: server.url('/jwt/future') }, 'jwt')).toBe('unavailable')
    expect(outcomes).toEqual(['expired_list', 'expired_list'])
  })

  test('a zip bomb (a few kilobytes inflating past the bound) is refused without inflating it all', async () => {
    // 16 MiB of zeros, four times the bound, in about 16 KB: well under the response limit of 64 KiB.
    const bomb = deflateSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 })
    expect(bomb.length).toBeLessThan(32 * 1024)
    server.route('/jwt/bomb', await jwtList('/jwt/bomb', { lst: bomb }))
    server.route('/jwt/garbage', await jwtList('/jwt/garbage', { lst: new Uint8Array([1, 2, 3]) }))
    server.route('/jwt/bits', await jwtList('/jwt/bits', { bits: 3 as never }))
    const { check, outcomes } = checker()
    for (const path of ['/jwt/bomb', '/jwt/garbage', '/jwt/bits']) expect(await check({ idx: 0, uri: server.url(path) }, 'jwt')).toBe('unavailable')
    expect(outcomes).toEqual(['malformed_list', 'malformed_list', 'malformed_list'])
  })

  test('unreachable, slow, huge, non-2xx and redirected-away lists are unavailable', async () => {
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const closedUri = `http://127.0.0.1:${closed.port}/list`
    await closed.stop(true)
    server.route('/jwt/slow', () => new Response(new ReadableStream({ pull: async (controller) => void (await Bun.sleep(100), controller.enqueue(new Uint8Array(1))) })))
    server.route('/jwt/huge', new Uint8Array(200_000))
    server.route('/jwt/away', () => Response.redirect(server.url('/jwt/1').replace('127.0.0.1', 'localhost'), 302))
    server.route('/jwt/private', () => Response.redirect('http://10.0.0.1/list', 302))
    server.route('/jwt/metadata', () => Response.redirect('http://169.254.169.254/latest/meta-data/', 302))
    const { check, outcomes } = checker()
    const uris = [closedUri, ...['/jwt/slow', '/jwt/huge', '/nowhere', '/jwt/away', '/jwt/private', '/jwt/metadata'].map(server.url)]
    for (const uri of uris) expect([uri, await check({ idx: 0, uri }, 'jwt')]).toEqual([uri, 'unavailable'])
    expect(outcomes).toEqual(['unreachable', 'timeout', 'too_large', 'http_status', 'refused_url', 'refused_url', 'refused_url'])
  })

  test('https to a private address is refused without connecting', async () => {
    const { check, outcomes } = checker()
    expect(await check({ idx: 0, uri: 'https://10.0.0.1/statuslists/1' }, 'jwt')).toBe('unavailable')
    expect(await check({ idx: 0, uri: 'https://169.254.169.254/latest/meta-data/' }, 'jwt')).toBe('unavailable')
    expect(outcomes).toEqual(['refused_address', 'refused_address'])
  })
})

describe('createStatusChecker, CWT lists (mdoc)', () => {
  test('a list signed by a document signer of a trusted IACA (x5chain) is read like a JWT one', async () => {
    server.route('/cwt/1', await cwtList('/cwt/1'))
    const { check } = checker()
    expect(await Promise.all([0, 1, 2, 3].map((idx) => check({ idx, uri: server.url('/cwt/1') }, 'cwt')))).toEqual(['valid', 'invalid', 'suspended', 'invalid'])
  })

  test('a CWT list of an untrusted chain, another subject, expired, or read as the other form, is unavailable', async () => {
    const rogue = await createMdocPki({ from: new Date((NOW - 30 * 86_400) * 1000), signerUntil: new Date((NOW + 365 * 86_400) * 1000), name: 'Rogue' })
    server.route('/cwt/rogue', await signStatusListCwt(claims('/cwt/rogue'), rogue.signer.privateKey, [derOf(rogue.signerPem)]))
    // A trusted certificate in x5chain does not lend its trust to another key's signature.
    server.route('/cwt/forged', await signStatusListCwt(claims('/cwt/forged'), rogue.signer.privateKey, [derOf(pki.signerPem)]))
    server.route('/cwt/other-sub', await cwtList('/cwt/other-sub', { sub: server.url('/cwt/1') }))
    server.route('/cwt/expired', await cwtList('/cwt/expired', { exp: NOW - 120 }))
    server.route('/cwt/as-jwt', await jwtList('/cwt/as-jwt'))
    const { check, outcomes } = checker()
    for (const path of ['/cwt/rogue', '/cwt/forged', '/cwt/other-sub', '/cwt/expired', '/cwt/as-jwt']) expect([path, await check({ idx: 0, uri: server.url(path) }, 'cwt')]).toEqual([path, 'unavailable'])
    expect(outcomes).toEqual(['untrusted_list', 'untrusted_list', 'untrusted_list', 'expired_list', 'malformed_list'])
  })
})

describe('the status list cache', () => {
  test('a second check of the same list does not fetch it again; concurrent checks share one fetch', async () => {
    server.route('/cache/shared', await jwtList('/cache/shared'))
    const { check } = checker()
    const uri = server.url('/cache/shared')
    expect(await Promise.all([check({ idx: 0, uri }, 'jwt'), check({ idx: 1, uri }, 'jwt'), check({ idx: 2, uri }, 'jwt')])).toEqual(['valid', 'invalid', 'suspended'])
    expect(await check({ idx: 0, uri }, 'jwt')).toBe('valid')
    expect(server.hits.get('/cache/shared')).toBe(1)
  })

  test('after its ttl the list is fetched again, and a change (revocation) shows', async () => {
    clock = NOW * 1000
    server.route('/cache/ttl', await jwtList('/cache/ttl', { ttl: 300, statuses: [0, 0] }))
    const { check } = checker()
    const uri = server.url('/cache/ttl')
    expect(await check({ idx: 1, uri }, 'jwt')).toBe('valid')
    server.route('/cache/ttl', await jwtList('/cache/ttl', { ttl: 300, statuses: [0, 1] }))
    clock = (NOW + 299) * 1000
    expect(await check({ idx: 1, uri }, 'jwt')).toBe('valid')
    clock = (NOW + 301) * 1000
    expect(await check({ idx: 1, uri }, 'jwt')).toBe('invalid')
    expect(server.hits.get('/cache/ttl')).toBe(2)
    clock = NOW * 1000
  })

  test('a list is never kept past its exp, and a tiny ttl is kept for the floor', async () => {
    clock = NOW * 1000
    server.route('/cache/exp', await jwtList('/cache/exp', { ttl: 3600, exp: NOW + 200 }))
    server.route('/cache/tiny', await jwtList('/cache/tiny', { ttl: 1 }))
    const { check } = checker()
    await check({ idx: 0, uri: server.url('/cache/exp') }, 'jwt')
    await check({ idx: 0, uri: server.url('/cache/tiny') }, 'jwt')
    clock = (NOW + MIN_CACHE_S - 1) * 1000
    await check({ idx: 0, uri: server.url('/cache/tiny') }, 'jwt')
    expect(server.hits.get('/cache/tiny')).toBe(1)
    // Past exp the list is expired: fetched again, and (still the same token) refused.
    clock = (NOW + 200 + 61) * 1000
    expect(await check({ idx: 0, uri: server.url('/cache/exp') }, 'jwt')).toBe('unavailable')
    expect(server.hits.get('/cache/exp')).toBe(2)
    clock = NOW * 1000
  })

  test('a huge ttl is capped at a day', async () => {
    clock = NOW * 1000
    server.route('/cache/long', await jwtList('/cache/long', { ttl: 30 * 86_400, exp: NOW + 60 * 86_400 }))
    const { check } = checker()
    await check({ idx: 0, uri: server.url('/cache/long') }, 'jwt')
    clock = (NOW + MAX_CACHE_S - 1) * 1000
    await check({ idx: 0, uri: server.url('/cache/long') }, 'jwt')
    expect(server.hits.get('/cache/long')).toBe(1)
    clock = (NOW + MAX_CACHE_S + 1) * 1000
    await check({ idx: 0, uri: server.url('/cache/long') }, 'jwt')
    expect(server.hits.get('/cache/long')).toBe(2)
    clock = NOW * 1000
  })

  test('the cache is bounded: past maxEntries the least recently used list goes', async () => {
    clock = NOW * 1000
    for (const name of ['a', 'b', 'c']) server.route(`/cache/lru-${name}`, await jwtList(`/cache/lru-${name}`))
    const { check } = checker({ maxEntries: 2 })
    const at = (name: string) => check({ idx: 0, uri: server.url(`/cache/lru-${name}`) }, 'jwt')
    await at('a')
    await at('b')
    await at('a')
    await at('c')
    await at('a')
    await at('b')
    expect(['a', 'b', 'c'].map((name) => server.hits.get(`/cache/lru-${name}`))).toEqual([1, 2, 1])
  })

  test('failures are not cached: the next check tries again', async () => {
    const { check } = checker()
    server.route('/cache/flaky', new Response('down', { status: 503 }))
    expect(await check({ idx: 0, uri: server.url('/cache/flaky') }, 'jwt')).toBe('unavailable')
    server.route('/cache/flaky', await jwtList('/cache/flaky'))
    expect(await check({ idx: 0, uri: server.url('/cache/flaky') }, 'jwt')).toBe('valid')
  })
})
