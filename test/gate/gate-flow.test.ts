import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { auditLogs } from '../../src/db/schema.ts'
import { sealGatePass } from '../../src/gate/gate-cookie.ts'
import { updateGate } from '../../src/gate/gate-settings.ts'
import { updateClient } from '../../src/clients/registry.ts'
import { createTestContext, json, PUBLIC_URL, queryRows, type TestContext } from '../helpers.ts'
import { addWebhookEndpoint } from '../../src/webhooks/endpoints.ts'
import { readPage, testBrowser } from '../verification/browser.ts'

/**
 * The gate's contract in-process (docs/gate.md): `/gate/auth` as a proxy asks it, and a visitor's walk
 * through `/.ofage/start`, the hosted page's sandbox check and `/.ofage/callback` on a gated host.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
let other: Awaited<ReturnType<TestContext['createClient']>>
const SHOP = 'https://shop.example'
const BLOG = 'https://blog.example'

beforeAll(async () => {
  ctx = await createTestContext()
  shop = await ctx.createClient({ name: 'Shop', sandbox: true })
  other = await ctx.createClient({ name: 'Blog', sandbox: true })
  await updateGate(ctx.deps, shop.id, { addHosts: ['shop.example'], age: 18 })
  await updateGate(ctx.deps, other.id, { addHosts: ['blog.example'] })
  named.set('shop.example', shop.id).set('blog.example', other.id)
})
afterAll(() => ctx.close())

/** The client each host's proxy configuration names (docs/gate.md). */
const named = new Map<string, string>()

/**
 * A request as a proxy in front of `host` forwards it, configured as docs/gate.md says: the host in
 * X-Forwarded-Host, the scheme in X-Forwarded-Proto, the client its configuration names (`client=` on
 * /gate/auth, X-Ofage-Client on /.ofage/; `client: null` for a configuration that names none), the
 * visitor's cookies.
 */
function viaProxy(path: string, host: string, init: { cookie?: string; headers?: Record<string, string>; method?: string; client?: string | null } = {}) {
  const url = new URL(`${PUBLIC_URL}${path}`)
  const headers = new Headers({ 'x-forwarded-host': host, 'x-forwarded-proto': 'https', ...init.headers })
  const client = init.client === undefined ? named.get(host.toLowerCase().replace(/:\d+$/, '')) : init.client
  if (client != null && url.pathname === '/gate/auth') url.searchParams.set('client', client)
  else if (client != null) headers.set('x-ofage-client', client)
  if (init.cookie) headers.set('cookie', init.cookie)
  return ctx.handle(new Request(url, { method: init.method ?? 'GET', headers }))
}

function setCookie(response: Response, name: string): string | undefined {
  const line = response.headers.getSetCookie().find((l) => l.startsWith(`${name}=`))
  return line?.slice(name.length + 1).split(';')[0]
}

/** Notices of a change arrive asynchronously: waits until `/gate/auth` answers `status` (at most 3 s). */
async function authSettles(host: string, cookie: string, status: number): Promise<number> {
  let last = 0
  for (let i = 0; i < 60; i++) {
    last = (await viaProxy('/gate/auth', host, { cookie })).status
    if (last === status) return last
    await Bun.sleep(50)
  }
  return last
}

/** Walks a visitor through the gate: start, the sandbox check at `age`, the callback. Returns the gate cookie line. */
async function passGate(host: string, rd = '/account?tab=orders', age = '30') {
  const start = await viaProxy(`/.ofage/start?rd=${encodeURIComponent(rd)}`, host)
  expect(start.status).toBe(303)
  const flow = setCookie(start, '__Host-ofage_gate_flow')!
  expect(start.headers.getSetCookie()[0]).toMatch(/; Max-Age=1800; Path=\/; HttpOnly; SameSite=Lax; Secure$/)
  const page = new URL(start.headers.get('location')!)
  expect(page.origin).toBe(PUBLIC_URL)
  expect([...page.searchParams.keys()]).toEqual(['client_id', 'request_uri'])
  const browser = testBrowser(ctx)
  const opened = await browser.request(`${page.pathname}${page.search}`)
  expect(opened.status).toBe(200)
  const form = await readPage(opened)
  const done = await browser.post(form.action('/methods/sandbox'), { csrf: form.csrf!, age, method_class: 'age_only' })
  expect(done.status).toBe(303)
  const back = new URL(done.headers.get('location')!)
  expect(`${back.origin}${back.pathname}`).toBe(`https://${host}/.ofage/callback`)
  const finished = await viaProxy(`${back.pathname}${back.search}`, host, { cookie: `__Host-ofage_gate_flow=${flow}` })
  return { finished, back, flow }
}

