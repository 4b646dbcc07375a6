import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { runCommand } from '../../src/cli/run.ts'
import { dashboardPasskeys } from '../../src/db/schema.ts'
import { listDashboardPasskeys } from '../../src/dashboard/passkeys.ts'
import { createDashboardUser, findUserByEmail, issuePasswordLink, removeDashboardUser } from '../../src/dashboard/users.ts'
import { createTestContext, PUBLIC_URL, type TestContext } from '../helpers.ts'
import { softwareAuthenticator } from '../passkeys/authenticator.ts'
import { readPage, testBrowser } from '../verification/browser.ts'
import { createUser, PASSWORD, sessionCsrf, signedIn, type DashboardBrowser } from './dashboard.ts'

/**
 * Passkey sign-in for dashboard users (issue 13, item 1's "welcome where it is cheap"): added while signed
 * in, used on the sign-in page instead of the password, removed from the settings page. A software
 * authenticator answers as a browser's passkey dialog would; each attack is what a stolen or replayed answer,
 * another browser or another user would try.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
const origin = PUBLIC_URL

beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_SIGNIN_ADDRESS: '1000', TRUST_PROXY: '1' } })
  shop = await ctx.createClient({ name: 'Shop' })
  await createUser(ctx, shop.id, 'owner@shop.example')
  await createUser(ctx, shop.id, 'colleague@shop.example')
}, 60_000)
afterAll(() => ctx.close())

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
  body: JSON.stringify(body),
})

/**
 * Adds a passkey to the signed-in user as the settings page's script does: the options with the password
 * typed again, the authenticator's answer. Returns the answer's JSON and status (the options' when refused).
 */
async function addPasskey(browser: DashboardBrowser, authenticator = softwareAuthenticator(), { password = PASSWORD, headers = {} }: { password?: string; headers?: Record<string, string> } = {}) {
  const csrf = await sessionCsrf(browser)
  const startedAnswer = await browser.request('/dashboard/passkeys/options', json({ csrf, purpose: 'register', password }, headers))
  const started = (await startedAnswer.json()) as { options?: never } & Record<string, string>
  if (!started.options) return { status: startedAnswer.status, body: started, authenticator }
  const { response } = authenticator.register(started.options, { origin })
  const answer = await browser.request('/dashboard/passkeys', json({ csrf, response }, headers))
  return { status: answer.status, body: (await answer.json()) as Record<string, string>, authenticator }
}

async function cli(...argv: string[]) {
  const out: string[] = []
  const status = await runCommand({ deps: ctx.deps, close: async () => {} }, argv, { out: (text) => out.push(text), err: (text) => out.push(text) })
  return { status, out: out.join('\n') }
}

/** On the sign-in page, as its script does: the options, then the authenticator's answer. */
async function signInWithPasskey(browser: DashboardBrowser, authenticator: ReturnType<typeof softwareAuthenticator>, bend: { userVerified?: boolean; origin?: string } = {}) {
  const { csrf } = await readPage(await browser.request('/dashboard/sign-in'))
  const started = (await (await browser.request('/dashboard/sign-in/passkey/options', json({ csrf, purpose: 'verify' }))).json()) as { options: never }
  const assertion = authenticator.assert(started.options, { origin, ...bend })
  const answer = await browser.request('/dashboard/sign-in/passkey', json({ csrf, response: assertion }))
  return { status: answer.status, body: (await answer.json()) as Record<string, string>, assertion, csrf }
}

