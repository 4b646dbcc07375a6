import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { decodeJwt } from 'jose'
import { createDevIssuer, issueDevCredential } from '../../src/credentials/dev/issuer.ts'
import { createDevWallet, presentToVerifier } from '../../src/credentials/dev/wallet.ts'
import { signDevStatusList, startStatusServer, type StatusServer } from '../credentials/status-fixtures.ts'
import { freePort, queryRows, type TestContext } from '../helpers.ts'
import { callback } from './browser.ts'
import { NOW, openCredentialFlow, type CredentialFlow } from './credential-flow.ts'

/**
 * Revocation through the whole digital ID method, in-process on a real database: an EUDI-style PID (SD-JWT VC)
 * names its entry in a Token Status List (draft-ietf-oauth-status-list §6.2) served over loopback http, signed
 * by the issuer's document signer (x5c to the dev root in the trust list). The statuses are §7.1's: 0 VALID,
 * 1 INVALID, 2 SUSPENDED. Each test names its own list, because a list fetched once is cached for its ttl and
 * the clock here is frozen.
 */
const VALID = 0
const INVALID = 1
const SUSPENDED = 2
const IAT = Math.floor(NOW.getTime() / 1000)

const WITHDRAWN = 'This ID has been withdrawn by its issuer'
const SUSPENDED_WORDS = 'This ID has been suspended by its issuer for now'
const TRY_IN_A_MOMENT = 'Try again in a moment; this did not use up a try.'

let flow: CredentialFlow
let ctx: TestContext
let lists: StatusServer

beforeAll(async () => {
  flow = await openCredentialFlow()
  ctx = flow.ctx
  lists = startStatusServer()
}, 30_000)
afterAll(async () => {
  lists.stop()
  await ctx.close()
})

/** Serves, at `path`, a list signed by `flow`'s issuer where entry 3 has `status` (its neighbours VALID). */
async function serveList(path: string, status: number, on: { flow: CredentialFlow; server: StatusServer } = { flow, server: lists }) {
  const uri = on.server.url(path)
  on.server.route(path, await signDevStatusList(on.flow.issuer, { statuses: [VALID, VALID, VALID, status, VALID], sub: uri, iat: IAT, ttl: 300 }))
  return { idx: 3, uri }
}

/** The failed attempts of the session behind a started request (its id is in the method form's action). */
async function failedAttempts(started: { action: string }, on: TestContext = ctx): Promise<number> {
  const id = /\/s\/([^/]+)\//.exec(started.action)![1]!
  const [row] = await queryRows<{ n: number }>(on.deps.db, sql`select failed_attempts as n from verification_sessions where id_hash = ${createHash('sha256').update(id).digest('hex')}`)
  return Number(row!.n)
}

/** Revocation checks counted so far, by `kind/outcome`. */
async function revocationChecks(on: TestContext = ctx): Promise<Record<string, number>> {
  const { values } = await on.deps.metrics.revocationChecks.get()
  return Object.fromEntries(values.map((v) => [`${v.labels.kind}/${v.labels.outcome}`, v.value]))
}

const increase = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).filter(([key, n]) => n !== (before[key] ?? 0)).map(([key, n]) => [key, n - (before[key] ?? 0)]))