describe('a visitor through the gate', () => {
  test('start → the hosted page → sandbox check → callback sets a __Host- gate cookie and returns to the page asked for', async () => {
    const { finished } = await passGate('shop.example')
    expect(finished.status).toBe(303)
    expect(finished.headers.get('location')).toBe('/account?tab=orders')
    const lines = finished.headers.getSetCookie()
    expect(lines).toContain('__Host-ofage_gate_flow=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure')
    const gate = lines.find((line) => line.startsWith('__Host-ofage_gate='))!
    expect(gate).toMatch(/; Max-Age=2592000; Path=\/; HttpOnly; SameSite=Lax; Secure$/)
    const cookie = gate.split(';')[0]!
    const auth = await viaProxy('/gate/auth', 'shop.example', { cookie })
    expect(auth.status).toBe(200)
    expect(auth.headers.get('x-age-over')).toBe('18')
    const verificationId = auth.headers.get('x-verification-id')!
    // An ordinary verification: its audit row, counted in the client's usage.
    const [row] = await ctx.deps.db.select().from(auditLogs).where(eq(auditLogs.transactionId, verificationId))
    expect(row).toMatchObject({ clientId: shop.id, ageOver: 18, methodClass: 'age_only' })
    const usage = await json(await ctx.request('/api/oauth/usage?period=all', { headers: { authorization: shop.authorization } }))
    expect(usage.usage.total_verifications).toBeGreaterThanOrEqual(1)
  })

  test('an ordinary verification of the client: its webhook event, and its plan limit at the start', async () => {
    const counted = await ctx.createClient({ name: 'Counted', sandbox: true, verificationLimit: 1 })
    await updateGate(ctx.deps, counted.id, { addHosts: ['counted.example'] })
    named.set('counted.example', counted.id)
    await addWebhookEndpoint(ctx.deps, counted.id, { url: 'https://hooks.example/ofage' })
    const { finished } = await passGate('counted.example')
    expect(finished.status).toBe(303)
    const verificationId = (await viaProxy('/gate/auth', 'counted.example', { cookie: finished.headers.getSetCookie().find((l) => l.startsWith('__Host-ofage_gate='))!.split(';')[0] })).headers.get('x-verification-id')
    const events = await queryRows<{ type: string; payload: string }>(ctx.deps.db, sql`select d.event_type as type, d.payload from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where e.client_id = ${counted.id}`)
    expect(events.map((e) => e.type)).toContain('verification.approved')
    expect(events.find((e) => e.type === 'verification.approved')!.payload).toContain(verificationId!)
    // The month's one verification is used: the next visitor is told so at the start, as on the page.
    const refused = await viaProxy('/.ofage/start', 'counted.example')
    expect(refused.status).toBe(402)
    expect(await refused.text()).toContain('payment_required')
  })

  test('a check under the age fails on the page and never reaches the callback', async () => {
    const start = await viaProxy('/.ofage/start', 'shop.example')
    const page = new URL(start.headers.get('location')!)
    const browser = testBrowser(ctx)
    const form = await readPage(await browser.request(`${page.pathname}${page.search}`))
    const failed = await browser.post(form.action('/methods/sandbox'), { csrf: form.csrf!, age: '17', method_class: 'age_only' })
    // A failed check stays on the page (200, with its alert), never a redirect to the callback nor a 5xx.
    expect(failed.status).toBe(200)
    expect(failed.headers.get('location')).toBeNull()
    expect(await failed.text()).toContain('role="alert"')
  })

  test('the callback redeems a code only for the browser that started it: another flow cookie, none, or a second use is refused', async () => {
    const { back, flow } = await passGate('shop.example')
    // The same callback again: the code was redeemed, and the flow cookie is spent in the browser anyway.
    const again = await viaProxy(`${back.pathname}${back.search}`, 'shop.example', { cookie: `__Host-ofage_gate_flow=${flow}` })
    expect(again.status).toBe(400)
    expect(await again.text()).toContain('code_already_used')

    // A code made for this browser, delivered to a browser with no flow or another one's.
    const start = await viaProxy('/.ofage/start', 'shop.example')
    const otherFlow = setCookie(await viaProxy('/.ofage/start', 'shop.example'), '__Host-ofage_gate_flow')!
    const page = new URL(start.headers.get('location')!)
    const browser = testBrowser(ctx)
    const form = await readPage(await browser.request(`${page.pathname}${page.search}`))
    const done = await browser.post(form.action('/methods/sandbox'), { csrf: form.csrf!, age: '30', method_class: 'age_only' })
    const stolen = new URL(done.headers.get('location')!)
    for (const cookie of [undefined, `__Host-ofage_gate_flow=${otherFlow}`, `__Host-ofage_gate_flow=${otherFlow}x`]) {
      const refused = await viaProxy(`${stolen.pathname}${stolen.search}`, 'shop.example', { cookie })
      expect(refused.status).toBe(400)
      expect(await refused.text()).toContain('session_expired')
      expect(refused.headers.getSetCookie().some((line) => line.startsWith('__Host-ofage_gate='))).toBe(false)
    }
  })

  test('the flow cookie of one gated host does not finish a check on another', async () => {
    const start = await viaProxy('/.ofage/start', 'blog.example')
    const flow = setCookie(start, '__Host-ofage_gate_flow')!
    const page = new URL(start.headers.get('location')!)
    const browser = testBrowser(ctx)
    const form = await readPage(await browser.request(`${page.pathname}${page.search}`))
    const done = await browser.post(form.action('/methods/sandbox'), { csrf: form.csrf!, age: '30', method_class: 'age_only' })
    const back = new URL(done.headers.get('location')!)
    expect(back.host).toBe('blog.example')
    const elsewhere = await viaProxy(`${back.pathname}${back.search}`, 'shop.example', { cookie: `__Host-ofage_gate_flow=${flow}` })
    expect(elsewhere.status).toBe(400)
  })
})

