import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { decodeJwt } from 'jose'
import { updateClient } from '../../src/clients/registry.ts'
import type { AgeTokenClaimsType } from '../../src/oauth/model.ts'
import { findSession } from '../../src/verification/sessions.ts'
import { createTestContext, json, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { callback, readPage, testBrowser } from './browser.ts'

let ctx: TestContext
let sandbox: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  ctx = await createTestContext()
  sandbox = await ctx.createClient({ name: 'Sandbox <Shop> & Co', sandbox: true })
})
afterAll(() => ctx.close())

/** Exchanges a code from the page at the token endpoint and returns the token's claims. */
async function exchangeClaims(client: { authorization: string }, code: string, state: string | null) {
  const response = await ctx.exchange(client.authorization, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    ...(state !== null && { state }),
  })
  expect(response.status).toBe(200)
  const body = await json(response)
  return { ...decodeJwt<AgeTokenClaimsType>(body.access_token), transaction_id: body.transaction_id as string }
}

async function completeSandbox(browser: ReturnType<typeof testBrowser>, query: Record<string, string>, age = '30', methodClass = 'age_only') {
  const { response, page } = await browser.open(query)
  expect(response.status).toBe(200)
  return browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age, method_class: methodClass })
}

describe('the sandbox flow over HTTP', () => {
  test('page → test form → 303 to redirect_uri with code and state → token', async () => {
    const browser = testBrowser(ctx)
    const { response, page } = await browser.open({ client_id: sandbox.id, state: 'xyz', age_required: '21' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/html')
    expect(page.html).toStartWith('<!doctype html>')
    expect(page.html).toContain('Sandbox &lt;Shop&gt; &amp; Co')
    expect(page.html).not.toContain('Sandbox <Shop>')
    for (const label of ['Test age', 'Test method', 'Complete test verification']) expect(page.html).toContain(label)

    const done = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '25', method_class: 'biometric' })
    const back = callback(done)!
    expect(back.url.origin + back.url.pathname).toBe(REDIRECT_URI)
    expect(back.state).toBe('xyz')
    const claims = await exchangeClaims(sandbox, back.code, 'xyz')
    expect(claims).toMatchObject({ aud: sandbox.id, age_over: 21, age_verified: true, verification_level: 'first_verification', reverification: false })
    const usage = await json(await ctx.request('/api/oauth/usage', { headers: { authorization: sandbox.authorization } }))
    expect(usage.usage.biometric_count).toBeGreaterThanOrEqual(1)
  })

  test('without state, the callback carries no state and age_required defaults to 18', async () => {
    const back = callback(await completeSandbox(testBrowser(ctx), { client_id: sandbox.id }))!
    expect(back.url.searchParams.has('state')).toBe(false)
    expect((await exchangeClaims(sandbox, back.code, null)).age_over).toBe(18)
  })

  test('a failed check stays on the page with an alert and a way to try again', async () => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id, state: 's', age_required: '18' })
    const failed = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '17', method_class: 'age_only' })
    expect(failed.status).toBe(200)
    expect(failed.headers.get('location')).toBeNull()
    const again = await readPage(failed)
    expect(again.html).toContain('role="alert"')
    expect(again.html).toContain('did not confirm that you are 18 or older')
    expect(again.html).toContain('4 attempts left')
    expect(again.html).not.toContain('access_denied')
    const ok = await browser.post(again.action('/methods/sandbox'), { csrf: again.csrf!, age: '18', method_class: 'age_only' })
    expect(callback(ok)).toBeDefined()
  })

  test('after five failed checks the session is locked and no form is offered', async () => {
    const browser = testBrowser(ctx)
    let { page } = await browser.open({ client_id: sandbox.id })
    const action = page.action('/methods/sandbox')
    const csrf = page.csrf!
    for (let i = 0; i < 5; i++) page = await readPage(await browser.post(action, { csrf, age: '10', method_class: 'age_only' }))
    expect(page.html).toContain('Too many attempts')
    expect(page.actions).toEqual([])
    const sixth = await browser.post(action, { csrf, age: '40', method_class: 'age_only' })
    expect(callback(sixth)).toBeUndefined()
  })

  test('an incomplete form is refused without counting as an attempt', async () => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id })
    const response = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: 'old', method_class: 'age_only' })
    expect(response.status).toBe(400)
    const html = await response.text()
    expect(html).toContain('Please fill in every field')
    expect(html).not.toContain('attempts left')
  })
})

