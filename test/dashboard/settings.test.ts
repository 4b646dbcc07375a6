import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { DEMO_CLIENT_ID, demoClientSecret } from '../../src/demo/demo-client.ts'
import { findClient, updateClient } from '../../src/clients/registry.ts'
import { basic, createTestContext, PUBLIC_URL, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { testBrowser } from '../verification/browser.ts'
import { createUser, PASSWORD, postSignIn, sessionCsrf, signedIn, type DashboardBrowser } from './dashboard.ts'

/**
 * The settings page (issue 13, part 4): redirect URIs, minimum age, home address, the secret's rotation
 * with an overlap, the status and the integration snippet, each change bound to the signed-in user's
 * client and checked by what the service then does (the page accepting a redirect URI, the exchange
 * refusing an age, the token endpoint taking a secret), not only by what the page says.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
let rival: Awaited<ReturnType<TestContext['createClient']>>
let owner: DashboardBrowser
let rivalUser: DashboardBrowser
const logged: string[] = []
const SIGN_IN_LIMIT = 6

beforeAll(async () => {
  const record = (event: string, fields?: Record<string, unknown>) => void logged.push(JSON.stringify({ event, ...fields }))
  ctx = await createTestContext({ env: { RATE_LIMIT_SIGNIN_ACCOUNT: String(SIGN_IN_LIMIT), TRUST_PROXY: '1' }, log: { info: record, error: record } })
  shop = await ctx.createClient({ name: 'Shop', sandbox: true })
  rival = await ctx.createClient({ name: 'Rival', redirectUris: ['https://rival.example/cb'] })
  await createUser(ctx, shop.id, 'owner@shop.example')
  await createUser(ctx, rival.id, 'owner@rival.example')
  owner = await signedIn(ctx, 'owner@shop.example')
  rivalUser = await signedIn(ctx, 'owner@rival.example')
}, 60_000)
afterAll(() => ctx.close())

const client = async (id: string) => (await findClient(ctx.deps.db, id))!

async function settings(browser: DashboardBrowser, query = ''): Promise<string> {
  const response = await browser.request(`/dashboard/settings${query}`)
  expect(response.status).toBe(200)
  return response.text()
}

/** Posts a settings form with the session's CSRF token (unless `csrf` overrides it). */
async function post(browser: DashboardBrowser, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return browser.post(`/dashboard/settings/${path}`, { csrf: await sessionCsrf(browser), ...fields }, headers)
}

const entities: Record<string, string> = { lt: '<', gt: '>', quot: '"', amp: '&' }
const decode = (html: string) =>
  html.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (_, name: string) =>
    name.startsWith('#x') ? String.fromCodePoint(parseInt(name.slice(2), 16)) : name.startsWith('#') ? String.fromCodePoint(Number(name.slice(1))) : entities[name]!,
  )
const snippetOf = (html: string, name: string) => decode(new RegExp(`<code data-snippet="${name}">([\\s\\S]*?)</code>`).exec(html)?.[1] ?? '')
const alertOf = (html: string) => /<div role="alert" class="alert"[^>]*><p>([^<]*)<\/p>/.exec(html)?.[1]
const FLASH = 'ofage_rotated_secret'
const shownSecret = (html: string) => /<code class="mono secret" id="new-secret">([^<]+)<\/code>/.exec(html)?.[1]
/**
 * Rotates with the form, as a browser does: the post answers 303 to the settings page (post/redirect/get),
 * which shows the new secret; the sealed cookie that carried it across, as the post set it.
 */
async function rotate(browser: DashboardBrowser, overlap: string) {
  const response = await post(browser, 'rotate-secret', { overlap, password: PASSWORD })
  expect(response.status).toBe(303)
  expect(response.headers.get('location')).toBe('/dashboard/settings')
  const sealed = browser.jar.get(FLASH)!
  const html = await settings(browser)
  return { response, sealed, html, secret: shownSecret(html)! }
}
/** Whether the hosted page opens for this client and redirect URI (the exact-match rule at work). */
async function pageOpens(clientId: string, redirectUri: string): Promise<boolean> {
  const { response } = await testBrowser(ctx).open({ client_id: clientId, redirect_uri: redirectUri, state: 'st' })
  return response.status === 200
}
/** Whether the token endpoint accepts this secret (a bad code is then 400, a bad secret 401). */
async function secretWorks(clientId: string, secret: string): Promise<boolean> {
  const response = await ctx.exchange(basic(clientId, secret), { grant_type: 'authorization_code', code: 'no-such-code', redirect_uri: REDIRECT_URI })
  expect([400, 401]).toContain(response.status)
  return response.status === 400
}