describe('/gate/auth, as a proxy asks it', () => {
  let cookie: string
  beforeAll(async () => {
    const { finished } = await passGate('shop.example')
    cookie = finished.headers.getSetCookie().find((line) => line.startsWith('__Host-ofage_gate='))!.split(';')[0]!
  })

  test('without a cookie: 401, or with ?redirect=1 a 302 to the host\'s start carrying the URI', async () => {
    expect((await viaProxy('/gate/auth', 'shop.example')).status).toBe(401)
    const redirect = await viaProxy('/gate/auth?redirect=1', 'shop.example', { headers: { 'x-forwarded-uri': '/cart?item=1&size=m', 'x-forwarded-method': 'GET' } })
    expect(redirect.status).toBe(302)
    expect(redirect.headers.get('location')).toBe('https://shop.example/.ofage/start?rd=%2Fcart%3Fitem%3D1%26size%3Dm')
    // A form post is not replayed by a redirect: the proxy says 401.
    const post = await viaProxy('/gate/auth?redirect=1', 'shop.example', { headers: { 'x-forwarded-uri': '/cart', 'x-forwarded-method': 'POST' } })
    expect(post.status).toBe(401)
  })

  test('the redirect names the gated origin itself: Traefik resolved the relative one against its auth server\'s address', async () => {
    // traefik/traefik#11313: ForwardAuth makes a relative Location absolute against `address`, an internal
    // address no visitor reaches. The origin comes from the gated hosts, never from a request header.
    const redirect = await viaProxy('/gate/auth?redirect=1', 'SHOP.example:443', { headers: { host: '127.0.0.1:3000', 'x-forwarded-uri': '/a', 'x-forwarded-method': 'HEAD' } })
    const location = new URL(redirect.headers.get('location')!, 'http://127.0.0.1:3000/gate/auth?redirect=1')
    expect(location.href).toBe(`${SHOP}/.ofage/start?rd=%2Fa`)
  })

  test('a host no client gates is refused with 403, whatever cookie comes with it', async () => {
    const response = await viaProxy('/gate/auth', 'unknown.example', { cookie })
    expect(response.status).toBe(403)
    expect(response.headers.get('x-age-over')).toBeNull()
  })

  test('the same host without its port, or with its default one, is the same gated origin; another port is not', async () => {
    expect((await viaProxy('/gate/auth', 'shop.example:443', { cookie })).status).toBe(200)
    expect((await viaProxy('/gate/auth', 'SHOP.example', { cookie })).status).toBe(200)
    expect((await viaProxy('/gate/auth', 'shop.example:8443', { cookie })).status).toBe(403)
  })

  test('a tampered, truncated or re-signed cookie is refused', async () => {
    const value = cookie.slice(cookie.indexOf('=') + 1)
    const [body, mac] = value.split('.') as [string, string]
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString())
    const raised = Buffer.from(JSON.stringify({ ...payload, a: 99 })).toString('base64url')
    for (const forged of [`${raised}.${mac}`, value.slice(0, -2), `${body}.`, `${body}`, sealGatePass(new Uint8Array(32), { clientId: shop.id, origin: SHOP, ageOver: 18, verificationId: 'x', issuedAt: payload.i, expiresAt: payload.e })]) {
      expect((await viaProxy('/gate/auth', 'shop.example', { cookie: `__Host-ofage_gate=${forged}` })).status).toBe(401)
    }
  })

  test('a cookie made for another host or another client is refused; the plain name does not count on an https host', async () => {
    const key = ctx.deps.keys.gateKey
    const now = Math.floor(ctx.clock.now().getTime() / 1000)
    const forBlog = sealGatePass(key, { clientId: other.id, origin: BLOG, ageOver: 30, verificationId: 'v', issuedAt: now, expiresAt: now + 3600 })
    expect((await viaProxy('/gate/auth', 'blog.example', { cookie: `__Host-ofage_gate=${forBlog}` })).status).toBe(200)
    expect((await viaProxy('/gate/auth', 'shop.example', { cookie: `__Host-ofage_gate=${forBlog}` })).status).toBe(401)
    const otherClient = sealGatePass(key, { clientId: other.id, origin: SHOP, ageOver: 30, verificationId: 'v', issuedAt: now, expiresAt: now + 3600 })
    expect((await viaProxy('/gate/auth', 'shop.example', { cookie: `__Host-ofage_gate=${otherClient}` })).status).toBe(401)
    const value = cookie.slice(cookie.indexOf('=') + 1)
    expect((await viaProxy('/gate/auth', 'shop.example', { cookie: `ofage_gate=${value}` })).status).toBe(401)
    // Among several cookies of the name, one that counts lets the request through.
    expect((await viaProxy('/gate/auth', 'shop.example', { cookie: `__Host-ofage_gate=${forBlog}; __Host-ofage_gate=${value}` })).status).toBe(200)
  })

  test('an expired cookie, and one older than a lifetime shortened since, are refused', async () => {
    const key = ctx.deps.keys.gateKey
    const now = Math.floor(ctx.clock.now().getTime() / 1000)
    const expired = sealGatePass(key, { clientId: shop.id, origin: SHOP, ageOver: 18, verificationId: 'v', issuedAt: now - 7200, expiresAt: now - 1 })
    expect((await viaProxy('/gate/auth', 'shop.example', { cookie: `__Host-ofage_gate=${expired}` })).status).toBe(401)
    const dayOld = sealGatePass(key, { clientId: shop.id, origin: SHOP, ageOver: 18, verificationId: 'v', issuedAt: now - 86_400, expiresAt: now + 86_400 })
    expect((await viaProxy('/gate/auth', 'shop.example', { cookie: `__Host-ofage_gate=${dayOld}` })).status).toBe(200)
    await updateGate(ctx.deps, shop.id, { ttlSeconds: 12 * 3600 })
    expect(await authSettles('shop.example', `__Host-ofage_gate=${dayOld}`, 401)).toBe(401)
    await updateGate(ctx.deps, shop.id, { ttlSeconds: 30 * 86_400 })
    expect(await authSettles('shop.example', `__Host-ofage_gate=${dayOld}`, 200)).toBe(200)
  })

  test('a threshold raised in the configuration sends the cookie back to the check; a suspended client gets 403', async () => {
    expect((await viaProxy('/gate/auth', 'shop.example', { cookie })).status).toBe(200)
    await updateGate(ctx.deps, shop.id, { age: 21 })
    expect(await authSettles('shop.example', cookie, 401)).toBe(401)
    const start = await viaProxy('/.ofage/start', 'shop.example')
    expect(start.status).toBe(303)
    await updateGate(ctx.deps, shop.id, { age: 18 })
    expect(await authSettles('shop.example', cookie, 200)).toBe(200)
    await updateClient(ctx.deps.db, shop.id, { status: 'suspended' })
    expect(await authSettles('shop.example', cookie, 403)).toBe(403)
    expect((await viaProxy('/.ofage/start', 'shop.example')).status).toBe(401)
    await updateClient(ctx.deps.db, shop.id, { status: 'active' })
    expect(await authSettles('shop.example', cookie, 200)).toBe(200)
  })

  test('any method the proxy asks with is answered; a visitor\'s own X-Age-Over is not the gate\'s answer', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH']) {
      expect((await viaProxy('/gate/auth', 'shop.example', { cookie, method })).status).toBe(200)
      expect((await viaProxy('/gate/auth', 'shop.example', { method })).status).toBe(401)
    }
    const forged = await viaProxy('/gate/auth', 'shop.example', { headers: { 'x-age-over': '99', 'x-verification-id': 'mine' } })
    expect(forged.status).toBe(401)
    expect(forged.headers.get('x-age-over')).toBeNull()
  })
})