describe('authorization errors stay on the page and never redirect', () => {
  const cases: [string, Record<string, string>, number, string][] = [
    ['empty client_id', { client_id: '' }, 400, 'invalid_request'],
    ['unknown client', { client_id: 'cl_nope' }, 401, 'invalid_client'],
    ['redirect_uri with a trailing slash', { redirect_uri: `${REDIRECT_URI}/` }, 400, 'invalid_redirect_uri'],
    ['redirect_uri over http', { redirect_uri: REDIRECT_URI.replace('https:', 'http:') }, 400, 'invalid_redirect_uri'],
    ['redirect_uri with an explicit port', { redirect_uri: 'https://shop.example:8443/callback' }, 400, 'invalid_redirect_uri'],
    ['redirect_uri elsewhere', { redirect_uri: 'https://evil.example/callback' }, 400, 'invalid_redirect_uri'],
    ['age_required 0', { age_required: '0' }, 400, 'invalid_request'],
    ['age_required 100', { age_required: '100' }, 400, 'invalid_request'],
    ['age_required 18.5', { age_required: '18.5' }, 400, 'invalid_request'],
    ['age_required abc', { age_required: 'abc' }, 400, 'invalid_request'],
  ]
  test.each(cases)('%s → %i %s', async (_, query, status, error) => {
    const browser = testBrowser(ctx)
    const { response, page } = await browser.open({ client_id: sandbox.id, ...query })
    expect(response.status).toBe(status)
    expect(response.headers.get('location')).toBeNull()
    expect(page.html).toContain(`<code>${error}</code>`)
    expect(page.html).toContain('role="alert"')
    expect(page.actions).toEqual([])
  })

  test('a missing client_id or redirect_uri is invalid_request', async () => {
    for (const query of [`redirect_uri=${encodeURIComponent(REDIRECT_URI)}`, `client_id=${sandbox.id}`, '']) {
      const response = await testBrowser(ctx).request(`/?${query}`)
      expect(response.status).toBe(400)
      expect(response.headers.get('location')).toBeNull()
      expect(await response.text()).toContain('<code>invalid_request</code>')
    }
  })

  test('a duplicate parameter is invalid_request', async () => {
    const response = await testBrowser(ctx).request(`/?client_id=${sandbox.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&state=a&state=b`)
    expect(response.status).toBe(400)
    expect(await response.text()).toContain('invalid_request')
  })

  test('a suspended client, a plan at its limit, and a threshold under min_age', async () => {
    const suspended = await ctx.createClient({ sandbox: true })
    await updateClient(ctx.deps.db, suspended.id, { status: 'suspended' })
    const full = await ctx.createClient({ sandbox: true, verificationLimit: 0 })
    const strict = await ctx.createClient({ sandbox: true, minAge: 21 })
    for (const [client, status, error] of [[suspended, 401, 'client_suspended'], [full, 402, 'payment_required'], [strict, 403, 'age_requirement_not_met']] as const) {
      const { response, page } = await testBrowser(ctx).open({ client_id: client.id })
      expect(response.status).toBe(status)
      expect(page.html).toContain(`<code>${error}</code>`)
    }
  })

  test('a plan limit reached while the visitor is on the page is shown there, and the session can be retried', async () => {
    const client = await ctx.createClient({ sandbox: true, verificationLimit: 1 })
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: client.id })
    await ctx.issueCode({ clientId: client.id })
    const response = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
    expect(response.status).toBe(402)
    expect(response.headers.get('location')).toBeNull()
    expect(await response.text()).toContain('payment_required')
    await updateClient(ctx.deps.db, client.id, { verificationLimit: 2 })
    expect(callback(await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' }))).toBeDefined()
  })

  test('GET /verify is 404', async () => {
    expect((await testBrowser(ctx).request('/verify')).status).toBe(404)
  })
})

