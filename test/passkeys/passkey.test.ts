import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { sha256Hex } from '../../src/lib/crypto.ts'
import { PASSKEY_LIFETIME_MS } from '../../src/passkeys/store.ts'
import { createTestContext, json, queryRows, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { testBrowser } from '../verification/browser.ts'
import { softwareAuthenticator } from './authenticator.ts'
import { passkeyFlows, type Client } from './flows.ts'

/** Passkey re-verification over HTTP: saving one after a check, using it elsewhere, what is kept, the page. */
let ctx: TestContext
let sandbox: Client
let flows: ReturnType<typeof passkeyFlows>

beforeAll(async () => {
  ctx = await createTestContext()
  sandbox = await ctx.createClient({ name: 'Sandbox shop', sandbox: true })
  flows = passkeyFlows(ctx, sandbox)
})
afterAll(() => ctx.close())

describe('saving a passkey and re-verifying with it', () => {
  test('a passkey saved after an approved check re-verifies in another browser: re_verification, counted, the same sub', async () => {
    const { browser, sub } = await flows.checkedBrowser('25')
    const { html } = await flows.openPage(browser, sandbox)
    expect(html).toContain('Save a passkey for your other devices')
    const { authenticator } = await flows.savePasskey(browser)
    const usageBefore = await json(await ctx.request('/api/oauth/usage', { headers: { authorization: sandbox.authorization } }))

    const { response, body } = await flows.usePasskey(authenticator, { query: { age_required: '21' } })
    expect(response.status).toBe(200)
    expect(body.outcome).toBe('approved')
    const back = new URL(body.redirect)
    expect(back.origin + back.pathname).toBe(REDIRECT_URI)
    expect(back.searchParams.get('state')).toBe('st')
    const { token, claims } = await flows.exchange(sandbox, back.searchParams.get('code')!)
    expect(claims).toMatchObject({ age_over: 21, verification_level: 're_verification', reverification: true, sub })
    const validation = await json(await ctx.request(`/api/verify/token/${token}`))
    expect(validation).toMatchObject({ valid: true, verification_level: 're_verification', age_over: 21 })
    const usage = await json(await ctx.request('/api/oauth/usage', { headers: { authorization: sandbox.authorization } }))
    expect(usage.usage.reverification_count).toBe(usageBefore.usage.reverification_count + 1)
    expect(usage.usage.biometric_count).toBe(usageBefore.usage.biometric_count + 1)
  })

  test('the options ask for a discoverable passkey with user verification, ES256 or RS256, no attestation, under the page host', async () => {
    const { browser } = await flows.checkedBrowser()
    const { sessionPath, csrf } = await flows.openPage(browser, sandbox)
    const { options } = await json(await flows.postJson(browser, `${sessionPath}/passkey/options`, { csrf, purpose: 'register' }))
    expect(options.rp.id).toBe('api.ofage.test')
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' })
    expect(options.attestation).toBe('none')
    expect(options.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toEqual([-7, -257])
    expect(options.user.name).toBe('Age check: 25 or older')
    const { options: get } = await json(await flows.postJson(browser, `${sessionPath}/passkey/options`, { csrf, purpose: 'verify' }))
    expect(get).toMatchObject({ rpId: 'api.ofage.test', userVerification: 'required', allowCredentials: [] })
  })

  test('only the public key, counter, threshold, method class, sandbox flag and dates are stored', async () => {
    const { browser } = await flows.checkedBrowser('30')
    const provenAt = ctx.clock.now()
    const { credential } = await flows.savePasskey(browser)
    const [row] = await queryRows<Record<string, unknown>>(ctx.deps.db, sql`select * from passkeys where credential_id = ${credential.id}`)
    expect(Object.keys(row!).sort()).toEqual(['age_over', 'credential_id', 'expires_at', 'method_class', 'proven_at', 'public_key', 'sandbox', 'sign_count'])
    expect(row).toMatchObject({ age_over: 30, method_class: 'biometric', sandbox: true })
    expect(new Date(row!.proven_at as string).getTime()).toBe(provenAt.getTime())
    expect(new Date(row!.expires_at as string).getTime()).toBe(provenAt.getTime() + PASSKEY_LIFETIME_MS)
    expect(JSON.stringify(row)).not.toContain(credential.userHandle)
  })

  test('a synced passkey (its counter always 0) re-verifies more than once', async () => {
    const { browser } = await flows.checkedBrowser()
    const { authenticator } = await flows.savePasskey(browser, softwareAuthenticator(), { synced: true })
    expect((await flows.usePasskey(authenticator)).body.outcome).toBe('approved')
    expect((await flows.usePasskey(authenticator)).body.outcome).toBe('approved')
  })

  test('a failed passkey does not count as a failed attempt', async () => {
    const { browser } = await flows.checkedBrowser('18')
    const { authenticator } = await flows.savePasskey(browser)
    const { body, sessionPath } = await flows.usePasskey(authenticator, { query: { age_required: '21' } })
    expect(body.error).toBe('age_not_covered')
    const idHash = sha256Hex(sessionPath.slice('/s/'.length))
    const [row] = await queryRows<{ failed_attempts: number }>(ctx.deps.db, sql`select failed_attempts from verification_sessions where id_hash = ${idHash}`)
    expect(row!.failed_attempts).toBe(0)
  })
})

describe('the page', () => {
  test('offers "Use my passkey" hidden until the script finds WebAuthn, and allows WebAuthn for itself only', async () => {
    const browser = testBrowser(ctx)
    const { response, page } = await browser.open({ client_id: sandbox.id })
    expect(page.html).toMatch(/<section class="passkey"[^>]*data-passkey="use"[^>]*hidden/)
    expect(page.html).toContain('<script src="/assets/passkey.js" defer></script>')
    const policy = response.headers.get('permissions-policy')!
    expect(policy).toContain('publickey-credentials-get=(self)')
    expect(policy).toContain('publickey-credentials-create=(self)')
    expect(policy).toContain('camera=(self)')
    const script = await browser.request('/assets/passkey.js')
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('text/javascript')
  })

  test('"Delete my saved passkey" only in a browser that saved or used one here; deleting it there forgets that (issue 24)', async () => {
    const deleteButton = 'data-passkey-start="delete"'
    // A visitor who never saved one sees "Use my passkey" (a passkey may be synced from elsewhere), and no delete.
    const { browser } = await flows.checkedBrowser()
    expect((await flows.openPage(browser, sandbox)).html).not.toContain(deleteButton)
    expect((await flows.openPage(testBrowser(ctx), sandbox)).html).not.toContain(deleteButton)
    // Saved here: offered here. The cookie says only that, nothing about which passkey.
    const { authenticator } = await flows.savePasskey(browser)
    expect(browser.jar.get('ofage_passkey')).toBe('1')
    expect((await flows.openPage(browser, sandbox)).html).toContain(deleteButton)
    // Used in another browser: offered there too. Deleted there: that browser no longer offers it.
    const { browser: elsewhere, body } = await flows.usePasskey(authenticator)
    expect(body.outcome).toBe('approved')
    expect((await flows.openPage(elsewhere, sandbox)).html).toContain(deleteButton)
    expect((await flows.usePasskey(authenticator, { browser: elsewhere, purpose: 'delete' })).body.outcome).toBe('deleted')
    expect(elsewhere.jar.has('ofage_passkey')).toBe(false)
    expect((await flows.openPage(elsewhere, sandbox)).html).not.toContain(deleteButton)
  })

  test('saving and using a passkey are secondary buttons beside the page’s own way (issue 24)', async () => {
    const { browser } = await flows.checkedBrowser()
    const { html } = await flows.openPage(browser, sandbox)
    expect(html).toContain('<button type="button" class="secondary" data-passkey-start="register">Save a passkey for your other devices</button>')
    expect(html).toContain('<button type="button" class="secondary" data-passkey-start="verify">Use my passkey</button>')
    expect(html).toContain('<button type="submit">Continue as verified</button>')
  })

  test('German words on a German page', async () => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id, lang: 'de' })
    expect(page.html).toContain('Meinen Passkey verwenden')
  })
})