describe('/.ofage/start refuses every return address off the gated host', () => {
  const refused = [
    'https://evil.example',
    '//evil.example',
    '/\\evil.example',
    '\\\\evil.example',
    '/.//evil.example',
    'https://shop.example//evil.example',
    'https://shop.example@evil.example/',
    'https://shop.example.evil.example/',
    'http://shop.example/',
    'javascript:alert(1)',
    '/\tevil',
    ' /x',
    '/.ofage/callback',
    'shop',
  ]
  for (const rd of refused) {
    test(`rd=${JSON.stringify(rd)}`, async () => {
      const response = await viaProxy(`/.ofage/start?rd=${encodeURIComponent(rd)}`, 'shop.example')
      expect(response.status).toBe(400)
      expect(response.headers.get('location')).toBeNull()
      expect(response.headers.getSetCookie()).toEqual([])
      expect(await response.text()).toContain('invalid_request')
    })
  }

  test('a path, and an absolute URL of the host itself, are kept as the path to return to', async () => {
    for (const [rd, kept] of [
      ['/a/b?c=d#e', '/a/b?c=d#e'],
      ['https://shop.example/x?y=1', '/x?y=1'],
      ['/', '/'],
    ] as const) {
      const start = await viaProxy(`/.ofage/start?rd=${encodeURIComponent(rd)}`, 'shop.example')
      expect(start.status).toBe(303)
      const flow = setCookie(start, '__Host-ofage_gate_flow')!
      expect(JSON.parse(Buffer.from(flow.split('.')[0]!, 'base64url').toString()).r).toBe(kept)
    }
  })

  test("nginx's internal redirect: the visitor's URI comes in X-Original-URI, never one into /.ofage/", async () => {
    const start = await viaProxy('/.ofage/start', 'shop.example', { headers: { 'x-original-uri': '/private/page?x=1&y=2' } })
    expect(start.status).toBe(303)
    const flow = setCookie(start, '__Host-ofage_gate_flow')!
    expect(JSON.parse(Buffer.from(flow.split('.')[0]!, 'base64url').toString()).r).toBe('/private/page?x=1&y=2')
    const evil = await viaProxy('/.ofage/start', 'shop.example', { headers: { 'x-original-uri': '//evil.example/' } })
    expect(evil.status).toBe(400)
  })

  test('an unknown host gets a 404 page, /.ofage/forget clears the cookie and goes back on the host', async () => {
    expect((await viaProxy('/.ofage/start', 'unknown.example')).status).toBe(404)
    const forget = await viaProxy('/.ofage/forget?rd=%2Fbye', 'shop.example')
    expect(forget.status).toBe(303)
    expect(forget.headers.get('location')).toBe('/bye')
    expect(forget.headers.getSetCookie()).toEqual(['__Host-ofage_gate=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure'])
    expect((await viaProxy('/.ofage/forget?rd=%2F%2Fevil.example', 'shop.example')).status).toBe(400)
  })
})