describe('a PID that names its status list entry', () => {
  test('VALID: the wallet is approved, the page redeems the answer and the site exchanges the code for an age token', async () => {
    const status = await serveList('/valid.jwt', VALID)
    const before = await revocationChecks()
    const started = await flow.startRequest()
    const answer = await presentToVerifier(await flow.walletWith('sd-jwt', 30, { status }), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher })
    expect(answer).toEqual({ status: 200, body: {} })
    expect(await started.status()).toBe('answered')
    const token = await flow.exchange(callback(await started.redeem())!.code)
    expect(decodeJwt(token.access_token)).toMatchObject({ age_verified: true, age_over: 18 })
    expect(lists.hits.get('/valid.jwt')).toBe(1)
    expect(increase(before, await revocationChecks())).toEqual({ 'status_list/valid': 1 })
  })

  test('INVALID: refused, the page says the issuer withdrew the ID, and one attempt is counted', async () => {
    const status = await serveList('/invalid.jwt', INVALID)
    const before = await revocationChecks()
    const started = await flow.startRequest()
    const answer = await presentToVerifier(await flow.walletWith('sd-jwt', 30, { status }), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher })
    expect(answer.status).toBe(400)
    expect(answer.body.error_description).toContain('revoked')
    const refused = await started.redeem()
    expect(callback(refused)).toBeUndefined()
    const html = await refused.text()
    expect(html).toContain(WITHDRAWN)
    expect(html).toContain('4 attempts left.')
    expect(await failedAttempts(started)).toBe(1)
    expect(increase(before, await revocationChecks())).toEqual({ 'status_list/invalid': 1 })
  })

  test('SUSPENDED: refused, the page says the issuer suspended the ID for now', async () => {
    const status = await serveList('/suspended.jwt', SUSPENDED)
    const before = await revocationChecks()
    const started = await flow.startRequest()
    await presentToVerifier(await flow.walletWith('sd-jwt', 30, { status }), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher })
    const refused = await started.redeem()
    expect(callback(refused)).toBeUndefined()
    const html = await refused.text()
    expect(html).toContain(SUSPENDED_WORDS)
    expect(html).not.toContain(WITHDRAWN)
    expect(await failedAttempts(started)).toBe(1)
    expect(increase(before, await revocationChecks())).toEqual({ 'status_list/suspended': 1 })
  })

  test('an unreachable list: the page says try again in a moment, no attempt is counted, and the same session succeeds once the list is back', async () => {
    // A port nothing listens on yet: the connection is refused.
    const port = await freePort()
    const uri = `http://127.0.0.1:${port}/later.jwt`
    const wallet = await flow.walletWith('sd-jwt', 30, { status: { idx: 3, uri } })
    const before = await revocationChecks()
    const started = await flow.startRequest()
    const answer = await presentToVerifier(wallet, started.request.wallet_url, { now: NOW, fetcher: flow.fetcher })
    expect(answer.status).toBe(400)
    expect(answer.body.error_description).toContain('status_unavailable')
    const refused = await started.redeem()
    expect(callback(refused)).toBeUndefined()
    const html = await refused.text()
    expect(html).toContain(TRY_IN_A_MOMENT)
    expect(html).not.toContain('attempts left')
    expect(await failedAttempts(started)).toBe(0)
    expect(increase(before, await revocationChecks())).toEqual({ 'status_list/unreachable': 1 })

    // The issuer's server is back, at the address the credential names.
    const back = startStatusServer({}, port)
    try {
      back.route('/later.jwt', await signDevStatusList(flow.issuer, { statuses: [VALID, VALID, VALID, VALID], sub: uri, iat: IAT }))
      const again = await started.startAnother()
      expect((await presentToVerifier(wallet, again.wallet_url, { now: NOW, fetcher: flow.fetcher })).status).toBe(200)
      const token = await flow.exchange(callback(await started.redeem(again.request))!.code)
      expect(decodeJwt(token.access_token).age_verified).toBe(true)
      expect(back.hits.get('/later.jwt')).toBe(1)
    } finally {
      back.stop()
    }
  })

  test('with CREDENTIAL_REVOCATION_UNREACHABLE=accept, an unreachable list says nothing against the ID: approved', async () => {
    const accepting = await openCredentialFlow({ CREDENTIAL_REVOCATION_UNREACHABLE: 'accept' })
    try {
      const uri = `http://127.0.0.1:${await freePort()}/gone.jwt`
      const before = await revocationChecks(accepting.ctx)
      const started = await accepting.startRequest()
      const answer = await presentToVerifier(await accepting.walletWith('sd-jwt', 30, { status: { idx: 3, uri } }), started.request.wallet_url, {
        now: NOW,
        fetcher: accepting.fetcher,
      })
      expect(answer.status).toBe(200)
      const token = await accepting.exchange(callback(await started.redeem())!.code)
      expect(decodeJwt(token.access_token)).toMatchObject({ age_verified: true, age_over: 18 })
      // Counted as what happened, not as what was decided.
      expect(increase(before, await revocationChecks(accepting.ctx))).toEqual({ 'status_list/unreachable': 1 })
    } finally {
      await accepting.ctx.close()
    }
  }, 30_000)

  test('with CREDENTIAL_REVOCATION_UNREACHABLE=accept, a list that says INVALID still refuses the ID and counts an attempt', async () => {
    const accepting = await openCredentialFlow({ CREDENTIAL_REVOCATION_UNREACHABLE: 'accept' })
    try {
      const status = await serveList('/accept-invalid.jwt', INVALID, { flow: accepting, server: lists })
      const started = await accepting.startRequest()
      await presentToVerifier(await accepting.walletWith('sd-jwt', 30, { status }), started.request.wallet_url, { now: NOW, fetcher: accepting.fetcher })
      expect(await (await started.redeem()).text()).toContain(WITHDRAWN)
      expect(await failedAttempts(started, accepting.ctx)).toBe(1)
    } finally {
      await accepting.ctx.close()
    }
  }, 30_000)
})