describe('the settings page', () => {
  test('signed out, the page and every form send the browser to sign in, and change nothing', async () => {
    const stranger = testBrowser(ctx)
    const page = await stranger.request('/dashboard/settings')
    expect([page.status, page.headers.get('location')]).toEqual([303, '/dashboard/sign-in'])
    for (const path of ['redirect-uris/add', 'redirect-uris/remove', 'site', 'rotate-secret']) {
      const response = await stranger.post(`/dashboard/settings/${path}`, { csrf: 'x', redirect_uri: 'https://x.example/', min_age: '30', home_url: '', overlap: '0', password: PASSWORD })
      expect([response.status, response.headers.get('location')]).toEqual([303, '/dashboard/sign-in'])
    }
    expect((await client(shop.id)).redirectUris).toEqual([REDIRECT_URI])
    expect((await client(shop.id)).minAge).toBeNull()
  })

  test('shows the client id, its status and mode, the redirect URIs with the exact-match rules, under the strict CSP', async () => {
    const response = await owner.request('/dashboard/settings')
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(response.headers.get('cache-control')).toBe('no-store')
    const html = await response.text()
    expect(html).toContain(`<dd class="mono">${shop.id}</dd>`)
    expect(html).toContain('data-status="active"')
    expect(html).toContain('Test (sandbox)')
    expect(html).toContain(`data-redirect-uri="${REDIRECT_URI}"`)
    expect(html).toContain('character for character')
    // One redirect URI: no remove button for it, and the reason.
    expect(html).not.toContain('action="/dashboard/settings/redirect-uris/remove"')
    expect(html).toContain('A client keeps at least one redirect URI')
    // A suspended client says so, in words and in the attribute.
    await updateClient(ctx.deps.db, rival.id, { status: 'suspended' })
    expect(await settings(rivalUser)).toContain('data-status="suspended"')
    await updateClient(ctx.deps.db, rival.id, { status: 'active' })
  })

  test('the integration snippet carries the real client id, address, redirect URI and threshold, and is the guide’s tested code', async () => {
    const html = await settings(owner)
    expect(snippetOf(html, 'environment')).toBe([`OFAGE_URL=${PUBLIC_URL}`, `OFAGE_CLIENT_ID=${shop.id}`, 'OFAGE_CLIENT_SECRET=your-client-secret', 'OFAGE_SANDBOX=1'].join('\n'))
    // docs/integration.md §3, which test/docs.test.ts runs against a real server, with this client's values.
    const guide = /<!-- snippet: client-library -->\n```ts\n([\s\S]*?)```/.exec(readFileSync('docs/integration.md', 'utf8'))![1]!
    const expected = guide.replace("const REDIRECT_URI = 'https://shop.example/age/callback'", `const REDIRECT_URI = '${REDIRECT_URI}'`).replace('const AGE = 21', 'const AGE = 18')
    expect(expected).not.toBe(guide)
    expect(snippetOf(html, 'code')).toBe(expected)
    // A live client's environment has no sandbox line.
    expect(snippetOf(await settings(rivalUser), 'environment')).not.toContain('OFAGE_SANDBOX')
  })
})

