import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { createCrlChecker, type CrlOutcome } from '../../src/credentials/trust/crl.ts'
import { createMdocPki, type MdocPki } from './pki.ts'
import { createCrl, startStatusServer, type StatusServer } from './status-fixtures.ts'

/**
 * CRLs of document signer certificates (RFC 5280 §5, ISO 18013-5 Annex B), made by the tests' IACA with
 * @peculiar/x509's X509CrlGenerator and served locally. The signer's serial number is 02 (pki.ts).
 */
const NOW = 1_795_000_000
const DAY = 86_400
const at = (seconds: number) => new Date(seconds * 1000)

let server: StatusServer
let clock = NOW * 1000

beforeAll(() => {
  server = startStatusServer()
})
afterAll(() => server.stop())

/** A PKI whose document signer names `path` on the test server as its CRL distribution point. */
async function pkiWithCrl(path: string | undefined): Promise<{ pki: MdocPki; chain: X509Certificate[] }> {
  const pki = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY), crlDistributionPoint: path && server.url(path) })
  return { pki, chain: [new X509Certificate(pki.signerPem), new X509Certificate(pki.rootPem)] }
}

const crlOf = (pki: MdocPki, options: { revoked?: string[]; thisUpdate?: number; nextUpdate?: number | null; signingKey?: CryptoKey } = {}) =>
  createCrl({
    issuerPem: pki.rootPem,
    signingKey: options.signingKey ?? pki.rootKeys.privateKey,
    revoked: options.revoked,
    thisUpdate: at(options.thisUpdate ?? NOW - DAY),
    nextUpdate: options.nextUpdate === null ? undefined : at(options.nextUpdate ?? NOW + 7 * DAY),
  })

function checker() {
  const outcomes: CrlOutcome[] = []
  const check = createCrlChecker({ now: () => new Date(clock), fetch: { allowLoopback: true, timeoutMs: 500 }, onOutcome: (outcome) => outcomes.push(outcome) })
  return { check, outcomes }
}

describe('createCrlChecker', () => {
  test('a signer certificate without a distribution point has nothing to check, and nothing is fetched', async () => {
    const { chain } = await pkiWithCrl(undefined)
    const hits = [...server.hits.values()].reduce((sum, n) => sum + n, 0)
    expect(await checker().check(chain)).toBe('good')
    expect([...server.hits.values()].reduce((sum, n) => sum + n, 0)).toBe(hits)
  })

  test('a current CRL of the issuer that does not list the signer is good; one that lists it, revoked', async () => {
    const good = await pkiWithCrl('/crl/good')
    server.route('/crl/good', await crlOf(good.pki, { revoked: ['0badc0de'] }))
    const revoked = await pkiWithCrl('/crl/revoked')
    server.route('/crl/revoked', await crlOf(revoked.pki, { revoked: ['0badc0de', '02'] }))
    const { check, outcomes } = checker()
    expect(await check(good.chain)).toBe('good')
    expect(await check(revoked.chain)).toBe('revoked')
    expect(outcomes).toEqual(['good', 'revoked'])
  })

  test('a CRL in PEM is read as well as DER', async () => {
    const { pki, chain } = await pkiWithCrl('/crl/pem')
    const der = await crlOf(pki, { revoked: ['02'] })
    server.route('/crl/pem', `-----BEGIN X509 CRL-----\n${Buffer.from(der).toString('base64')}\n-----END X509 CRL-----\n`)
    expect(await checker().check(chain)).toBe('revoked')
  })

  test('a stale CRL (past nextUpdate, not yet valid, or without nextUpdate) is unavailable', async () => {
    const { check, outcomes } = checker()
    for (const [path, options] of [
      ['/crl/stale', { nextUpdate: NOW - 60 }],
      ['/crl/early', { thisUpdate: NOW + 3600 }],
      ['/crl/open', { nextUpdate: null }],
    ] as const) {
      const { pki, chain } = await pkiWithCrl(path)
      server.route(path, await crlOf(pki, options))
      expect([path, await check(chain)]).toEqual([path, 'unavailable'])
    }
    expect(outcomes).toEqual(['stale_crl', 'stale_crl', 'stale_crl'])
  })

  test("a CRL not signed by the signer's issuer is unavailable, even if it lists nothing", async () => {
    const { pki, chain } = await pkiWithCrl('/crl/forged')
    const other = await createMdocPki({ from: at(NOW - 30 * DAY), signerUntil: at(NOW + 365 * DAY) })
    // The issuer's name, another key.
    server.route('/crl/forged', await crlOf(pki, { signingKey: other.rootKeys.privateKey }))
    const { pki: second, chain: secondChain } = await pkiWithCrl('/crl/other-issuer')
    // Another issuer's genuine CRL at this signer's address.
    server.route('/crl/other-issuer', await crlOf(other))
    const { check, outcomes } = checker()
    expect(await check(chain)).toBe('unavailable')
    expect(await check(secondChain)).toBe('unavailable')
    expect(outcomes).toEqual(['untrusted_crl', 'untrusted_crl'])
    expect(second.rootPem).not.toBe(other.rootPem)
  })

  test('an unreachable, garbled or missing CRL is unavailable (fail closed)', async () => {
    const { check, outcomes } = checker()
    const missing = await pkiWithCrl('/crl/missing')
    const garbled = await pkiWithCrl('/crl/garbled')
    server.route('/crl/garbled', 'not a CRL')
    expect(await check(missing.chain)).toBe('unavailable')
    expect(await check(garbled.chain)).toBe('unavailable')
    expect(outcomes).toEqual(['http_status', 'malformed_crl'])
  })

  test('a CRL is cached until its nextUpdate, then fetched again', async () => {
    clock = NOW * 1000
    const { pki, chain } = await pkiWithCrl('/crl/cached')
    server.route('/crl/cached', await crlOf(pki, { nextUpdate: NOW + 3600 }))
    const { check } = checker()
    expect(await check(chain)).toBe('good')
    expect(await check(chain)).toBe('good')
    expect(server.hits.get('/crl/cached')).toBe(1)
    server.route('/crl/cached', await crlOf(pki, { revoked: ['02'], thisUpdate: NOW + 3000, nextUpdate: NOW + 7200 }))
    clock = (NOW + 3601) * 1000
    expect(await check(chain)).toBe('revoked')
    expect(server.hits.get('/crl/cached')).toBe(2)
    clock = NOW * 1000
  })
})
