import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { dashboardPasskeys } from '../../src/db/schema.ts'
import { listDashboardPasskeys } from '../../src/dashboard/passkeys.ts'
import { findUserByEmail, removeDashboardUser } from '../../src/dashboard/users.ts'
import { createTestContext, PUBLIC_URL, type TestContext } from '../helpers.ts'
import { softwareAuthenticator } from '../passkeys/authenticator.ts'
import { readPage, testBrowser } from '../verification/browser.ts'
import { createUser, sessionCsrf, signedIn, type DashboardBrowser } from './dashboard.ts'

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
  ctx = await createTestContext({ env: { RATE_LIMIT_SIGNIN_ADDRESS: '1000' } })
  shop = await ctx.createClient({ name: 'Shop' })
  await createUser(ctx, shop.id, 'owner@shop.example')
  await createUser(ctx, shop.id, 'colleague@shop.example')
}, 60_000)
afterAll(() => ctx.close())

const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) })

/** Adds a passkey to the signed-in user as the settings page's script does; returns the answer's JSON and status. */
async function addPasskey(browser: DashboardBrowser, authenticator = softwareAuthenticator()) {
  const csrf = await sessionCsrf(browser)
  const started = (await (await browser.request('/dashboard/passkeys/options', json({ csrf, purpose: 'register' }))).json()) as { options: never }
  const { response } = authenticator.register(started.options, { origin })
  const answer = await browser.request('/dashboard/passkeys', json({ csrf, response }))
  return { status: answer.status, body: (await answer.json()) as Record<string, string>, authenticator }
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
    const refused = await stranger.request('/dashboard/passkeys/options', json({ csrf: 'x', purpose: 'register' }))
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { message: string }).message).toContain('reload the page')
    const owner = await signedIn(ctx, 'owner@shop.example')
    const colleague = await signedIn(ctx, 'colleague@shop.example')
    expect((await owner.request('/dashboard/passkeys/options', json({ csrf: await sessionCsrf(colleague), purpose: 'register' }))).status).toBe(403)
  })

  test('an answer to another session’s challenge saves nothing, and an answer works once', async () => {
    const owner = await signedIn(ctx, 'owner@shop.example')
    const other = await signedIn(ctx, 'owner@shop.example')
    const csrf = await sessionCsrf(owner)
    const started = (await (await owner.request('/dashboard/passkeys/options', json({ csrf, purpose: 'register' }))).json()) as { options: never }
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