describe('redirect URIs', () => {
  const added = 'https://shop.example/age/return?from=dashboard'

  test('an added URI is registered at once: the hosted page opens for it, and for nothing that merely resembles it', async () => {
    expect(await pageOpens(shop.id, added)).toBe(false)
    const response = await post(owner, 'redirect-uris/add', { redirect_uri: added })
    expect([response.status, response.headers.get('location')]).toEqual([303, '/dashboard/settings?notice=redirect_uri_added'])
    expect((await client(shop.id)).redirectUris).toEqual([REDIRECT_URI, added])
    expect(await settings(owner, '?notice=redirect_uri_added')).toContain('The redirect URI is added.')
    expect(await pageOpens(shop.id, added)).toBe(true)
    for (const lookalike of [`${added}&x=1`, added.replace('https:', 'http:'), added.replace('/return', '/return/'), added.toUpperCase()]) {
      expect(await pageOpens(shop.id, lookalike)).toBe(false)
    }
    // The snippet still uses the first one.
    expect(snippetOf(await settings(owner), 'code')).toContain(`const REDIRECT_URI = '${REDIRECT_URI}'`)
  })

  test('what cannot be a redirect URI is refused with the reason, the value kept in the field, nothing changed', async () => {
    const before = (await client(shop.id)).redirectUris
    for (const bad of ['javascript:alert(1)', '/relative/path', 'https://shop.example/cb#fragment', 'https://user:pw@shop.example/cb', 'https://shop.example/a b', 'https://shop.example/\ncb', 'ftp://shop.example/cb', '']) {
      const response = await post(owner, 'redirect-uris/add', { redirect_uri: bad })
      expect(response.status).toBe(400)
      const html = await response.text()
      expect(alertOf(html)).toBe('This is not a redirect URI we can register: see the rules above.')
      expect(html).toContain('aria-invalid="true"')
    }
    const duplicate = await post(owner, 'redirect-uris/add', { redirect_uri: REDIRECT_URI })
    expect(duplicate.status).toBe(400)
    expect(alertOf(await duplicate.text())).toBe('This redirect URI is registered already.')
    expect((await client(shop.id)).redirectUris).toEqual(before)
  })

  test('a removed URI is refused by the page at once; the last one cannot be removed; an unknown one is said so', async () => {
    const added = 'https://shop.example/to-remove'
    await post(owner, 'redirect-uris/add', { redirect_uri: added })
    expect(await pageOpens(shop.id, added)).toBe(true)
    const response = await post(owner, 'redirect-uris/remove', { redirect_uri: added })
    expect([response.status, response.headers.get('location')]).toEqual([303, '/dashboard/settings?notice=redirect_uri_removed'])
    expect(await pageOpens(shop.id, added)).toBe(false)
    const unknown = await post(owner, 'redirect-uris/remove', { redirect_uri: 'https://never.example/' })
    expect([unknown.status, alertOf(await unknown.text())]).toEqual([400, 'This redirect URI is not registered.'])

    const last = await post(rivalUser, 'redirect-uris/remove', { redirect_uri: 'https://rival.example/cb' })
    expect([last.status, alertOf(await last.text())]).toEqual([400, 'A client keeps at least one redirect URI: add another before removing this one.'])
    expect((await client(rival.id)).redirectUris).toEqual(['https://rival.example/cb'])
  })

  test('at most 50 per client', async () => {
    const many = await ctx.createClient({ name: 'Many', redirectUris: Array.from({ length: 50 }, (_, i) => `https://many.example/${i}`) })
    await createUser(ctx, many.id, 'owner@many.example')
    const user = await signedIn(ctx, 'owner@many.example')
    const response = await post(user, 'redirect-uris/add', { redirect_uri: 'https://many.example/51' })
    expect([response.status, alertOf(await response.text())]).toEqual([400, 'A client has at most 50 redirect URIs: remove one first.'])
    expect((await client(many.id)).redirectUris).toHaveLength(50)
  })

  test('two users adding at once both land: the row is locked while the list is worked out', async () => {
    const second = await signedIn(ctx, 'owner@shop.example')
    const uris = Array.from({ length: 6 }, (_, i) => `https://shop.example/parallel/${i}`)
    const responses = await Promise.all(uris.map((uri, i) => post(i % 2 === 0 ? owner : second, 'redirect-uris/add', { redirect_uri: uri })))
    expect(responses.map((r) => r.status)).toEqual(uris.map(() => 303))
    const registered = (await client(shop.id)).redirectUris
    for (const uri of uris) expect(registered).toContain(uri)
    for (const uri of uris) await post(owner, 'redirect-uris/remove', { redirect_uri: uri })
  })
})