describe('adding a passkey', () => {
  test('a signed-in user adds one; the settings page lists it; the sign-in page offers the passkey button', async () => {
    const owner = await signedIn(ctx, 'owner@shop.example')
    const { status, body } = await addPasskey(owner)
    expect([status, body.outcome, body.redirect]).toEqual([200, 'approved', '/dashboard/settings?notice=passkey_added'])
    const page = await (await owner.request('/dashboard/settings?notice=passkey_added')).text()
    expect(page).toContain('Your passkey is added')
    expect(page.match(/data-passkey-id="/g)).toHaveLength(1)
    const signIn = await (await testBrowser(ctx).request('/dashboard/sign-in')).text()
    expect(signIn).toContain('data-verify="/dashboard/sign-in/passkey"')
    expect(signIn).toContain('<script src="/assets/passkey.js" defer></script>')
  })

  test('signed out, or with another session’s token, no ceremony starts', async () => {
    const stranger = testBrowser(ctx)
    const refused = await stranger.request('/dashboard/passkeys/options', json({ csrf: 'x', purpose: 'register', password: PASSWORD }))
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { message: string }).message).toContain('reload the page')
    const owner = await signedIn(ctx, 'owner@shop.example')
    const colleague = await signedIn(ctx, 'colleague@shop.example')
    expect((await owner.request('/dashboard/passkeys/options', json({ csrf: await sessionCsrf(colleague), purpose: 'register', password: PASSWORD }))).status).toBe(403)
  })

  test('an answer to another session’s challenge saves nothing, and an answer works once', async () => {
    const owner = await signedIn(ctx, 'owner@shop.example')
    const other = await signedIn(ctx, 'owner@shop.example')
    const csrf = await sessionCsrf(owner)
    const started = (await (await owner.request('/dashboard/passkeys/options', json({ csrf, purpose: 'register', password: PASSWORD }))).json()) as { options: never }
    const { response } = softwareAuthenticator().register(started.options, { origin })
    const before = (await listDashboardPasskeys(ctx.deps.db, (await ownerId()))).length
    // The same user, another session: the challenge was this session's.
    expect((await other.request('/dashboard/passkeys', json({ csrf: await sessionCsrf(other), response }))).status).toBe(400)
    expect((await listDashboardPasskeys(ctx.deps.db, await ownerId())).length).toBe(before)
    // Its own session: saved once; the same answer again finds its challenge used up.
    expect((await owner.request('/dashboard/passkeys', json({ csrf, response }))).status).toBe(200)
    expect((await owner.request('/dashboard/passkeys', json({ csrf, response }))).status).toBe(400)
    expect((await listDashboardPasskeys(ctx.deps.db, await ownerId())).length).toBe(before + 1)
  })

  test('at most 10 per user', async () => {
    await createUser(ctx, shop.id, 'many@shop.example')
    const many = await signedIn(ctx, 'many@shop.example')
    for (let i = 0; i < 10; i++) expect((await addPasskey(many)).body.outcome).toBe('approved')
    const eleventh = await addPasskey(many)
    expect([eleventh.status, eleventh.body.message]).toEqual([200, 'You have 10 passkeys, the most an account keeps: remove one first.'])
  })
})

