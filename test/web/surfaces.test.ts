import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createDashboardUser } from '../../src/dashboard/users.ts'
import { HSTS_MAX_AGE_SECONDS } from '../../src/web/headers.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { callback, readPage, testBrowser } from '../verification/browser.ts'

/**
 * What every browser-facing surface shares (src/web/): the hosted page and the dashboard refuse the same
 * posts, name their cookies by the same rule, and answer over https with HSTS.
 */
describe('browser-facing surfaces over https', () => {
  let secure: TestContext
  beforeAll(async () => {
    secure = await createTestContext({ env: { PUBLIC_URL: 'https://age.example' } })
  })
  afterAll(() => secure.close())

  test("the hosted page's cookies are Secure and carry the __Host- prefix, and the flow still completes", async () => {
    const sandbox = await secure.createClient({ sandbox: true })
    const browser = testBrowser(secure)
    const { response, page } = await browser.open({ client_id: sandbox.id, state: 's' })
    const browserCookie = response.headers.getSetCookie().find((line) => line.startsWith('__Host-ofage_browser='))
    expect(browserCookie).toMatch(/; Secure/i)
    expect(browserCookie).toMatch(/Path=\//)
    expect(browserCookie).not.toMatch(/Domain/i)
    expect(browser.jar.has('ofage_browser')).toBe(false)
    const done = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
    expect(callback(done)).toBeDefined()
    // The age pass that the approved check leaves behind is named by the same rule.
    expect(done.headers.getSetCookie().some((line) => line.startsWith('__Host-ofage_pass=') && /; Secure/i.test(line))).toBe(true)
    // A cookie without the prefix (a sibling subdomain can set that one) binds nothing.
    const next = (await browser.open({ client_id: sandbox.id, state: 't' })).page.action('/methods/sandbox').split('/methods')[0]!
    const planted = testBrowser(secure)
    planted.jar.set('ofage_browser', browser.jar.get('__Host-ofage_browser')!)
    expect((await planted.request(next)).status).toBe(400)
    expect((await browser.request(next)).status).toBe(200)
  })

  test('every answer carries HSTS of at least a year, without includeSubDomains unless configured', async () => {
    for (const path of ['/api/.well-known/jwks.json', '/api/no-such-endpoint', '/?client_id=nobody', '/dashboard/sign-in', '/healthz']) {
      const header = (await secure.request(path)).headers.get('strict-transport-security')
      expect(header, path).toBe(`max-age=${HSTS_MAX_AGE_SECONDS}`)
    }
    // A route that answers with a Response of its own (token validation) carries it too, valid or not.
    const shop = await secure.createClient()
    const { access_token } = await secure.tokenFor(shop)
    for (const path of [`/api/verify/token/${access_token}`, `/api/verify/token/${access_token}`, '/api/verify/token/not.a.token']) {
      expect((await secure.request(path)).headers.get('strict-transport-security'), path).toBe(`max-age=${HSTS_MAX_AGE_SECONDS}`)
    }
    expect(HSTS_MAX_AGE_SECONDS).toBeGreaterThanOrEqual(31_536_000)
    const wider = await createTestContext({ env: { PUBLIC_URL: 'https://age.example', HSTS_INCLUDE_SUBDOMAINS: '1' } })
    try {
      expect((await wider.request('/healthz')).headers.get('strict-transport-security')).toBe(`max-age=${HSTS_MAX_AGE_SECONDS}; includeSubDomains`)
    } finally {
      await wider.close()
    }
  })
})

describe('browser-facing surfaces over plain http', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestContext()
  })
  afterAll(() => ctx.close())

  test('no HSTS over plain http (browsers ignore it there, RFC 6797 §8.1)', async () => {
    expect((await ctx.request('/healthz')).headers.get('strict-transport-security')).toBeNull()
    expect((await ctx.request('/dashboard/sign-in')).headers.get('strict-transport-security')).toBeNull()
  })

  test('the hosted page refuses a post from a sibling subdomain (Sec-Fetch-Site: same-site), as the dashboard does', async () => {
    const sandbox = await ctx.createClient({ sandbox: true })
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id, state: 's' })
    const fields = { csrf: page.csrf!, age: '30', method_class: 'age_only' }
    const sibling = await browser.post(page.action('/methods/sandbox'), fields, { 'sec-fetch-site': 'same-site' })
    expect(sibling.status).toBe(403)
    expect(await sibling.text()).toContain('forbidden')
    // Nothing was spent: the same form from the page itself still completes.
    expect(callback(await browser.post(page.action('/methods/sandbox'), fields, { 'sec-fetch-site': 'same-origin' }))).toBeDefined()

    const { link } = await createDashboardUser(ctx.deps, { clientId: sandbox.id, email: 'sibling@shop.example' })
    const dashboard = testBrowser(ctx)
    const form = await readPage(await dashboard.request(`/dashboard/set-password?token=${link.token}`))
    const password = { token: link.token, password: 'a brand new passphrase', confirm: 'a brand new passphrase', csrf: form.csrf! }
    expect((await dashboard.post('/dashboard/set-password', password, { 'sec-fetch-site': 'same-site' })).status).toBe(403)
  })
})