describe('minimum age and home address', () => {
  test('a minimum age is enforced at the exchange at once; empty removes it', async () => {
    const response = await post(owner, 'site', { min_age: '21', home_url: '' })
    expect([response.status, response.headers.get('location')]).toEqual([303, '/dashboard/settings?notice=site_saved'])
    expect((await client(shop.id)).minAge).toBe(21)
    const { code } = await ctx.issueCode({ clientId: shop.id, ageOver: 18, state: 'st' })
    const refused = await ctx.exchange(shop.authorization, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 'st' })
    expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([403, 'age_requirement_not_met'])
    // The snippet asks for the minimum age now.
    expect(snippetOf(await settings(owner), 'code')).toContain('const AGE = 21')

    await post(owner, 'site', { min_age: '', home_url: '' })
    expect((await client(shop.id)).minAge).toBeNull()
    const { code: again } = await ctx.issueCode({ clientId: shop.id, ageOver: 18, state: 'st' })
    expect((await ctx.exchange(shop.authorization, { grant_type: 'authorization_code', code: again, redirect_uri: REDIRECT_URI, state: 'st' })).status).toBe(200)
  })


  test('the home address is what the page’s “Back to site” link leads to; empty falls back to the redirect URI’s origin', async () => {
    await post(owner, 'site', { min_age: '', home_url: 'https://shop.example/welcome' })
    expect((await client(shop.id)).homeUrl).toBe('https://shop.example/welcome')
    expect(await settings(owner)).toContain('value="https://shop.example/welcome"')
    await post(owner, 'site', { min_age: '', home_url: '' })
    expect((await client(shop.id)).homeUrl).toBeNull()
    expect(await settings(owner)).toContain('Empty: https://shop.example/')
  })

  test('values out of range or of the wrong shape are refused with the reason, and nothing is saved', async () => {
    await post(owner, 'site', { min_age: '25', home_url: 'https://shop.example/' })
    for (const minAge of ['0', '100', '-1', '1e1', '18.5', 'abc', '１８']) {
      const response = await post(owner, 'site', { min_age: minAge, home_url: '' })
      expect([response.status, alertOf(await response.text())]).toEqual([400, 'The minimum age is a whole number from 1 to 99, or empty.'])
    }
    for (const homeUrl of ['javascript:alert(1)', 'shop.example', 'https://shop.example/#top', 'https://a:b@shop.example/']) {
      const response = await post(owner, 'site', { min_age: '18', home_url: homeUrl })
      expect(response.status).toBe(400)
      const html = await response.text()
      expect(alertOf(html)).toStartWith('The home address must be an absolute http(s) address')
      // What the user typed is shown again, escaped.
      expect(html).toContain(`value="${homeUrl.replaceAll('&', '&amp;')}"`)
    }
    expect(await client(shop.id)).toMatchObject({ minAge: 25, homeUrl: 'https://shop.example/' })
    await post(owner, 'site', { min_age: '', home_url: '' })
  })
})

describe('ways to verify', () => {
  test('the boxes show the client’s ways; saving a choice changes what the page offers, and none ticked is refused', async () => {
    const html = await settings(owner)
    for (const method of ['face', 'credential', 'passkey', 'age_pass']) expect(html).toMatch(new RegExp(`id="method_${method}"[^>]*checked`))
    const saved = await owner.post('/dashboard/settings/methods', { csrf: await sessionCsrf(owner), method_credential: 'on', method_age_pass: 'on' })
    expect(saved.status).toBe(303)
    expect(saved.headers.get('location')).toBe('/dashboard/settings?notice=methods_saved')
    expect((await client(shop.id)).methods).toEqual(['credential', 'age_pass'])
    const after = await settings(owner, '?notice=methods_saved')
    expect(after).toContain('The ways to verify are saved.')
    expect(after).not.toMatch(/id="method_face"[^>]*checked/)
    const none = await owner.post('/dashboard/settings/methods', { csrf: await sessionCsrf(owner) })
    expect(none.status).toBe(400)
    expect(alertOf(await none.text())).toBe('Tick at least one way.')
    expect((await client(shop.id)).methods).toEqual(['credential', 'age_pass'])
    const forged = await owner.post('/dashboard/settings/methods', { csrf: 'wrong', method_face: 'on' })
    expect(forged.status).toBe(403)
    await owner.post('/dashboard/settings/methods', { csrf: await sessionCsrf(owner), method_face: 'on', method_credential: 'on', method_passkey: 'on', method_age_pass: 'on' })
    expect((await client(shop.id)).methods).toEqual(['face', 'credential', 'passkey', 'age_pass'])
  })
})