describe('status lists that must not be fetched or believed', () => {
  test('a credential from an issuer outside the trust list, naming a status list on our network, makes no request to it', async () => {
    const stranger = await createDevIssuer(NOW)
    const wallet = await createDevWallet()
    wallet.credentials.push(
      await issueDevCredential(stranger, { format: 'sd-jwt', age: 30, holderPublicKey: wallet.holder.publicKey, now: NOW, status: { idx: 0, uri: lists.url('/probe') } }),
    )
    const before = await revocationChecks()
    const started = await flow.startRequest()
    const answer = await presentToVerifier(wallet, started.request.wallet_url, { now: NOW, fetcher: flow.fetcher })
    expect(answer.status).toBe(400)
    expect(callback(await started.redeem())).toBeUndefined()
    expect(lists.hits.get('/probe')).toBeUndefined()
    expect(increase(before, await revocationChecks())).toEqual({})
  })

  test('a list signed by an issuer outside the trust list is not believed: unavailable, no attempt counted', async () => {
    const stranger = await createDevIssuer(NOW)
    const uri = lists.url('/forged.jwt')
    lists.route('/forged.jwt', await signDevStatusList(stranger, { statuses: [VALID, VALID, VALID, VALID], sub: uri, iat: IAT }))
    const before = await revocationChecks()
    const started = await flow.startRequest()
    await presentToVerifier(await flow.walletWith('sd-jwt', 30, { status: { idx: 3, uri } }), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher })
    const refused = await started.redeem()
    expect(callback(refused)).toBeUndefined()
    expect(await refused.text()).toContain(TRY_IN_A_MOMENT)
    expect(await failedAttempts(started)).toBe(0)
    expect(increase(before, await revocationChecks())).toEqual({ 'status_list/untrusted_list': 1 })
  })

  test('GET /metrics shows the outcomes as ofage_credential_revocation_checks_total', async () => {
    const open = await openCredentialFlow({ METRICS_PUBLIC: '1' })
    try {
      const status = await serveList('/metrics-invalid.jwt', INVALID, { flow: open, server: lists })
      const started = await open.startRequest()
      await presentToVerifier(await open.walletWith('sd-jwt', 30, { status }), started.request.wallet_url, { now: NOW, fetcher: open.fetcher })
      const response = await open.ctx.request('/metrics')
      expect(response.status).toBe(200)
      expect(await response.text()).toMatch(/^ofage_credential_revocation_checks_total\{kind="status_list",outcome="invalid",host="[^"]+",worker="0"\} 1$/m)
    } finally {
      await open.ctx.close()
    }
  }, 30_000)
})
