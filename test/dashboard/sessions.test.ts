import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SESSION_IDLE_MS } from '../../src/dashboard/sessions.ts'
import { createDashboardUser } from '../../src/dashboard/users.ts'
import { createTestContext, PUBLIC_URL, type TestContext } from '../helpers.ts'
import { readPage, testBrowser } from '../verification/browser.ts'
import { createUser, PASSWORD, sessionCsrf, signedIn } from './dashboard.ts'

/** Dashboard sessions: how they end (idle, absolute, sign-out, everywhere), and the CSRF and Origin checks of every form. */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  ctx = await createTestContext({ env: { TRUST_PROXY: '1' } })
  shop = await ctx.createClient({ name: 'Wine shop' })
}, 60_000)
afterAll(() => ctx.close())

/** Each test signs in from its own address, so the per-address limit of one does not reach another. */
let addresses = 0
const fromAddress = () => ({ 'x-forwarded-for': `198.51.100.${++addresses}` })

describe('sessions end', () => {
  test('after 12 hours unused (idle), but not while in use', async () => {
    await createUser(ctx, shop.id, 'idle@wine.example')
    const browser = await signedIn(ctx, 'idle@wine.example', PASSWORD, fromAddress())
    ctx.clock.advance(SESSION_IDLE_MS - 60_000)
    expect((await browser.request('/dashboard/audit')).status).toBe(200)
    ctx.clock.advance(SESSION_IDLE_MS - 60_000)
    expect((await browser.request('/dashboard/audit')).status).toBe(200)
    ctx.clock.advance(SESSION_IDLE_MS + 1)
    const ended = await browser.request('/dashboard/audit')
    expect(ended.status).toBe(303)
    expect(ended.headers.get('location')).toBe('/dashboard/sign-in')
  })

  test('seven days after sign-in however busy (absolute)', async () => {
    await createUser(ctx, shop.id, 'busy@wine.example')
    const browser = await signedIn(ctx, 'busy@wine.example', PASSWORD, fromAddress())
    const statuses: number[] = []
    for (let hours = 11; hours <= 176; hours += 11) {
      ctx.clock.advance(11 * 60 * 60_000)
      statuses.push((await browser.request('/dashboard/audit')).status)
    }
    // 15 × 11 h = 165 h, inside the 168 h; the 16th visit, at 176 h, is past it.
    expect(statuses).toEqual([...Array(15).fill(200), 303])
  })

  test('sign out ends this session only; sign out everywhere ends every session of the user, and no one else\'s', async () => {
    await createUser(ctx, shop.id, 'many@wine.example')
    await createUser(ctx, shop.id, 'colleague@wine.example')
    const laptop = await signedIn(ctx, 'many@wine.example', PASSWORD, fromAddress())
    const phone = await signedIn(ctx, 'many@wine.example', PASSWORD, fromAddress())
    const tablet = await signedIn(ctx, 'many@wine.example', PASSWORD, fromAddress())
    const colleague = await signedIn(ctx, 'colleague@wine.example', PASSWORD, fromAddress())

    const out = await laptop.post('/dashboard/sign-out', { csrf: await sessionCsrf(laptop) })
    expect(out.status).toBe(303)
    expect(out.headers.get('location')).toBe('/dashboard/sign-in?notice=signed_out')
    expect(laptop.jar.has('ofage_dashboard')).toBe(false)
    expect((await phone.request('/dashboard/audit')).status).toBe(200)

    const everywhere = await phone.post('/dashboard/sign-out-everywhere', { csrf: await sessionCsrf(phone) })
    expect(everywhere.headers.get('location')).toBe('/dashboard/sign-in?notice=signed_out_everywhere')
    expect(await (await phone.request(everywhere.headers.get('location')!)).text()).toContain('You are signed out on every device.')
    expect((await tablet.request('/dashboard/audit')).status).toBe(303)
    expect((await colleague.request('/dashboard/audit')).status).toBe(200)
  })

  test('a stolen cookie of a signed-out session opens nothing', async () => {
    await createUser(ctx, shop.id, 'stolen@wine.example')
    const browser = await signedIn(ctx, 'stolen@wine.example', PASSWORD, fromAddress())
    const token = browser.jar.get('ofage_dashboard')!
    await browser.post('/dashboard/sign-out', { csrf: await sessionCsrf(browser) })
    const replayed = await ctx.request('/dashboard/audit', { headers: { cookie: `ofage_dashboard=${token}` } })
    expect(replayed.status).toBe(303)
  })
})