describe('rotating the secret', () => {
  test('asks for the password again: a wrong one rotates nothing and the secret keeps working', async () => {
    const response = await post(owner, 'rotate-secret', { overlap: '0', password: 'not my password at all' })
    expect([response.status, alertOf(await response.text())]).toEqual([400, 'The password is not right. The secret was not rotated.'])
    expect(await secretWorks(shop.id, shop.secret)).toBe(true)
  })

  test('without an overlap: the post redirects, the page it leads to shows the new secret once (in the snippet too), the old one stops at once', async () => {
    const { response, sealed, html, secret } = await rotate(owner, '0')
    // Carried across the redirect sealed, HttpOnly, for the settings page alone, for five minutes; never stored.
    const flashCookie = response.headers.getSetCookie().find((line) => line.startsWith(`${FLASH}=`))!
    expect(flashCookie).toContain('HttpOnly')
    expect(flashCookie).toContain('SameSite=Strict')
    expect(flashCookie).toContain('Path=/dashboard/settings')
    expect(flashCookie).toContain('Max-Age=300')
    expect(sealed).not.toContain(secret)
    expect(html).toContain('it is shown only this once')
    expect(html).toContain('The previous secret no longer works.')
    // The snippet to copy carries it on this one view, in its open section, instead of a placeholder.
    expect(snippetOf(html, 'environment')).toContain(`OFAGE_CLIENT_SECRET=${secret}\n`)
    expect(html).toMatch(/<details class="section" open><summary><h2 id="integration-heading">/)
    expect(await secretWorks(shop.id, secret)).toBe(true)
    expect(await secretWorks(shop.id, shop.secret)).toBe(false)
    // Read once: the view cleared the cookie; a reload shows the placeholder. Never logged.
    expect(owner.jar.has(FLASH)).toBe(false)
    const reloaded = await settings(owner)
    expect(reloaded).not.toContain(secret)
    expect(snippetOf(reloaded, 'environment')).toContain('OFAGE_CLIENT_SECRET=your-client-secret')
    expect(logged.join('\n')).not.toContain(secret)
    expect(logged.some((line) => line.includes('"change":"secret_rotated"') && line.includes(shop.id))).toBe(true)
    shop.secret = secret
    shop.authorization = basic(shop.id, secret)
  })

  test('with an overlap: both secrets work until it ends, both shown as such; then only the new one', async () => {
    const { html, secret } = await rotate(owner, '86400')
    const until = new Date(ctx.clock.now().getTime() + 86_400_000)
    // The test context's clock stands at 2026-11-22T12:00Z (test/helpers.ts); a day on, as CLDR writes it in English.
    expect(until.toISOString()).toBe('2026-11-23T12:00:00.000Z')
    expect(html).toContain('The previous secret also works until Nov 23, 2026, 12:00:00 UTC. Both are accepted until then.')
    expect(await secretWorks(shop.id, secret)).toBe(true)
    expect(await secretWorks(shop.id, shop.secret)).toBe(true)
    // The page says so while the overlap lasts.
    expect(await settings(owner)).toContain(`data-overlap-until="${until.toISOString()}"`)
    ctx.clock.advance(86_400_000 + 1000)
    // A day on, the sessions have ended (idle); sign in again.
    owner = await signedIn(ctx, 'owner@shop.example')
    rivalUser = await signedIn(ctx, 'owner@rival.example')
    expect(await secretWorks(shop.id, shop.secret)).toBe(false)
    expect(await secretWorks(shop.id, secret)).toBe(true)
    expect(await settings(owner)).not.toContain('data-overlap-until')
    shop.secret = secret
    shop.authorization = basic(shop.id, secret)
  })

  test('an overlap not offered is refused before the password is checked', async () => {
    for (const overlap of ['99', '2592001', '', '-1', '1e3']) {
      const response = await post(owner, 'rotate-secret', { overlap, password: PASSWORD })
      expect([response.status, alertOf(await response.text())]).toEqual([400, 'Choose one of the listed times.'])
    }
    expect(await secretWorks(shop.id, shop.secret)).toBe(true)
  })

  test('the form offers a day’s overlap by default; none (stops now) is still a choice', async () => {
    const html = await settings(owner)
    const select = /<select id="overlap"[\s\S]*?<\/select>/.exec(html)![0]
    expect([...select.matchAll(/<option value="(\d+)" selected/g)].map((match) => match[1])).toEqual(['86400'])
    expect(select).toContain('<option value="0">No time: it stops working now (a leaked secret)</option>')
  })

  test('the sealed secret opens once, for the session that rotated, within five minutes, and only while it is the client’s secret', async () => {
    const other = await signedIn(ctx, 'owner@shop.example')
    // Another session of the same user, handed the cookie: nothing shown, and the cookie is cleared.
    const first = await post(owner, 'rotate-secret', { overlap: '0', password: PASSWORD })
    expect(first.status).toBe(303)
    const sealed = owner.jar.get(FLASH)!
    other.jar.set(FLASH, sealed)
    const elsewhere = await settings(other)
    expect(shownSecret(elsewhere)).toBeUndefined()
    expect(other.jar.has(FLASH)).toBe(false)
    // Its own session, once more than five minutes have passed: nothing.
    ctx.clock.advance(301_000)
    expect(shownSecret(await settings(owner))).toBeUndefined()
    // Rotated again before the page was read: the first secret no longer works, so it is not shown.
    const second = await post(owner, 'rotate-secret', { overlap: '0', password: PASSWORD })
    const stale = owner.jar.get(FLASH)!
    await post(owner, 'rotate-secret', { overlap: '0', password: PASSWORD })
    const current = owner.jar.get(FLASH)!
    owner.jar.set(FLASH, stale)
    expect(second.status).toBe(303)
    expect(shownSecret(await settings(owner))).toBeUndefined()
    // Tampered or made up: the page, without a secret, never a 500.
    // Edited in the middle of its ciphertext: a base64url part's last character carries unused bits.
    const parts = current.split('.')
    const at = Math.floor(parts[3]!.length / 2)
    parts[3] = `${parts[3]!.slice(0, at)}${parts[3]![at] === 'A' ? 'B' : 'A'}${parts[3]!.slice(at + 1)}`
    for (const value of [parts.join('.'), 'not-a-jwe', `${current}.extra`, '{"secret":"chosen"}', '12345']) {
      owner.jar.set(FLASH, value)
      expect(shownSecret(await settings(owner))).toBeUndefined()
    }
    // The one that is current still opens, for its session: the secret the token endpoint now takes.
    owner.jar.set(FLASH, current)
    const secret = shownSecret(await settings(owner))!
    expect(await secretWorks(shop.id, secret)).toBe(true)
    shop.secret = secret
    shop.authorization = basic(shop.id, secret)
  })

  test('strangers’ failed sign-ins for the owner’s email, from many addresses and from the owner’s own, do not block rotation in a signed-in session (issue 19, found 2)', async () => {
    for (let i = 0; i < 2 * SIGN_IN_LIMIT; i++) {
      for (const variant of [' OWNER@SHOP.EXAMPLE', 'Owner@Shop.Example ']) await postSignIn(testBrowser(ctx), variant, `wrong guess ${i}`, { 'x-forwarded-for': `192.0.2.${i + 1}` })
    }
    // Someone behind the owner's own address (an office's, a café's): that address's sign-in is now held, the session's confirmation is not.
    const statuses: number[] = []
    for (let i = 0; i <= SIGN_IN_LIMIT; i++) statuses.push((await postSignIn(testBrowser(ctx), 'OWNER@shop.example', `a neighbour's guess ${i}`)).status)
    expect(statuses.at(-1)).toBe(429)
    const { secret } = await rotate(owner, '3600')
    expect(await secretWorks(shop.id, secret)).toBe(true)
    shop.secret = secret
    shop.authorization = basic(shop.id, secret)
  })

  test('password guesses from a stolen session count against the sign-in limit of the account', async () => {
    const thief = await signedIn(ctx, 'owner@rival.example')
    let status = 0
    for (let i = 0; i < SIGN_IN_LIMIT + 1 && status !== 429; i++) status = (await post(thief, 'rotate-secret', { overlap: '0', password: `guess number ${i}` })).status
    expect(status).toBe(429)
    // Even the right password is refused now, and the rival's secret is the one it had.
    expect((await post(thief, 'rotate-secret', { overlap: '0', password: PASSWORD })).status).toBe(429)
    expect(await secretWorks(rival.id, rival.secret)).toBe(true)
  })
})

