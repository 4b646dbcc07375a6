import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { createDashboardUser, findUserByEmail, issuePasswordLink, PASSWORD_LINK_LIFETIME_MS } from '../../src/dashboard/users.ts'
import { createTestContext, queryRows, type TestContext } from '../helpers.ts'
import { readPage, testBrowser } from '../verification/browser.ts'
import { createUser, PASSWORD, postSignIn, signedIn } from './dashboard.ts'

/** Dashboard accounts: sign-in, its limits, no account enumeration, and the set-password link (issue 13, part 1). */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  // Production's argon2 cost (the suite's default is cheap): the timing test below measures that work.
  ctx = await createTestContext({ env: { PASSWORD_HASH_MEMORY_KIB: '65536', TRUST_PROXY: '1', RATE_LIMIT_SIGNIN_ACCOUNT: '3', RATE_LIMIT_SIGNIN_ACCOUNT_CEILING: '9', RATE_LIMIT_SIGNIN_ADDRESS: '5' } })
  shop = await ctx.createClient({ name: 'Wine shop' })
}, 60_000)
afterAll(() => ctx.close())

/** Each test signs in from its own address, so the per-address limit of one does not reach another. */
let addresses = 0
const fromAddress = () => ({ 'x-forwarded-for': `198.51.100.${++addresses}` })