describe('signing in with a passkey', () => {
  test('opens a session without the password; the dashboard shows the user', async () => {
    const owner = await signedIn(ctx, 'owner@shop.example')
    const { authenticator } = await addPasskey(owner)
    const browser = testBrowser(ctx)
    const { status, body } = await signInWithPasskey(browser, authenticator)
    expect([status, body.outcome, body.redirect]).toEqual([200, 'approved', '/dashboard/audit'])
    const page = await (await browser.request('/dashboard/audit')).text()
    expect(page).toContain('Signed in as owner@shop.example')
    const [saved] = await ctx.deps.db.select().from(dashboardPasskeys).where(eq(dashboardPasskeys.credentialId, [...authenticator.credentials.keys()][0]!))
    expect(saved!.lastUsedAt).toEqual(ctx.clock.now())
  })

  test('a replayed answer, one from another browser, one without user verification or for another origin: no session', async () => {
    const owner = await signedIn(ctx, 'owner@shop.example')
    const { authenticator } = await addPasskey(owner)
    const browser = testBrowser(ctx)
    const first = await signInWithPasskey(browser, authenticator)
    expect(first.body.outcome).toBe('approved')
    // The same answer again, from the same browser: its challenge is used up.
    const replay = await browser.request('/dashboard/sign-in/passkey', json({ csrf: first.csrf, response: first.assertion }))
    expect([replay.status, ((await replay.json()) as { outcome: string }).outcome]).toEqual([400, 'refused'])
    // Another browser posting an answer made for this one's challenge: bound to the pre-session cookie.
    const victim = testBrowser(ctx)
    const { csrf } = await readPage(await victim.request('/dashboard/sign-in'))
    const started = (await (await victim.request('/dashboard/sign-in/passkey/options', json({ csrf, purpose: 'verify' }))).json()) as { options: never }
    const stolen = authenticator.assert(started.options, { origin })
    const thief = testBrowser(ctx)
    const thiefPage = await readPage(await thief.request('/dashboard/sign-in'))
    expect((await thief.request('/dashboard/sign-in/passkey', json({ csrf: thiefPage.csrf, response: stolen }))).status).toBe(400)
    expect(thief.jar.has('ofage_dashboard')).toBe(false)
    for (const bend of [{ userVerified: false }, { origin: 'https://evil.example' }]) {
      const fresh = testBrowser(ctx)
      const refused = await signInWithPasskey(fresh, authenticator, bend)
      expect([refused.status, refused.body.message]).toEqual([400, 'This passkey does not sign in to the dashboard. Use another, or your email and password.'])
      expect(fresh.jar.has('ofage_dashboard')).toBe(false)
    }
  })

  test('an answer after the two minutes a challenge lives signs no one in', async () => {
    const owner = await signedIn(ctx, 'owner@shop.example')
    const { authenticator } = await addPasskey(owner)
    const browser = testBrowser(ctx)
    const { csrf } = await readPage(await browser.request('/dashboard/sign-in'))
    const started = (await (await browser.request('/dashboard/sign-in/passkey/options', json({ csrf, purpose: 'verify' }))).json()) as { options: never }
    ctx.clock.advance(2 * 60_000 + 1)
    const late = await browser.request('/dashboard/sign-in/passkey', json({ csrf, response: authenticator.assert(started.options, { origin }) }))
    expect(late.status).toBe(400)
    expect(browser.jar.has('ofage_dashboard')).toBe(false)
  })

  test('a passkey of nobody here (or the hosted page’s own) signs no one in', async () => {
    const unknown = softwareAuthenticator()
    unknown.register({ challenge: 'x', rp: { id: new URL(origin).hostname, name: 'x' }, user: { id: 'dXNlcg', name: 'u', displayName: 'u' }, pubKeyCredParams: [] } as never, { origin })
    const { status } = await signInWithPasskey(testBrowser(ctx), unknown)
    expect(status).toBe(400)
  })

  test('without the pre-session token, or posted from another origin, no ceremony starts', async () => {
    const browser = testBrowser(ctx)
    await browser.request('/dashboard/sign-in')
    expect((await browser.request('/dashboard/sign-in/passkey/options', json({ csrf: 'wrong', purpose: 'verify' }))).status).toBe(403)
    const { csrf } = await readPage(await browser.request('/dashboard/sign-in'))
    const foreign = await browser.request('/dashboard/sign-in/passkey/options', { ...json({ csrf, purpose: 'verify' }), headers: { 'content-type': 'application/json', origin: 'https://evil.example' } })
    expect(foreign.status).toBe(403)
    const malformed = await browser.request('/dashboard/sign-in/passkey', json({ csrf, response: { id: 'x' } }))
    expect([malformed.status, malformed.headers.get('content-type')]).toEqual([400, 'application/json'])
  })

  test('option requests count against the address’s sign-in limit', async () => {
    const limited = await createTestContext({ env: { RATE_LIMIT_SIGNIN_ADDRESS: '3' } })
    try {
      const browser = testBrowser(limited)
      const { csrf } = await readPage(await browser.request('/dashboard/sign-in'))
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) statuses.push((await browser.request('/dashboard/sign-in/passkey/options', json({ csrf, purpose: 'verify' }))).status)
      expect(statuses).toEqual([200, 200, 200, 429])
    } finally {
      await limited.close()
    }
  })
})