describe('the pending request is held server-side and bound to the browser', () => {
  test('form fields cannot change the client, redirect URI, state or threshold', async () => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id, state: 'real', age_required: '21' })
    const other = await ctx.createClient({ sandbox: true, redirectUris: ['https://evil.example/cb'] })
    const done = await browser.post(page.action('/methods/sandbox'), {
      csrf: page.csrf!,
      age: '30',
      method_class: 'age_only',
      client_id: other.id,
      redirect_uri: 'https://evil.example/cb',
      state: 'forged',
      age_required: '1',
    })
    const back = callback(done)!
    expect(back.url.toString().startsWith(REDIRECT_URI)).toBe(true)
    expect(back.state).toBe('real')
    const claims = await exchangeClaims(sandbox, back.code, 'real')
    expect(claims.age_over).toBe(21)
    expect(claims.aud).toBe(sandbox.id)
  })

  test('the session page in another browser (no cookie, or another cookie) is session_expired', async () => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id })
    const action = page.action('/methods/sandbox')
    const stranger = testBrowser(ctx)
    await stranger.open({ client_id: sandbox.id })
    const stolen = await stranger.post(action, { csrf: page.csrf!, age: '30', method_class: 'age_only' })
    expect(stolen.status).toBe(400)
    expect(await stolen.text()).toContain('session_expired')
    const sessionPath = action.split('/methods')[0]!
    const bare = await testBrowser(ctx).request(sessionPath)
    expect(bare.status).toBe(400)
    expect((await browser.request(sessionPath)).status).toBe(200)
  })

  test('a session expires after 30 minutes', async () => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id })
    ctx.clock.advance(30 * 60_000)
    const late = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
    expect(late.status).toBe(400)
    expect(await late.text()).toContain('session_expired')
  })

  test('CSRF: a wrong token or another Origin is 403 forbidden; a missing token is 400', async () => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id })
    const action = page.action('/methods/sandbox')
    const wrong = await browser.post(action, { csrf: 'guess', age: '30', method_class: 'age_only' })
    expect(wrong.status).toBe(403)
    expect(await wrong.text()).toContain('forbidden')
    const crossSite = await browser.post(action, { csrf: page.csrf!, age: '30', method_class: 'age_only' }, { origin: 'https://evil.example' })
    expect(crossSite.status).toBe(403)
    const fetchMetadata = await browser.post(action, { csrf: page.csrf!, age: '30', method_class: 'age_only' }, { 'sec-fetch-site': 'cross-site' })
    expect(fetchMetadata.status).toBe(403)
    const missing = await browser.post(action, { age: '30', method_class: 'age_only' })
    expect(missing.status).toBe(400)
    const duplicated = await browser.request(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${page.csrf}&csrf=${page.csrf}&age=30&method_class=age_only`,
    })
    expect(duplicated.status).toBe(400)
    // What a browser sends for our own form under Referrer-Policy: no-referrer.
    const ownForm = await browser.post(action, { csrf: page.csrf!, age: '30', method_class: 'age_only' }, { origin: 'null', 'sec-fetch-site': 'same-origin' })
    expect(callback(ownForm)).toBeDefined()
  })

  test('a double submission issues exactly one code', async () => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id })
    const fields = { csrf: page.csrf!, age: '30', method_class: 'age_only' }
    const responses = await Promise.all([browser.post(page.action('/methods/sandbox'), fields), browser.post(page.action('/methods/sandbox'), fields)])
    expect(responses.filter((r) => r.status === 303)).toHaveLength(1)
    expect(responses.filter((r) => r.status === 400)).toHaveLength(1)
  })

  test('a production client is never offered the sandbox form, and posting it anyway is 404', async () => {
    const production = await ctx.createClient()
    const browser = testBrowser(ctx)
    const { response, page } = await browser.open({ client_id: production.id })
    expect(response.status).toBe(200)
    expect(page.html).not.toContain('Test age')
    // The page has no form, so no CSRF token: the server's own session lookup gives it, to reach the method gate itself.
    const sessionPath = /\/s\/[A-Za-z0-9_-]+/.exec(page.html)![0]
    const found = await findSession(ctx.deps, sessionPath.slice(3), browser.jar.get('ofage_browser'))
    const forced = await browser.post(`${sessionPath}/methods/sandbox`, { csrf: found!.session.csrfToken, age: '30', method_class: 'age_only' })
    expect(forced.status).toBe(404)
    expect(forced.headers.get('location')).toBeNull()
  })
})

describe('re-verification with the age pass', () => {
  test('a second visit offers "Continue as verified"; the token says re_verification; usage counts it; sub is stable', async () => {
    const browser = testBrowser(ctx)
    const first = callback(await completeSandbox(browser, { client_id: sandbox.id, state: 's1', age_required: '18' }, '25'))!
    const firstClaims = await exchangeClaims(sandbox, first.code, 's1')
    expect(browser.jar.has('ofage_pass')).toBe(true)

    const { page } = await browser.open({ client_id: sandbox.id, state: 's2', age_required: '21' })
    expect(page.html).toContain('Continue as verified')
    const again = callback(await browser.post(page.action('/continue'), { csrf: page.csrf! }))!
    const claims = await exchangeClaims(sandbox, again.code, 's2')
    expect(claims).toMatchObject({ verification_level: 're_verification', reverification: true, age_over: 21, sub: firstClaims.sub })
    const audit = await ctx.request('/api/oauth/usage', { headers: { authorization: sandbox.authorization } })
    expect((await json(audit)).usage.reverification_count).toBeGreaterThanOrEqual(1)
  })

  test('the pass panel names the age this site asks for, never the test age typed in (issue 24)', async () => {
    const browser = testBrowser(ctx)
    await completeSandbox(browser, { client_id: sandbox.id }, '25')
    const { page } = await browser.open({ client_id: sandbox.id, age_required: '18' })
    expect(page.html).toContain('This browser was verified recently as 18 or older.')
    expect(page.html).not.toContain('25 or older')
  })

  test('the pass covers only up to the age proven', async () => {
    const browser = testBrowser(ctx)
    await completeSandbox(browser, { client_id: sandbox.id }, '20')
    expect((await browser.open({ client_id: sandbox.id, age_required: '18' })).page.html).toContain('Continue as verified')
    const { page } = await browser.open({ client_id: sandbox.id, age_required: '21' })
    expect(page.html).not.toContain('Continue as verified')
    const forced = await browser.post(page.actions[0]!.replace(/\/methods\/sandbox.*/, '/continue'), { csrf: page.csrf! })
    expect(callback(forced)).toBeUndefined()
  })

  test('a sandbox pass is never offered to a production client', async () => {
    const production = await ctx.createClient()
    const browser = testBrowser(ctx)
    await completeSandbox(browser, { client_id: sandbox.id }, '40')
    expect((await browser.open({ client_id: production.id })).page.html).not.toContain('Continue as verified')
  })

  test('"Forget this browser" revokes the pass: the old cookie no longer works', async () => {
    const browser = testBrowser(ctx)
    await completeSandbox(browser, { client_id: sandbox.id }, '30')
    const oldPass = browser.jar.get('ofage_pass')!
    const { page } = await browser.open({ client_id: sandbox.id })
    const forgotten = await browser.post(page.action('/forget'), { csrf: page.csrf! })
    expect(await forgotten.text()).toContain('no longer remembers')
    expect(browser.jar.has('ofage_pass')).toBe(false)
    browser.jar.set('ofage_pass', oldPass)
    expect((await browser.open({ client_id: sandbox.id })).page.html).not.toContain('Continue as verified')
  })

  test('an expired or tampered pass is ignored', async () => {
    const browser = testBrowser(ctx)
    await completeSandbox(browser, { client_id: sandbox.id }, '30')
    const pass = browser.jar.get('ofage_pass')!
    browser.jar.set('ofage_pass', `${pass.slice(0, -4)}AAAA`)
    expect((await browser.open({ client_id: sandbox.id })).page.html).not.toContain('Continue as verified')
    browser.jar.set('ofage_pass', pass)
    ctx.clock.advance(31 * 24 * 60 * 60_000)
    expect((await browser.open({ client_id: sandbox.id })).page.html).not.toContain('Continue as verified')
  })
})

describe('headers, cookies and language', () => {
  test('strict CSP, no referrer, no framing, no caching', async () => {
    const { response } = await testBrowser(ctx).open({ client_id: sandbox.id })
    const csp = response.headers.get('content-security-policy')!
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toContain("form-action 'self' https://shop.example")
    expect(csp).not.toContain('unsafe-inline')
    expect(response.headers.get('referrer-policy')).toBe('no-referrer')
    expect(response.headers.get('x-frame-options')).toBe('DENY')
    expect(response.headers.get('cache-control')).toBe('no-store')
  })

  test('cookies are HttpOnly and SameSite=Lax; Secure and __Host- named when APP_URL is https', async () => {
    const { response } = await testBrowser(ctx).open({ client_id: sandbox.id })
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('ofage_browser='))!
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toMatch(/SameSite=Lax/i)
    expect(cookie).not.toContain('Secure')
    const secure = await createTestContext({ env: { APP_URL: 'https://verify.example' } })
    try {
      const client = await secure.createClient({ sandbox: true })
      const { response: https } = await testBrowser(secure).open({ client_id: client.id })
      expect(https.headers.getSetCookie().find((c) => c.startsWith('__Host-ofage_browser='))).toContain('Secure')
    } finally {
      await secure.close()
    }
  })

  test('the browser cookie is renewed with each new request, so it outlives every session it binds (it used to expire an hour after the first)', async () => {
    const browser = testBrowser(ctx)
    await browser.open({ client_id: sandbox.id })
    const first = browser.jar.get('ofage_browser')
    const { response } = await browser.open({ client_id: sandbox.id })
    const renewed = response.headers.getSetCookie().find((c) => c.startsWith('ofage_browser='))
    expect(renewed).toContain(`ofage_browser=${first}`)
    expect(renewed).toMatch(/Max-Age=3600/i)
  })

  test('Accept-Language picks German; ?lang= switches; the page says which language it is in', async () => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id }, { headers: { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' } })
    expect(page.html).toContain('<html lang="de">')
    expect(page.html).toContain('Bestätigen Sie Ihr Alter')
    const sessionPath = /\/s\/[A-Za-z0-9_-]+/.exec(page.html)![0]
    const english = await browser.request(`${sessionPath}?lang=en`, { headers: { 'accept-language': 'de' } })
    expect(await english.text()).toContain('<html lang="en">')
    const errorPage = await browser.request('/?redirect_uri=x', { headers: { 'accept-language': 'de' } })
    expect(await errorPage.text()).toContain('Der Link zu dieser Seite')
  })
})

describe('the demo relying party', () => {
  test('/demo → page → callback → exchange → validated claims, all server-side', async () => {
    const demoCtx = await createTestContext({ env: { OFAGE_DEMO: '1' } })
    try {
      const browser = testBrowser(demoCtx)
      const home = await browser.request('/demo')
      expect(home.status).toBe(200)
      const start = await browser.request('/demo/start?age=21')
      expect(start.status).toBe(303)
      const pageUrl = new URL(start.headers.get('location')!)
      const pageResponse = await browser.request(pageUrl.pathname + pageUrl.search)
      const page = await readPage(pageResponse)
      const done = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
      const back = new URL(done.headers.get('location')!)
      expect(back.pathname).toBe('/demo/callback')
      const result = await browser.request(back.pathname + back.search)
      const html = await result.text()
      expect(result.status).toBe(200)
      expect(html).toContain('Verified: 21 or older.')
      expect(html).toContain('first_verification')
      const replay = await browser.request(back.pathname + back.search)
      expect(replay.status).toBe(400)
    } finally {
      await demoCtx.close()
    }
  })
})
