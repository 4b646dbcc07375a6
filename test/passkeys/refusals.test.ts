import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { canSavePasskey, createRegistrationOptions } from '../../src/passkeys/registration.ts'
import { relyingPartyFor } from '../../src/passkeys/relying-party.ts'
import { PASSKEY_LIFETIME_MS, pruneExpiredPasskeys } from '../../src/passkeys/store.ts'
import { createTestContext, json, PUBLIC_URL, queryRows, type TestContext } from '../helpers.ts'
import { testBrowser } from '../verification/browser.ts'
import { softwareAuthenticator } from './authenticator.ts'
import { origin, passkeyFlows, type Client } from './flows.ts'

/** What passkey re-verification refuses, and how: always JSON, never a 500, never a failed attempt counted. */
let ctx: TestContext
let sandbox: Client
let production: Client
let flows: ReturnType<typeof passkeyFlows>

beforeAll(async () => {
  ctx = await createTestContext()
  sandbox = await ctx.createClient({ name: 'Sandbox shop', sandbox: true })
  production = await ctx.createClient({ name: 'Live shop' })
  flows = passkeyFlows(ctx, sandbox)
})
afterAll(() => ctx.close())

describe('what is refused', () => {
  test('saving a passkey without an age pass in this browser is 403 no_age_pass', async () => {
    const browser = testBrowser(ctx)
    const { html, sessionPath, csrf } = await flows.openPage(browser, sandbox)
    expect(html).not.toContain('Save a passkey')
    const options = await flows.postJson(browser, `${sessionPath}/passkey/options`, { csrf, purpose: 'register' })
    expect(options.status).toBe(403)
    expect(await json(options)).toMatchObject({ outcome: 'refused', error: 'no_age_pass' })
    // A registration made elsewhere and posted here is refused the same way.
    const { browser: checked } = await flows.checkedBrowser()
    const other = await flows.openPage(checked, sandbox)
    const started = await json(await flows.postJson(checked, `${other.sessionPath}/passkey/options`, { csrf: other.csrf, purpose: 'register' }))
    const { response } = softwareAuthenticator().register(started.options, { origin })
    const posted = await flows.postJson(browser, `${sessionPath}/passkey/register`, { csrf, response })
    expect(posted.status).toBe(403)
  })

  test('the same assertion posted twice passes once: the challenge is used up', async () => {
    const { browser } = await flows.checkedBrowser('25')
    const { authenticator } = await flows.savePasskey(browser)
    const visitor = testBrowser(ctx)
    const { sessionPath, csrf } = await flows.openPage(visitor, sandbox)
    const started = await json(await flows.postJson(visitor, `${sessionPath}/passkey/options`, { csrf, purpose: 'verify' }))
    const response = authenticator.assert(started.options, { origin })
    const answers = await Promise.all([flows.postJson(visitor, `${sessionPath}/passkey`, { csrf, response }), flows.postJson(visitor, `${sessionPath}/passkey`, { csrf, response })])
    const bodies = await Promise.all(answers.map(json))
    expect(bodies.filter((b) => b.outcome === 'approved')).toHaveLength(1)
    expect(answers.filter((r) => r.status === 400)).toHaveLength(1)
    // Replayed to a page that is still open, after a refusal used its challenge up.
    const refused = await flows.usePasskey(authenticator, { query: { age_required: '30' } })
    expect(refused.body.error).toBe('age_not_covered')
    const again = await flows.postJson(refused.browser, `${refused.sessionPath}/passkey`, { csrf: refused.csrf, response: refused.assertion })
    expect(again.status).toBe(400)
    expect(await json(again)).toMatchObject({ error: 'challenge_expired' })
  })

  test("an assertion for another session's challenge, or for another purpose, is 400 challenge_expired", async () => {
    const { browser } = await flows.checkedBrowser()
    const { authenticator } = await flows.savePasskey(browser)
    const visitor = testBrowser(ctx)
    const first = await flows.openPage(visitor, sandbox)
    const second = await flows.openPage(visitor, sandbox)
    const started = await json(await flows.postJson(visitor, `${first.sessionPath}/passkey/options`, { csrf: first.csrf, purpose: 'verify' }))
    await flows.postJson(visitor, `${second.sessionPath}/passkey/options`, { csrf: second.csrf, purpose: 'verify' })
    const response = authenticator.assert(started.options, { origin })
    const crossed = await flows.postJson(visitor, `${second.sessionPath}/passkey`, { csrf: second.csrf, response })
    expect(crossed.status).toBe(400)
    expect(await json(crossed)).toMatchObject({ outcome: 'refused', error: 'challenge_expired' })
    const toDelete = await flows.postJson(visitor, `${first.sessionPath}/passkey/delete`, { csrf: first.csrf, response })
    expect(await json(toDelete)).toMatchObject({ error: 'challenge_expired' })
    const late = await flows.usePasskey(authenticator, { bend: {} })
    expect(late.body.outcome).toBe('approved')
  })

  test('a challenge older than two minutes is refused', async () => {
    const { browser } = await flows.checkedBrowser()
    const { authenticator } = await flows.savePasskey(browser)
    const visitor = testBrowser(ctx)
    const { sessionPath, csrf } = await flows.openPage(visitor, sandbox)
    const started = await json(await flows.postJson(visitor, `${sessionPath}/passkey/options`, { csrf, purpose: 'verify' }))
    ctx.clock.advance(2 * 60_000 + 1)
    const response = await flows.postJson(visitor, `${sessionPath}/passkey`, { csrf, response: authenticator.assert(started.options, { origin }) })
    expect(await json(response)).toMatchObject({ error: 'challenge_expired' })
  })

  test('a passkey proving 18 for a page asking 21 is refused with age_not_covered', async () => {
    const { browser } = await flows.checkedBrowser('18')
    const { authenticator } = await flows.savePasskey(browser)
    const { response, body } = await flows.usePasskey(authenticator, { query: { age_required: '21' } })
    expect(response.status).toBe(200)
    expect(body).toMatchObject({ outcome: 'refused', error: 'age_not_covered' })
    expect(body.message).toContain('21 or older')
    expect((await flows.usePasskey(authenticator, { query: { age_required: '18' } })).body.outcome).toBe('approved')
  })

  test('a sandbox passkey at a production client is refused with sandbox_passkey', async () => {
    const { browser } = await flows.checkedBrowser()
    const { authenticator } = await flows.savePasskey(browser)
    const { body } = await flows.usePasskey(authenticator, { client: production })
    expect(body).toMatchObject({ outcome: 'refused', error: 'sandbox_passkey' })
  })

  test('a deleted passkey is refused as unknown, and the browser is told to forget it', async () => {
    const { browser } = await flows.checkedBrowser()
    const { authenticator, credential } = await flows.savePasskey(browser)
    const deleted = await flows.usePasskey(authenticator, { purpose: 'delete' })
    expect(deleted.response.status).toBe(200)
    expect(deleted.body).toMatchObject({ outcome: 'deleted', rp_id: 'api.ofage.test', credential_id: credential.id })
    expect(await queryRows(ctx.deps.db, sql`select 1 from passkeys where credential_id = ${credential.id}`)).toEqual([])
    const { body } = await flows.usePasskey(authenticator)
    expect(body).toMatchObject({ outcome: 'refused', error: 'unknown_passkey', credential_id: credential.id })
    expect(body.message).toContain('another way')
  })

  test('a check older than the passkey lifetime cannot stand behind a new passkey', async () => {
    const now = ctx.clock.now()
    const old = new Date(now.getTime() - PASSKEY_LIFETIME_MS)
    expect(canSavePasskey({ provenAt: old }, now)).toBe(false)
    expect(canSavePasskey({ provenAt: new Date(old.getTime() + 1) }, now)).toBe(true)
    const check = { passId: crypto.randomUUID(), personKey: 'pk', ageOver: 18, methodClass: 'age_only' as const, sandbox: false, provenAt: old }
    const options = await createRegistrationOptions(ctx.deps, { sessionIdHash: 'none', rp: relyingPartyFor(PUBLIC_URL), check, userName: 'x' })
    expect(options).toBe('pass_too_old')
  })

  test('a wrong CSRF token is 403 forbidden, as JSON', async () => {
    const { browser } = await flows.checkedBrowser()
    const { authenticator } = await flows.savePasskey(browser)
    const visitor = testBrowser(ctx)
    const { sessionPath, csrf } = await flows.openPage(visitor, sandbox)
    const wrong = await flows.postJson(visitor, `${sessionPath}/passkey/options`, { csrf: 'guess', purpose: 'verify' })
    expect(wrong.status).toBe(403)
    expect(await json(wrong)).toMatchObject({ outcome: 'refused', error: 'forbidden' })
    const started = await json(await flows.postJson(visitor, `${sessionPath}/passkey/options`, { csrf, purpose: 'verify' }))
    const response = authenticator.assert(started.options, { origin })
    const forged = await flows.postJson(visitor, `${sessionPath}/passkey`, { csrf: 'guess', response })
    expect(forged.status).toBe(403)
    const crossSite = await flows.postJson(visitor, `${sessionPath}/passkey`, { csrf, response }, { origin: 'https://evil.example' })
    expect(crossSite.status).toBe(403)
    expect((await json(await flows.postJson(visitor, `${sessionPath}/passkey`, { csrf, response }))).outcome).toBe('approved')
  })

  test('a signature counter that goes backwards is refused with invalid_response', async () => {
    const { browser } = await flows.checkedBrowser()
    const { authenticator } = await flows.savePasskey(browser)
    expect((await flows.usePasskey(authenticator, { bend: { signCount: 5 } })).body.outcome).toBe('approved')
    const cloned = await flows.usePasskey(authenticator, { bend: { signCount: 3 } })
    expect(cloned.response.status).toBe(400)
    expect(cloned.body).toMatchObject({ outcome: 'refused', error: 'invalid_response' })
    expect((await flows.usePasskey(authenticator, { bend: { signCount: 5 } })).body.error).toBe('invalid_response')
  })

  test('an assertion without user verification, or from another origin, is refused', async () => {
    const { browser } = await flows.checkedBrowser()
    const { authenticator } = await flows.savePasskey(browser)
    expect((await flows.usePasskey(authenticator, { bend: { userVerified: false } })).body.error).toBe('invalid_response')
    const { sessionPath, csrf } = await flows.openPage(browser, sandbox)
    const started = await json(await flows.postJson(browser, `${sessionPath}/passkey/options`, { csrf, purpose: 'verify' }))
    const phished = authenticator.assert(started.options, { origin: 'https://ofage-login.example' })
    expect(await json(await flows.postJson(browser, `${sessionPath}/passkey`, { csrf, response: phished }))).toMatchObject({ error: 'invalid_response' })
  })

  test('garbage bodies are 400 JSON, never 500 or an HTML page', async () => {
    const browser = testBrowser(ctx)
    const { sessionPath, csrf } = await flows.openPage(browser, sandbox)
    const cases: [string, string][] = [
      ['application/json', '{"csrf":'],
      ['application/json', '[]'],
      ['application/json', JSON.stringify({ csrf, purpose: 'steal' })],
      ['application/json', JSON.stringify({ csrf, csrf2: 1, purpose: 'verify' })],
      ['application/json', `{"csrf":"${csrf}","csrf":"${csrf}","purpose":"verify"}`],
      ['application/json', JSON.stringify({ csrf, response: { id: 'x' } })],
      ['application/json', JSON.stringify({ csrf, purpose: 'verify', pad: 'x'.repeat(20_000) })],
      ['text/plain', JSON.stringify({ csrf, purpose: 'verify' })],
    ]
    for (const path of ['/passkey/options', '/passkey', '/passkey/register', '/passkey/delete']) {
      for (const [type, body] of cases) {
        const response = await browser.request(`${sessionPath}${path}`, { method: 'POST', headers: { 'content-type': type }, body })
        expect(response.status).toBe(400)
        expect((await json(response)).outcome).toBe('refused')
      }
    }
    const bogus = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' }, clientExtensionResults: {} }
    const response = await flows.postJson(browser, `${sessionPath}/passkey`, { csrf, response: bogus })
    expect(response.status).toBe(400)
    expect(await json(response)).toMatchObject({ error: 'invalid_response' })
  })

  test('an expired session answers JSON session_expired in the page language', async () => {
    const browser = testBrowser(ctx)
    const { sessionPath, csrf } = await flows.openPage(browser, sandbox)
    const response = await flows.postJson(testBrowser(ctx), `${sessionPath}/passkey/options?lang=de`, { csrf, purpose: 'verify' })
    expect(response.status).toBe(400)
    expect(await json(response)).toMatchObject({ error: 'session_expired', message: expect.stringContaining('Diese Seite ist abgelaufen') })
  })

  test('a passkey stops re-verifying a year after the check it stands for, and is then pruned', async () => {
    const { browser } = await flows.checkedBrowser()
    const { authenticator, credential } = await flows.savePasskey(browser)
    ctx.clock.advance(PASSKEY_LIFETIME_MS)
    const { body } = await flows.usePasskey(authenticator)
    expect(body).toMatchObject({ outcome: 'refused', error: 'passkey_expired' })
    expect(body.message).toContain('more than a year old')
    ctx.clock.advance(1)
    expect(await pruneExpiredPasskeys(ctx.deps.db, ctx.clock.now())).toBeGreaterThanOrEqual(1)
    expect(await queryRows(ctx.deps.db, sql`select 1 from passkeys where credential_id = ${credential.id}`)).toEqual([])
  })
})