describe('a stolen session plants no passkey (issue 19, found 1)', () => {
  test('the session and its CSRF token alone start no ceremony: the password is asked again, a wrong one saves nothing', async () => {
    const owner = await signedIn(ctx, 'owner@shop.example')
    const before = (await listDashboardPasskeys(ctx.deps.db, await ownerId())).length
    const csrf = await sessionCsrf(owner)
    // What the thief holds: the cookie and a page's CSRF token, not the password.
    const bare = await owner.request('/dashboard/passkeys/options', json({ csrf, purpose: 'register' }))
    expect(bare.status).toBe(400)
    expect(((await bare.json()) as { options?: unknown }).options).toBeUndefined()
    const wrong = await addPasskey(owner, softwareAuthenticator(), { password: 'a guess at the password' })
    expect([wrong.status, wrong.body.outcome, wrong.body.message]).toEqual([400, 'refused', 'The password is not right. No passkey was added.'])
    // Nor may an answer be posted without a ceremony the password opened.
    const unasked = softwareAuthenticator().register({ challenge: 'bm90LWlzc3VlZA', rp: { id: new URL(origin).hostname, name: 'x' }, user: { id: 'dXNlcg', name: 'u', displayName: 'u' }, pubKeyCredParams: [] } as never, { origin })
    expect((await owner.request('/dashboard/passkeys', json({ csrf, response: unasked.response }))).status).toBe(400)
    expect((await listDashboardPasskeys(ctx.deps.db, await ownerId())).length).toBe(before)
    // The right password opens the ceremony, as before.
    expect((await addPasskey(owner)).body.outcome).toBe('approved')
  })

  test('password guesses while adding a passkey are limited per session: past the limit even the right one is refused', async () => {
    await createUser(ctx, shop.id, 'guessed@shop.example')
    const thief = await signedIn(ctx, 'guessed@shop.example')
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) statuses.push((await addPasskey(thief, softwareAuthenticator(), { password: `guess number ${i}` })).status)
    expect(statuses).toEqual([...Array(10).fill(400), 429])
    expect((await addPasskey(thief)).status).toBe(429)
    const user = (await findUserByEmail(ctx.deps.db, 'guessed@shop.example'))!
    expect(await listDashboardPasskeys(ctx.deps.db, user.id)).toHaveLength(0)
  })

  test('a planted passkey does not survive `users reset-password`: it signs no one in afterwards', async () => {
    await createUser(ctx, shop.id, 'victim@shop.example')
    const victim = await signedIn(ctx, 'victim@shop.example')
    const { authenticator } = await addPasskey(victim)
    const reset = await cli('users', 'reset-password', 'victim@shop.example')
    expect(reset.status).toBe(0)
    expect(reset.out).toContain('passkeys_removed: 1')
    expect(await listDashboardPasskeys(ctx.deps.db, (await findUserByEmail(ctx.deps.db, 'victim@shop.example'))!.id)).toHaveLength(0)
    expect((await signInWithPasskey(testBrowser(ctx), authenticator)).status).toBe(400)
  })

  test('`users reset-password` ends the account\'s sessions at once: a stolen session cannot add a passkey with the old password before the link is used', async () => {
    await createUser(ctx, shop.id, 'reset-now@shop.example')
    const thief = await signedIn(ctx, 'reset-now@shop.example')
    const csrf = await sessionCsrf(thief)
    expect((await cli('users', 'reset-password', 'reset-now@shop.example')).status).toBe(0)
    expect((await thief.request('/dashboard/settings')).status).toBe(303)
    const started = await thief.request('/dashboard/passkeys/options', json({ csrf, purpose: 'register', password: PASSWORD }))
    expect(started.status).toBe(403)
    expect(await listDashboardPasskeys(ctx.deps.db, (await findUserByEmail(ctx.deps.db, 'reset-now@shop.example'))!.id)).toHaveLength(0)
  })

  test('the set-password link offers to remove the passkeys, ticked by default; left unticked it keeps them', async () => {
    for (const [email, remove] of [
      ['linked@shop.example', true],
      ['kept@shop.example', false],
    ] as const) {
      await createUser(ctx, shop.id, email)
      const { authenticator } = await addPasskey(await signedIn(ctx, email))
      const user = (await findUserByEmail(ctx.deps.db, email))!
      const link = (await issuePasswordLink(ctx.deps, user.id))!
      const browser = testBrowser(ctx)
      const form = await readPage(await browser.request(`/dashboard/set-password?token=${link.token}`))
      expect(form.html).toMatch(/<input type="checkbox" id="remove_passkeys" name="remove_passkeys" value="1" checked/)
      expect(form.html).toContain('Also remove the 1 passkey of this account')
      // A browser leaves an unticked box out of the form.
      const fields = { csrf: form.csrf!, token: link.token, password: 'a new and long passphrase', confirm: 'a new and long passphrase', ...(remove && { remove_passkeys: '1' }) }
      expect((await browser.post('/dashboard/set-password', fields)).status).toBe(303)
      expect(await listDashboardPasskeys(ctx.deps.db, user.id)).toHaveLength(remove ? 0 : 1)
      expect((await signInWithPasskey(testBrowser(ctx), authenticator)).status).toBe(remove ? 400 : 200)
    }
    // Without passkeys there is nothing to offer.
    const { link } = await createDashboardUser(ctx.deps, { clientId: shop.id, email: 'fresh@shop.example' })
    expect(await (await testBrowser(ctx).request(`/dashboard/set-password?token=${link.token}`)).text()).not.toContain('remove_passkeys')
  })

  test('sign out everywhere offers to remove the passkeys too, ticked by default', async () => {
    await createUser(ctx, shop.id, 'everywhere@shop.example')
    const laptop = await signedIn(ctx, 'everywhere@shop.example')
    const { authenticator } = await addPasskey(laptop)
    const user = (await findUserByEmail(ctx.deps.db, 'everywhere@shop.example'))!
    const page = await laptop.request('/dashboard/sign-out-everywhere')
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toMatch(/<input type="checkbox" id="remove_passkeys" name="remove_passkeys" value="1" checked/)
    expect(html).toContain('action="/dashboard/sign-out-everywhere"')
    // Unticked: the sessions end, the passkey stays.
    const phone = await signedIn(ctx, 'everywhere@shop.example')
    expect((await phone.post('/dashboard/sign-out-everywhere', { csrf: await sessionCsrf(phone) })).headers.get('location')).toBe('/dashboard/sign-in?notice=signed_out_everywhere')
    expect((await laptop.request('/dashboard/audit')).status).toBe(303)
    expect(await listDashboardPasskeys(ctx.deps.db, user.id)).toHaveLength(1)
    // Ticked: the passkey goes with the sessions.
    const tablet = await signedIn(ctx, 'everywhere@shop.example')
    expect((await tablet.post('/dashboard/sign-out-everywhere', { csrf: await sessionCsrf(tablet), remove_passkeys: '1' })).status).toBe(303)
    expect(await listDashboardPasskeys(ctx.deps.db, user.id)).toHaveLength(0)
    expect((await signInWithPasskey(testBrowser(ctx), authenticator)).status).toBe(400)
  })

  test('the settings page lists each passkey with when, with what browser and from what network it was added; no full address or user agent is kept', async () => {
    await createUser(ctx, shop.id, 'listed@shop.example')
    const browser = await signedIn(ctx, 'listed@shop.example')
    const userAgent = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
    expect((await addPasskey(browser, softwareAuthenticator(), { headers: { 'user-agent': userAgent, 'x-forwarded-for': '203.0.113.77' } })).body.outcome).toBe('approved')
    const phone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1'
    expect((await addPasskey(browser, softwareAuthenticator(), { headers: { 'user-agent': phone, 'x-forwarded-for': '2001:db8:85a3:8d3:1319:8a2e:370:7348' } })).body.outcome).toBe('approved')
    const html = await (await browser.request('/dashboard/settings')).text()
    expect(html).toContain('<th scope="col">Added from</th>')
    expect(html).toContain('<td data-label="Added from">Firefox, Linux · 203.0.113.0/24</td>')
    expect(html).toContain('<td data-label="Added from">Safari, iOS · 2001:db8:85a3::/48</td>')
    const user = (await findUserByEmail(ctx.deps.db, 'listed@shop.example'))!
    const rows = JSON.stringify(await listDashboardPasskeys(ctx.deps.db, user.id))
    for (const kept of ['203.0.113.77', '8a2e', 'rv:133.0', 'Gecko', 'iPhone OS 18_1']) expect(rows).not.toContain(kept)
    expect(await (await browser.request('/dashboard/settings?lang=de')).text()).toContain('<th scope="col">Hinzugefügt von</th>')
  })
})