describe('sign-in', () => {
  test('the right email and password open a session in an HttpOnly, SameSite=Lax cookie; the dashboard shows the client', async () => {
    await createUser(ctx, shop.id, 'Owner@Wine.example')
    const browser = testBrowser(ctx)
    const response = await postSignIn(browser, 'owner@wine.example', PASSWORD, fromAddress())
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/dashboard/audit')
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith('ofage_dashboard='))!
    expect(cookie).toMatch(/HttpOnly/i)
    expect(cookie).toMatch(/SameSite=Lax/i)
    expect(cookie).toMatch(/Path=\//)
    expect(cookie).not.toMatch(/Secure/i)
    const page = await browser.request('/dashboard/audit')
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('Wine shop')
    expect(html).toContain('Signed in as Owner@Wine.example')
    // Only the token's hash is stored.
    const token = browser.jar.get('ofage_dashboard')!
    const rows = await queryRows<{ token_hash: string }>(ctx.deps.db, sql`select token_hash from dashboard_sessions`)
    expect(rows.some((row) => row.token_hash === token)).toBe(false)
    expect(rows.some((row) => row.token_hash === new Bun.CryptoHasher('sha256').update(token).digest('hex'))).toBe(true)
  })

  test('signed out, /dashboard and every dashboard page send the browser to sign in', async () => {
    for (const path of ['/dashboard', '/dashboard/audit', '/dashboard/audit.csv', '/dashboard/audit/00000000-0000-4000-8000-000000000000']) {
      const response = await ctx.request(path)
      expect({ path, status: response.status, location: response.headers.get('location') }).toEqual({ path, status: 303, location: '/dashboard/sign-in' })
    }
  })

  test('a wrong password, an unknown email and an account without a password get the same answer (no enumeration)', async () => {
    await createUser(ctx, shop.id, 'known@wine.example')
    await createDashboardUser(ctx.deps, { clientId: shop.id, email: 'pending@wine.example' })
    const answers = []
    for (const [email, password] of [
      ['known@wine.example', 'not the password at all'],
      ['nobody@wine.example', 'not the password at all'],
      ['pending@wine.example', 'not the password at all'],
    ] as const) {
      const browser = testBrowser(ctx)
      const response = await postSignIn(browser, email, password, fromAddress())
      expect(browser.jar.has('ofage_dashboard')).toBe(false)
      // Each browser's own CSRF tokens (the form's and the passkey button's) are the only difference allowed.
      answers.push({ status: response.status, body: (await response.text()).replace(/(value|data-csrf)="[^"]*"/g, '') })
    }
    expect(answers[0]!.status).toBe(400)
    expect(answers[0]!.body).toContain('The email or the password is not right.')
    expect(answers[1]).toEqual(answers[0]!)
    expect(answers[2]).toEqual(answers[0]!)
  })

  test('an unknown email costs the same argon2 work as a wrong password', async () => {
    const time = async (email: string) => {
      const started = performance.now()
      await postSignIn(testBrowser(ctx), email, 'not the password at all', fromAddress())
      return performance.now() - started
    }
    await createUser(ctx, shop.id, 'timed@wine.example')
    const known = Math.min(await time('timed@wine.example'), await time('timed@wine.example'))
    const unknown = Math.min(await time('ghost@wine.example'), await time('ghost2@wine.example'))
    // A verify of Bun's argon2id takes tens of milliseconds; skipping it would make the unknown email far faster.
    expect(unknown).toBeGreaterThan(known * 0.5)
  })
})

describe('sign-in attempts are rate-limited', () => {
  test('per account and address: past the limit that address is refused with 429 and Retry-After, even the right password, until the window ends; another address is not', async () => {
    await createUser(ctx, shop.id, 'limited@wine.example')
    const address = fromAddress()
    for (let i = 0; i < 3; i++) expect((await postSignIn(testBrowser(ctx), 'limited@wine.example', 'wrong guess number x', address)).status).toBe(400)
    const refused = await postSignIn(testBrowser(ctx), 'LIMITED@wine.example', PASSWORD, address)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await refused.text()).toContain('Too many sign-in attempts')
    // The account itself is not held: the right password from another address signs in.
    expect((await postSignIn(testBrowser(ctx), 'limited@wine.example', PASSWORD, fromAddress())).status).toBe(303)
    ctx.clock.advance(15 * 60_000)
    expect((await postSignIn(testBrowser(ctx), 'limited@wine.example', PASSWORD, address)).status).toBe(303)
  })

  test('spaced and upper-cased variants of the victim’s email from many addresses never block the right password from a fresh address (issue 19, found 2)', async () => {
    await createUser(ctx, shop.id, 'victim@wine.example')
    const variants = [' VICTIM@WINE.EXAMPLE', 'Victim@Wine.Example ', '\tvictim@wine.example', 'victim@WINE.example']
    // Far past both the per-address-and-account limit (3) and the account's ceiling (9).
    for (let i = 0; i < 12; i++) {
      const address = fromAddress()
      for (const variant of variants) await postSignIn(testBrowser(ctx), variant, `wrong guess ${i}`, address)
    }
    expect((await postSignIn(testBrowser(ctx), 'victim@wine.example', PASSWORD, fromAddress())).status).toBe(303)
    expect((await postSignIn(testBrowser(ctx), ' Victim@Wine.example', PASSWORD, fromAddress())).status).toBe(303)
  })

  test('past the account’s ceiling of failures, guessing slows: an address that failed is refused, a fresh one gets one try', async () => {
    await createUser(ctx, shop.id, 'crowded@wine.example')
    for (let i = 0; i < 3; i++) {
      const address = fromAddress()
      for (let j = 0; j < 3; j++) expect((await postSignIn(testBrowser(ctx), 'crowded@wine.example', `wrong guess ${i}/${j}`, address)).status).toBe(400)
    }
    // 9 failures: the ceiling (9) is reached. A fresh address's first guess is answered, its second is not.
    const fresh = fromAddress()
    expect((await postSignIn(testBrowser(ctx), 'crowded@wine.example', 'wrong guess on', fresh)).status).toBe(400)
    expect((await postSignIn(testBrowser(ctx), 'crowded@wine.example', PASSWORD, fresh)).status).toBe(429)
    // Parallel guesses from another fresh address get one answer between them.
    const burst = fromAddress()
    const statuses = await Promise.all(Array.from({ length: 4 }, () => postSignIn(testBrowser(ctx), 'crowded@wine.example', 'wrong guess in a burst', burst).then((r) => r.status)))
    expect(statuses.toSorted()).toEqual([400, 429, 429, 429])
    // The owner, from an address that has not failed, signs in; and again from there (a success is no failure).
    const owner = fromAddress()
    expect((await postSignIn(testBrowser(ctx), 'crowded@wine.example', PASSWORD, owner)).status).toBe(303)
    expect((await postSignIn(testBrowser(ctx), 'crowded@wine.example', PASSWORD, owner)).status).toBe(303)
  })

  test('an unknown email is counted like a known one: the limit does not tell them apart', async () => {
    const address = fromAddress()
    for (let i = 0; i < 3; i++) expect((await postSignIn(testBrowser(ctx), 'nobody-here@wine.example', 'wrong guess number y', address)).status).toBe(400)
    expect((await postSignIn(testBrowser(ctx), 'nobody-here@wine.example', 'wrong guess number y', address)).status).toBe(429)
  })

  test('per address: one address trying many accounts is refused past its limit; another address is not', async () => {
    const address = fromAddress()
    for (let i = 0; i < 5; i++) expect((await postSignIn(testBrowser(ctx), `spray${i}@wine.example`, 'wrong guess number z', address)).status).toBe(400)
    await createUser(ctx, shop.id, 'sprayed@wine.example')
    expect((await postSignIn(testBrowser(ctx), 'sprayed@wine.example', PASSWORD, address)).status).toBe(429)
    expect((await postSignIn(testBrowser(ctx), 'sprayed@wine.example', PASSWORD, fromAddress())).status).toBe(303)
  })

  test('a burst of parallel guesses from one address gets no more tries than the limit', async () => {
    await createUser(ctx, shop.id, 'burst@wine.example')
    const address = fromAddress()
    const statuses = await Promise.all(Array.from({ length: 8 }, () => postSignIn(testBrowser(ctx), 'burst@wine.example', 'wrong guess number w', address).then((r) => r.status)))
    expect(statuses.filter((status) => status === 400)).toHaveLength(3)
    expect(statuses.filter((status) => status === 429)).toHaveLength(5)
  })
})

describe('the set-password link', () => {
  test('sets the password once: the link is then spent, the password works, and every earlier session ends', async () => {
    const { link } = await createDashboardUser(ctx.deps, { clientId: shop.id, email: 'new@wine.example' })
    const browser = testBrowser(ctx)
    const form = await readPage(await browser.request(`/dashboard/set-password?token=${encodeURIComponent(link.token)}`))
    expect(form.html).toContain('new@wine.example')
    const set = await browser.post('/dashboard/set-password', { csrf: form.csrf!, token: link.token, password: 'four words make one key', confirm: 'four words make one key' })
    expect(set.status).toBe(303)
    expect(set.headers.get('location')).toBe('/dashboard/sign-in?notice=password_set')
    const again = await browser.request(`/dashboard/set-password?token=${link.token}`)
    expect(again.status).toBe(400)
    expect(await again.text()).toContain('This link is not valid')
    const replay = await browser.post('/dashboard/set-password', { csrf: form.csrf!, token: link.token, password: 'someone else entirely', confirm: 'someone else entirely' })
    expect(replay.status).toBe(400)
    const session = await signedIn(ctx, 'new@wine.example', 'four words make one key', fromAddress())

    // A new link (the operator's reset) leaves the password until it is used; using it signs out everywhere.
    const reset = (await issuePasswordLink(ctx.deps, (await findUserByEmail(ctx.deps.db, 'NEW@wine.example'))!.id))!
    const resetForm = await readPage(await browser.request(`/dashboard/set-password?token=${reset.token}`))
    expect((await session.request('/dashboard/audit')).status).toBe(200)
    await browser.post('/dashboard/set-password', { csrf: resetForm.csrf!, token: reset.token, password: 'five words make a better key', confirm: 'five words make a better key' })
    expect((await session.request('/dashboard/audit')).status).toBe(303)
    expect((await postSignIn(testBrowser(ctx), 'new@wine.example', 'four words make one key', fromAddress())).status).toBe(400)
  })

  test('expires after 24 hours, and a newer link replaces it', async () => {
    const { user, link } = await createDashboardUser(ctx.deps, { clientId: shop.id, email: 'late@wine.example' })
    ctx.clock.advance(PASSWORD_LINK_LIFETIME_MS - 1000)
    expect((await ctx.request(`/dashboard/set-password?token=${link.token}`)).status).toBe(200)
    ctx.clock.advance(1000)
    expect((await ctx.request(`/dashboard/set-password?token=${link.token}`)).status).toBe(400)
    const fresh = (await issuePasswordLink(ctx.deps, user.id))!
    const newer = (await issuePasswordLink(ctx.deps, user.id))!
    expect((await ctx.request(`/dashboard/set-password?token=${fresh.token}`)).status).toBe(400)
    expect((await ctx.request(`/dashboard/set-password?token=${newer.token}`)).status).toBe(200)
  })

  test('refuses a short password and two that differ, and keeps the link for another try', async () => {
    const { link } = await createDashboardUser(ctx.deps, { clientId: shop.id, email: 'short@wine.example' })
    const browser = testBrowser(ctx)
    const form = await readPage(await browser.request(`/dashboard/set-password?token=${link.token}`))
    const short = await browser.post('/dashboard/set-password', { csrf: form.csrf!, token: link.token, password: 'elevenchars', confirm: 'elevenchars' })
    expect(short.status).toBe(400)
    expect(await short.text()).toContain('at least 12 characters')
    const differ = await browser.post('/dashboard/set-password', { csrf: form.csrf!, token: link.token, password: 'twelve chars!', confirm: 'twelve chars?' })
    expect(await differ.text()).toContain('The two passwords are not the same.')
    expect((await browser.post('/dashboard/set-password', { csrf: form.csrf!, token: link.token, password: 'twelve chars!', confirm: 'twelve chars!' })).status).toBe(303)
  })

  test('an unknown or malformed token is the same 400 page, never a 500', async () => {
    for (const token of ['nope', '', 'a'.repeat(128), '%00', '__proto__']) {
      const response = await ctx.request(`/dashboard/set-password?token=${encodeURIComponent(token)}`)
      expect({ token, status: response.status }).toEqual({ token, status: 400 })
    }
    expect((await ctx.request(`/dashboard/set-password?token=${'a'.repeat(129)}`)).status).toBe(400)
    expect((await ctx.request('/dashboard/set-password')).status).toBe(400)
  })
})

describe('pages', () => {
  test('German from Accept-Language or ?lang=de, with the strict CSP', async () => {
    const german = await ctx.request('/dashboard/sign-in', { headers: { 'accept-language': 'de-DE,de;q=0.9' } })
    expect(german.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await german.text()
    expect(html).toContain('<html lang="de">')
    expect(html).toContain('Beim Dashboard anmelden')
    expect(await (await ctx.request('/dashboard/sign-in?lang=de')).text()).toContain('Passwort')
  })

  test('the log never carries an email, a password, a token or a transaction id', async () => {
    const lines: string[] = []
    const logging = await createTestContext({ log: { info: (e, f) => lines.push(JSON.stringify({ e, ...f })), error: (e, f) => lines.push(JSON.stringify({ e, ...f })) } })
    try {
      const client = await logging.createClient()
      const { transactionId } = await logging.issueCode({ clientId: client.id })
      const { link } = await createDashboardUser(logging.deps, { clientId: client.id, email: 'logged@wine.example' })
      const browser = testBrowser(logging)
      const form = await readPage(await browser.request(`/dashboard/set-password?token=${link.token}`))
      await browser.post('/dashboard/set-password', { csrf: form.csrf!, token: link.token, password: PASSWORD, confirm: PASSWORD })
      await postSignIn(browser, 'logged@wine.example', 'a wrong password here')
      await postSignIn(browser, 'logged@wine.example', PASSWORD)
      await browser.request(`/dashboard/audit/${transactionId}`)
      await browser.request(`/dashboard/audit?transaction_id=${transactionId}`)
      const all = lines.join('\n')
      expect(all).toContain('/dashboard/audit/:transaction_id')
      for (const secret of ['logged@wine.example', PASSWORD, link.token, transactionId, browser.jar.get('ofage_dashboard')!]) expect(all).not.toContain(secret)
    } finally {
      await logging.close()
    }
  }, 60_000)
})