describe('CSRF and Origin checks on every form', () => {
  test('sign-out: no token is 400, a wrong one or another session\'s is 403, a foreign Origin or a cross-site fetch is 403; the session survives them all', async () => {
    await createUser(ctx, shop.id, 'csrf@wine.example')
    await createUser(ctx, shop.id, 'csrf-other@wine.example')
    const browser = await signedIn(ctx, 'csrf@wine.example', PASSWORD, fromAddress())
    const other = await signedIn(ctx, 'csrf-other@wine.example', PASSWORD, fromAddress())
    const csrf = await sessionCsrf(browser)
    for (const path of ['/dashboard/sign-out', '/dashboard/sign-out-everywhere']) {
      expect((await browser.post(path, {})).status).toBe(400)
      expect((await browser.post(path, { csrf: 'forged' })).status).toBe(403)
      expect((await browser.post(path, { csrf: await sessionCsrf(other) })).status).toBe(403)
      expect((await browser.post(path, { csrf }, { origin: 'https://evil.example' })).status).toBe(403)
      expect((await browser.post(path, { csrf }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
      expect((await browser.post(path, { csrf }, { 'sec-fetch-site': 'same-site' })).status).toBe(403)
    }
    expect((await browser.request('/dashboard/audit')).status).toBe(200)
    expect((await other.request('/dashboard/audit')).status).toBe(200)
    // Our own origin, or the `null` a no-referrer page sends, is accepted.
    expect((await browser.post('/dashboard/sign-out', { csrf }, { origin: PUBLIC_URL })).status).toBe(303)
    expect((await other.post('/dashboard/sign-out', { csrf: await sessionCsrf(other) }, { origin: 'null' })).status).toBe(303)
  })

  test('sign-in: without the pre-session cookie, with a wrong token or from another origin, the password is not even checked', async () => {
    await createUser(ctx, shop.id, 'login-csrf@wine.example')
    const browser = testBrowser(ctx)
    const { csrf } = await readPage(await browser.request('/dashboard/sign-in'))
    const body = { email: 'login-csrf@wine.example', password: PASSWORD }
    expect((await browser.post('/dashboard/sign-in', { ...body, csrf: 'forged' }, fromAddress())).status).toBe(403)
    expect((await browser.post('/dashboard/sign-in', { ...body, csrf: csrf! }, { ...fromAddress(), origin: 'https://evil.example' })).status).toBe(403)
    const cookieless = testBrowser(ctx)
    expect((await cookieless.post('/dashboard/sign-in', { ...body, csrf: csrf! }, fromAddress())).status).toBe(403)
    expect(browser.jar.has('ofage_dashboard')).toBe(false)
    expect((await browser.post('/dashboard/sign-in', { ...body, csrf: csrf! }, fromAddress())).status).toBe(303)
  })

  test('set-password: a post from another origin or without the right token sets nothing, and the link still works', async () => {
    const { link } = await createDashboardUser(ctx.deps, { clientId: shop.id, email: 'csrf-link@wine.example' })
    const browser = testBrowser(ctx)
    const form = await readPage(await browser.request(`/dashboard/set-password?token=${link.token}`))
    const fields = { token: link.token, password: 'a brand new passphrase', confirm: 'a brand new passphrase' }
    expect((await browser.post('/dashboard/set-password', { ...fields, csrf: form.csrf! }, { origin: 'https://evil.example' })).status).toBe(403)
    expect((await testBrowser(ctx).post('/dashboard/set-password', { ...fields, csrf: form.csrf! })).status).toBe(403)
    expect((await browser.post('/dashboard/set-password', { ...fields, csrf: 'forged' })).status).toBe(403)
    expect((await browser.request(`/dashboard/set-password?token=${link.token}`)).status).toBe(200)
  })

  test('over https the cookies are Secure and carry the __Host- prefix', async () => {
    const secure = await createTestContext({ env: { PUBLIC_URL: 'https://age.example' } })
    try {
      const client = await secure.createClient()
      await createUser(secure, client.id, 'secure@wine.example')
      const browser = testBrowser(secure)
      const form = await browser.request('/dashboard/sign-in')
      expect(form.headers.getSetCookie().join('\n')).toMatch(/^__Host-ofage_dashboard_form=[^;]+;.*Secure/m)
      const { csrf } = await readPage(form)
      const response = await browser.post('/dashboard/sign-in', { csrf: csrf!, email: 'secure@wine.example', password: PASSWORD }, { origin: 'https://age.example' })
      expect(response.status).toBe(303)
      const session = response.headers.getSetCookie().find((line) => line.startsWith('__Host-ofage_dashboard='))!
      expect(session).toMatch(/Secure/)
      expect(session).toMatch(/Path=\//)
      expect(session).not.toMatch(/Domain/i)
      expect((await browser.request('/dashboard/audit')).status).toBe(200)
    } finally {
      await secure.close()
    }
  }, 60_000)
})