describe('removing passkeys', () => {
  test('a user removes their own; another user’s credential id removes nothing', async () => {
    await createUser(ctx, shop.id, 'remover@shop.example')
    const remover = await signedIn(ctx, 'remover@shop.example')
    const colleague = await signedIn(ctx, 'colleague@shop.example')
    const { authenticator } = await addPasskey(remover)
    const credentialId = [...authenticator.credentials.keys()][0]!
    const foreign = await colleague.post('/dashboard/passkeys/delete', { csrf: await sessionCsrf(colleague), credential_id: credentialId })
    expect(foreign.status).toBe(303)
    expect(await ctx.deps.db.select().from(dashboardPasskeys).where(eq(dashboardPasskeys.credentialId, credentialId))).toHaveLength(1)
    const own = await remover.post('/dashboard/passkeys/delete', { csrf: await sessionCsrf(remover), credential_id: credentialId })
    expect([own.status, own.headers.get('location')]).toEqual([303, '/dashboard/settings?notice=passkey_removed'])
    expect(await ctx.deps.db.select().from(dashboardPasskeys).where(eq(dashboardPasskeys.credentialId, credentialId))).toHaveLength(0)
    // Removed, it signs no one in.
    expect((await signInWithPasskey(testBrowser(ctx), authenticator)).status).toBe(400)
  })

  test('a credential id that is not base64url (a NUL byte was a 500) is a 400 page, and removes nothing', async () => {
    const owner = await signedIn(ctx, 'owner@shop.example')
    const before = (await listDashboardPasskeys(ctx.deps.db, await ownerId())).length
    for (const credentialId of ['AA\u0000A', 'a b', '', 'é']) {
      const response = await owner.post('/dashboard/passkeys/delete', { csrf: await sessionCsrf(owner), credential_id: credentialId })
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toStartWith('text/html')
    }
    expect((await listDashboardPasskeys(ctx.deps.db, await ownerId())).length).toBe(before)
  })

  test('removing the user removes their passkeys', async () => {
    await createUser(ctx, shop.id, 'leaver@shop.example')
    const leaver = await signedIn(ctx, 'leaver@shop.example')
    const { authenticator } = await addPasskey(leaver)
    await removeDashboardUser(ctx.deps.db, 'leaver@shop.example')
    expect((await signInWithPasskey(testBrowser(ctx), authenticator)).status).toBe(400)
  })
})

async function ownerId(): Promise<string> {
  return (await findUserByEmail(ctx.deps.db, 'owner@shop.example'))!.id
}