describe('only the signed-in user’s client, only from its own pages', () => {
  test('no form names a client: a client_id field is ignored, and another client’s URI is "not registered"', async () => {
    const response = await post(rivalUser, 'redirect-uris/add', { redirect_uri: 'https://rival.example/extra', client_id: shop.id })
    expect(response.status).toBe(303)
    expect((await client(rival.id)).redirectUris).toContain('https://rival.example/extra')
    expect((await client(shop.id)).redirectUris).not.toContain('https://rival.example/extra')
    const foreign = await post(rivalUser, 'redirect-uris/remove', { redirect_uri: REDIRECT_URI, client_id: shop.id })
    expect([foreign.status, alertOf(await foreign.text())]).toEqual([400, 'This redirect URI is not registered.'])
    expect((await client(shop.id)).redirectUris).toContain(REDIRECT_URI)
    await post(rivalUser, 'redirect-uris/remove', { redirect_uri: 'https://rival.example/extra' })
  })

  test('no CSRF token is 400, a wrong or another session’s token 403, a foreign origin 403: nothing changes', async () => {
    const add = (fields: Record<string, string>, headers: Record<string, string> = {}) => owner.post('/dashboard/settings/redirect-uris/add', { redirect_uri: 'https://evil.example/cb', ...fields }, headers)
    expect((await add({})).status).toBe(400)
    expect((await add({ csrf: 'wrong' })).status).toBe(403)
    expect((await add({ csrf: await sessionCsrf(rivalUser) })).status).toBe(403)
    expect((await add({ csrf: await sessionCsrf(owner) }, { origin: 'https://evil.example' })).status).toBe(403)
    expect((await add({ csrf: await sessionCsrf(owner) }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    const rotate = await owner.post('/dashboard/settings/rotate-secret', { csrf: 'wrong', overlap: '0', password: PASSWORD })
    expect(rotate.status).toBe(403)
    expect((await client(shop.id)).redirectUris).not.toContain('https://evil.example/cb')
    expect(await secretWorks(shop.id, shop.secret)).toBe(true)
  })

  test('in German by Accept-Language, forms keeping ?lang', async () => {
    const html = await (await owner.request('/dashboard/settings?lang=de')).text()
    expect(html).toContain('<h1>Einstellungen</h1>')
    expect(html).toContain('action="/dashboard/settings/redirect-uris/add?lang=de"')
    const response = await owner.post('/dashboard/settings/site?lang=de', { csrf: await sessionCsrf(owner), min_age: '0', home_url: '' })
    expect(alertOf(await response.text())).toBe('Das Mindestalter ist eine ganze Zahl von 1 bis 99, oder leer.')
    const saved = await owner.post('/dashboard/settings/site?lang=de', { csrf: await sessionCsrf(owner), min_age: '', home_url: '' })
    expect(saved.headers.get('location')).toBe('/dashboard/settings?notice=site_saved&lang=de')
  })
})

describe('the demo client', () => {
  test('its secret is not rotated from the dashboard: /demo derives it, and would stop working', async () => {
    const demo = await createTestContext({ env: { OFAGE_DEMO: '1' } })
    try {
      await createUser(demo, DEMO_CLIENT_ID, 'you@example.com')
      const user = await signedIn(demo, 'you@example.com')
      const page = await (await user.request('/dashboard/settings')).text()
      expect(page).not.toContain('action="/dashboard/settings/rotate-secret"')
      expect(page).toContain('The demo client’s secret is derived by the server')
      const response = await user.post('/dashboard/settings/rotate-secret', { csrf: await sessionCsrf(user), overlap: '0', password: PASSWORD })
      expect(response.status).toBe(400)
      const refused = await demo.exchange(basic(DEMO_CLIENT_ID, demoClientSecret(demo.deps)), { grant_type: 'authorization_code', code: 'made-up', redirect_uri: REDIRECT_URI })
      expect(refused.status).toBe(400)
    } finally {
      await demo.close()
    }
  })
})
