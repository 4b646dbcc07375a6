import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { desc, eq } from 'drizzle-orm'
import { Webhook } from 'standardwebhooks'
import { verifyWebhook } from 'ofage/client'
import { runCommand } from '../../src/cli/run.ts'
import { webhookDeliveries, webhookEndpoints } from '../../src/db/schema.ts'
import { createWebhookSecretCookie } from '../../src/dashboard/webhook-secret-cookie.ts'
import { fixedClock, systemClock } from '../../src/lib/clock.ts'
import { deliverDue, RETRY_DELAYS_S } from '../../src/webhooks/delivery.ts'
import { addWebhookEndpoint } from '../../src/webhooks/endpoints.ts'
import { enqueueTestEvent } from '../../src/webhooks/events.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { testBrowser } from '../verification/browser.ts'
import { createUser, sessionCsrf, signedIn, type DashboardBrowser } from './dashboard.ts'

/**
 * The webhooks page (issue 24, item 4): a client's endpoints listed, added (the signing secret shown on one
 * page view after the redirect, never again) and removed; each endpoint's deliveries with where they stand;
 * a test event and the replay of a dead delivery, delivered by the real worker to a real receiver that checks
 * the signature with the Standard Webhooks reference library. Every id is bound to the session's client.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
let sandbox: Awaited<ReturnType<TestContext['createClient']>>
let rival: Awaited<ReturnType<TestContext['createClient']>>
let owner: DashboardBrowser
let tester: DashboardBrowser
let rivalUser: DashboardBrowser
const logged: string[] = []

/** A receiver on a real port: records every request, answers with `answer()` (204 by default). */
function startReceiver(answer: () => number = () => 204) {
  const received: { headers: Record<string, string>; body: string }[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      received.push({ headers: Object.fromEntries(request.headers), body: await request.text() })
      return new Response(null, { status: answer() })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hooks`, received, stop: () => server.stop(true) }
}

beforeAll(async () => {
  const record = (event: string, fields?: Record<string, unknown>) => void logged.push(JSON.stringify({ event, ...fields }))
  ctx = await createTestContext({ log: { info: record, error: record } })
  shop = await ctx.createClient({ name: 'Live shop' })
  sandbox = await ctx.createClient({ name: 'Sandbox shop', sandbox: true })
  rival = await ctx.createClient({ name: 'Rival' })
  await createUser(ctx, shop.id, 'owner@shop.example')
  await createUser(ctx, sandbox.id, 'dev@shop.example')
  await createUser(ctx, rival.id, 'owner@rival.example')
  owner = await signedIn(ctx, 'owner@shop.example')
  tester = await signedIn(ctx, 'dev@shop.example')
  rivalUser = await signedIn(ctx, 'owner@rival.example')
}, 60_000)
afterAll(() => ctx.close())

const endpointsOf = (clientId: string) => ctx.deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.clientId, clientId))
const deliveriesOf = (endpointId: string) => ctx.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId))
const alertOf = (html: string) => /<div role="alert" class="alert"[^>]*><p>([^<]*)<\/p>/.exec(html)?.[1]
const secretOf = (html: string) => /<code class="mono secret" id="new-secret"[^>]*>([^<]*)<\/code>/.exec(html)?.[1]
/** The delivery rows of an endpoint page: id and status, in the page's order. */
const rowsOf = (html: string) => [...html.matchAll(/<tr data-delivery-id="([^"]+)" data-status="([a-z]+)">/g)].map((match) => ({ id: match[1]!, status: match[2]! }))

async function page(browser: DashboardBrowser, path = '/dashboard/webhooks'): Promise<string> {
  const response = await browser.request(path)
  expect(response.status).toBe(200)
  return response.text()
}

/** Posts a webhooks form with the session's CSRF token (unless `fields` overrides it). */
async function post(browser: DashboardBrowser, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return browser.post(`/dashboard/webhooks/${path}`, { csrf: await sessionCsrf(browser), ...fields }, headers)
}

const allEvents = { 'event_verification.approved': 'on', 'event_code.replayed': 'on', 'event_plan.limit_reached': 'on', 'event_client.secret_rotated': 'on' }

/** Adds an endpoint through the page, follows the redirect, and returns the secret that view showed. */
async function addThroughPage(browser: DashboardBrowser, url: string, events: Record<string, string> = allEvents) {
  const response = await post(browser, 'add', { url, ...events })
  expect([response.status, response.headers.get('location')]).toEqual([303, '/dashboard/webhooks?notice=endpoint_added'])
  const html = await page(browser, '/dashboard/webhooks?notice=endpoint_added')
  const endpointId = /data-endpoint-id="([^"]+)">/.exec(html.slice(html.indexOf('id="new-secret"') - 200))?.[1]
  return { response, html, secret: secretOf(html)!, endpointId: endpointId! }
}

describe('the webhooks page', () => {
  test('signed out, the page and every form send the browser to sign in, and change nothing', async () => {
    const stranger = testBrowser(ctx)
    const endpoint = await addWebhookEndpoint(ctx.deps, shop.id, { url: 'https://hooks.shop.example/signed-out' })
    for (const path of ['/dashboard/webhooks', `/dashboard/webhooks/${endpoint.id}`]) {
      const response = await stranger.request(path)
      expect([response.status, response.headers.get('location')]).toEqual([303, '/dashboard/sign-in'])
    }
    for (const path of ['add', 'remove', 'test', 'replay']) {
      const response = await stranger.post(`/dashboard/webhooks/${path}`, { csrf: 'x', url: 'https://x.example/', endpoint_id: endpoint.id, delivery_id: 'msg_x' })
      expect([response.status, response.headers.get('location')]).toEqual([303, '/dashboard/sign-in'])
    }
    expect((await endpointsOf(shop.id)).map((e) => e.id)).toEqual([endpoint.id])
    expect(await deliveriesOf(endpoint.id)).toEqual([])
    await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id))
  })

  test('lists only the session’s client’s endpoints, linked from the navigation, under the strict CSP', async () => {
    const own = await addWebhookEndpoint(ctx.deps, shop.id, { url: 'https://hooks.shop.example/listed', events: ['code.replayed'] })
    const theirs = await addWebhookEndpoint(ctx.deps, rival.id, { url: 'https://hooks.rival.example/secret-path' })
    try {
      const response = await owner.request('/dashboard/webhooks')
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'")
      expect(response.headers.get('cache-control')).toBe('no-store')
      const html = await response.text()
      expect(html).toContain('<a href="/dashboard/webhooks" aria-current="page">Webhooks</a>')
      expect(html).toContain(`<tr data-endpoint-id="${own.id}">`)
      expect(html).toContain(`<a href="/dashboard/webhooks/${own.id}">https://hooks.shop.example/listed</a>`)
      expect(html).toContain('<td class="mono" data-label="Events">code.replayed</td>')
      expect(html).toContain('<time datetime="2026-11-22T12:00:00.000Z">Nov 22, 2026, 12:00:00 UTC</time>')
      expect(html).not.toContain(theirs.id)
      expect(html).not.toContain('hooks.rival.example')
      // The list never shows a secret: only the one view after an add does.
      expect(html).not.toContain(own.secret)
      expect(await page(rivalUser)).toContain(theirs.id)
    } finally {
      await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, own.id))
      await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, theirs.id))
    }
  })

  test('another client’s endpoint or delivery id is not found, exactly like one that does not exist, and nothing of it changes', async () => {
    const theirs = await addWebhookEndpoint(ctx.deps, rival.id, { url: 'https://hooks.rival.example/private' })
    const deliveryId = await enqueueTestEvent(ctx.deps.db, theirs, ctx.clock.now())
    await ctx.deps.db.update(webhookDeliveries).set({ deadAt: ctx.clock.now(), attempts: 11, lastStatus: 500 }).where(eq(webhookDeliveries.id, deliveryId))
    try {
      for (const id of [theirs.id, 'we_doesnotexist']) {
        const response = await owner.request(`/dashboard/webhooks/${id}`)
        expect(response.status).toBe(404)
        expect(await response.text()).toContain('<code>not_found</code>')
        for (const path of ['remove', 'test']) expect((await post(owner, path, { endpoint_id: id })).status).toBe(404)
      }
      for (const id of [deliveryId, 'msg_doesnotexist']) expect((await post(owner, 'replay', { delivery_id: id })).status).toBe(404)
      expect((await endpointsOf(rival.id)).map((e) => e.id)).toEqual([theirs.id])
      const [delivery, ...others] = await deliveriesOf(theirs.id)
      expect(others).toEqual([])
      expect(delivery!.deadAt).not.toBeNull()
    } finally {
      await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, theirs.id))
    }
  })
})

describe('adding and removing an endpoint', () => {
  test('an added endpoint is listed; its signing secret is shown on the one view after the redirect, never again, never logged', async () => {
    const before = logged.length
    const { response, html, secret, endpointId } = await addThroughPage(owner, 'https://hooks.shop.example/ofage?token=t0k', { 'event_verification.approved': 'on', 'event_code.replayed': 'on' })
    const [stored] = await endpointsOf(shop.id)
    expect(stored).toMatchObject({ id: endpointId, url: 'https://hooks.shop.example/ofage?token=t0k', events: ['verification.approved', 'code.replayed'] })
    expect(secret).toBe(stored!.secret)
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(html).toContain('The endpoint is added.')
    expect(html).toContain('it is shown only this once')
    // The cookie that carried it: read once, scoped to the page, the secret sealed (not in the clear, not base64 of it).
    const line = response.headers.getSetCookie().find((cookie) => cookie.startsWith('ofage_new_webhook_secret='))!
    expect(line).toMatch(/; Path=\/dashboard\/webhooks/)
    expect(line).toMatch(/; HttpOnly/)
    expect(line).toMatch(/; SameSite=Strict/i)
    expect(line).toMatch(/; Max-Age=300/)
    const sealed = line.split(';')[0]!.split('=').slice(1).join('=')
    expect(sealed.split('.')).toHaveLength(5)
    for (const form of [secret, secret.slice(6), Buffer.from(secret).toString('base64url')]) expect(decodeURIComponent(sealed)).not.toContain(form)
    expect(owner.jar.has('ofage_new_webhook_secret')).toBe(false)
    // Again: not there, though the endpoint is.
    const again = await page(owner)
    expect(again).toContain(`<tr data-endpoint-id="${endpointId}">`)
    expect(again).not.toContain(secret)
    expect(again).not.toContain('id="new-secret"')
    const lines = logged.slice(before).join('\n')
    expect(lines).toContain('"event":"webhook_endpoint_added"')
    for (const text of [secret, secret.slice(6), 't0k', 'hooks.shop.example', sealed]) expect(lines).not.toContain(text)
    await post(owner, 'remove', { endpoint_id: endpointId })
  })

  test('the sealed cookie shows the secret only to the session that added it, and only for five minutes', async () => {
    const replayed = async (value: string, browser: DashboardBrowser) => {
      browser.jar.set('ofage_new_webhook_secret', value)
      return page(browser)
    }
    const cookieOf = (response: Response) => response.headers.getSetCookie().find((c) => c.startsWith('ofage_new_webhook_secret='))!.split(';')[0]!.split('=').slice(1).join('=')
    const added = await post(owner, 'add', { url: 'https://hooks.shop.example/once', ...allEvents })
    const sealed = cookieOf(added)
    // Another session of another user of the same client, or of another client: nothing shown.
    await createUser(ctx, shop.id, 'colleague@shop.example')
    const colleague = await signedIn(ctx, 'colleague@shop.example')
    expect(secretOf(await replayed(sealed, colleague))).toBeUndefined()
    expect(secretOf(await replayed(sealed, rivalUser))).toBeUndefined()
    // An edited value does not open. One character in the middle of the ciphertext: every bit of it counts
    // (the last one of a base64url part carries unused bits, and replacing it could decode to the same
    // bytes: this test once failed so, in CI).
    const parts = sealed.split('.')
    const at = Math.floor(parts[3]!.length / 2)
    parts[3] = `${parts[3]!.slice(0, at)}${parts[3]![at] === 'A' ? 'B' : 'A'}${parts[3]!.slice(at + 1)}`
    expect(secretOf(await replayed(parts.join('.'), owner))).toBeUndefined()
    // Past its five minutes, even the session that added it sees nothing.
    ctx.clock.advance(301_000)
    expect(secretOf(await replayed(sealed, owner))).toBeUndefined()
    ctx.clock.advance(-301_000)
    expect(secretOf(await replayed(sealed, owner))).toMatch(/^whsec_/)
    const [endpoint] = (await endpointsOf(shop.id)).filter((e) => e.url === 'https://hooks.shop.example/once')
    await post(owner, 'remove', { endpoint_id: endpoint!.id })
    // Removed: the secret of an endpoint that is gone is not shown.
    expect(secretOf(await replayed(sealed, owner))).toBeUndefined()
  })

  test('over https the cookie is Secure and named __Secure- (not __Host-, which would need Path=/), and it opens only with the key that sealed it', async () => {
    const set: Record<string, unknown>[] = []
    const jar = () => new Proxy({} as Record<string, { value?: string; set(options: Record<string, unknown>): void }>, {
      get: (target, name: string) => (target[name] ??= { set(options) { set.push({ name, ...options }); this.value = options.value as string } }),
    })
    const cookies = jar()
    const key = crypto.getRandomValues(new Uint8Array(32))
    const sealer = createWebhookSecretCookie({ appUrl: 'https://app.ofage.example' }, key)
    await sealer.write(cookies as never, { endpointId: 'we_x', secret: 'whsec_x', sessionTokenHash: 'h' }, ctx.clock.now())
    expect(set[0]).toMatchObject({ name: '__Secure-ofage_new_webhook_secret', secure: true, httpOnly: true, sameSite: 'strict', path: '/dashboard/webhooks', maxAge: 300 })
    const other = createWebhookSecretCookie({ appUrl: 'https://app.ofage.example' }, crypto.getRandomValues(new Uint8Array(32)))
    const copy = jar()
    copy['__Secure-ofage_new_webhook_secret']!.value = cookies['__Secure-ofage_new_webhook_secret']!.value
    expect(await other.take(copy as never, 'h', ctx.clock.now())).toBeUndefined()
    expect(await sealer.take(cookies as never, 'h', ctx.clock.now())).toEqual({ endpointId: 'we_x', secret: 'whsec_x' })
    expect(set.at(-1)).toMatchObject({ name: '__Secure-ofage_new_webhook_secret', value: '', maxAge: 0, path: '/dashboard/webhooks' })
  })

  test('http for a live client, a private address, a URL added already, an 11th endpoint and no event are refused with the reason; nothing is added', async () => {
    const refused = async (browser: DashboardBrowser, fields: Record<string, string>, message: string) => {
      const response = await post(browser, 'add', fields)
      expect(response.status).toBe(400)
      const html = await response.text()
      expect(alertOf(html)).toBe(message)
      expect(html).toContain('aria-invalid="true"')
      expect(response.headers.getSetCookie().some((c) => c.startsWith('ofage_new_webhook_secret='))).toBe(false)
      return html
    }
    const html = await refused(owner, { url: 'http://hooks.shop.example/ofage', ...allEvents }, 'A live site’s endpoint must use https.')
    // What was typed stays in the field.
    expect(html).toContain('value="http://hooks.shop.example/ofage"')
    for (const url of ['https://10.0.0.7/hooks', 'https://169.254.169.254/latest', 'https://[::ffff:192.168.1.1]/x', 'https://[fd00::1]/x']) {
      await refused(owner, { url, ...allEvents }, 'This address is on a private or local network, which the service does not send to. Use your backend’s public address.')
    }
    for (const url of ['javascript:alert(1)', 'https://user:pw@hooks.shop.example/', 'https://hooks.shop.example/#f', 'https://hooks.shop.example/a b', '/relative', '']) {
      await refused(owner, { url, ...allEvents }, 'This is not an address we can send to: it must be an absolute http(s) URL without a #fragment, a user name or password, spaces or control characters.')
    }
    const unticked = await refused(owner, { url: 'https://hooks.shop.example/none' }, 'Tick at least one event.')
    expect(unticked).not.toContain('checked')
    expect(await endpointsOf(shop.id)).toEqual([])

    // A sandbox client may use plain http; the same URL twice (as the parser writes it) is refused.
    const { endpointId } = await addThroughPage(tester, 'http://hooks.shop.example/sandbox')
    await refused(tester, { url: 'HTTP://HOOKS.shop.example:80/sandbox', ...allEvents }, 'This endpoint is added already. To change its events or its secret, remove it and add it again.')
    for (let i = 2; i <= 10; i++) await addWebhookEndpoint(ctx.deps, sandbox.id, { url: `https://hooks.shop.example/${i}` })
    await refused(tester, { url: 'https://hooks.shop.example/11', ...allEvents }, 'A client has at most 10 endpoints: remove one first.')
    expect(await endpointsOf(sandbox.id)).toHaveLength(10)
    await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.clientId, sandbox.id))
    expect(endpointId).toStartWith('we_')
  })

  test('removing an endpoint ends it and its pending deliveries; another client’s stays', async () => {
    const { endpointId } = await addThroughPage(owner, 'https://hooks.shop.example/removed')
    const theirs = await addWebhookEndpoint(ctx.deps, rival.id, { url: 'https://hooks.shop.example/removed' })
    await ctx.issueCode({ clientId: shop.id })
    expect(await deliveriesOf(endpointId)).toHaveLength(1)
    const response = await post(owner, 'remove', { endpoint_id: endpointId })
    expect([response.status, response.headers.get('location')]).toEqual([303, '/dashboard/webhooks?notice=endpoint_removed'])
    expect(await endpointsOf(shop.id)).toEqual([])
    expect(await deliveriesOf(endpointId)).toEqual([])
    expect(await page(owner, '/dashboard/webhooks?notice=endpoint_removed')).toContain('The endpoint is removed, with its pending deliveries.')
    expect((await post(owner, 'remove', { endpoint_id: endpointId })).status).toBe(404)
    expect((await endpointsOf(rival.id)).map((e) => e.id)).toEqual([theirs.id])
    await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, theirs.id))
  })
})

describe('deliveries', () => {
  test('a test event goes through the outbox and the real worker to a receiver, which verifies it with the standardwebhooks library and ofage/client', async () => {
    const receiver = startReceiver()
    try {
      const { secret, endpointId } = await addThroughPage(tester, receiver.url, { 'event_code.replayed': 'on' })
      const sent = await post(tester, 'test', { endpoint_id: endpointId })
      expect([sent.status, sent.headers.get('location')]).toEqual([303, `/dashboard/webhooks/${endpointId}?notice=test_sent`])
      const pending = await page(tester, `/dashboard/webhooks/${endpointId}?notice=test_sent`)
      expect(pending).toContain('A test event is on its way')
      const [row] = rowsOf(pending)
      expect(row!.status).toBe('pending')
      expect(pending).toContain('<td class="mono" data-label="Event">webhook.test</td>')

      // Signed at the real time, as a receiver checks the timestamp against its own clock.
      expect(await deliverDue({ ...ctx.deps, clock: systemClock })).toBe(1)
      const [message] = receiver.received
      const headers = { 'webhook-id': message!.headers['webhook-id']!, 'webhook-timestamp': message!.headers['webhook-timestamp']!, 'webhook-signature': message!.headers['webhook-signature']! }
      expect(headers['webhook-id']).toBe(row!.id)
      const event = new Webhook(secret).verify(message!.body, headers)
      expect(event).toEqual({ type: 'webhook.test', timestamp: ctx.clock.now().toISOString(), data: { client_id: sandbox.id, endpoint_id: endpointId } })
      expect(await verifyWebhook(secret, message!.body, headers)).toEqual({ ok: true, id: row!.id, event: event as never })
      expect(await verifyWebhook(secret, message!.body.replace(sandbox.id, rival.id), headers)).toEqual({ ok: false, reason: 'bad_signature' })

      const delivered = await page(tester, `/dashboard/webhooks/${endpointId}`)
      expect(rowsOf(delivered)).toEqual([{ id: row!.id, status: 'delivered' }])
      expect(delivered).toContain('<td class="mono last-answer" data-label="Last answer">HTTP 204</td>')
      // The endpoint takes only code.replayed: a verification sends it nothing, the test event was sent anyway.
      await ctx.issueCode({ clientId: sandbox.id })
      expect(await deliveriesOf(endpointId)).toHaveLength(1)
    } finally {
      receiver.stop()
      await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.clientId, sandbox.id))
    }
  })

  test('a dead delivery replayed from the page is pending again and then delivered, with its message id; the CLI sees the same', async () => {
    let up = false
    const receiver = startReceiver(() => (up ? 200 : 503))
    try {
      const { endpointId } = await addThroughPage(tester, receiver.url)
      await ctx.issueCode({ clientId: sandbox.id })
      // The worker's day of retries on a clock of its own: the dashboard's sessions would not outlive it.
      const worker = { ...ctx.deps, clock: fixedClock(ctx.clock.now()) }
      for (const delay of [...RETRY_DELAYS_S, 0]) {
        expect(await deliverDue(worker)).toBe(1)
        worker.clock.advance(delay * 1000)
      }
      const dead = await page(tester, `/dashboard/webhooks/${endpointId}`)
      const [row] = rowsOf(dead)
      expect(row!.status).toBe('dead')
      expect(dead).toContain('Dead: no more tries')
      expect(dead).toContain('<td class="mono last-answer" data-label="Last answer">HTTP 503</td>')
      expect(dead).toContain(`<td class="number" data-label="Attempts">${RETRY_DELAYS_S.length + 1}</td>`)
      expect(dead).toContain(`<input type="hidden" name="delivery_id" value="${row!.id}"/>`)

      const replayed = await post(tester, 'replay', { delivery_id: row!.id })
      expect([replayed.status, replayed.headers.get('location')]).toEqual([303, `/dashboard/webhooks/${endpointId}?notice=replayed`])
      const after = await page(tester, `/dashboard/webhooks/${endpointId}?notice=replayed`)
      expect(rowsOf(after)).toEqual([{ id: row!.id, status: 'pending' }])
      expect(after).not.toContain('name="delivery_id"')
      // The CLI, which replays through the same service, no longer lists it as dead.
      const out: string[] = []
      const io = { out: (text: string) => out.push(text), err: (text: string) => out.push(text) }
      expect(await runCommand({ deps: ctx.deps, close: async () => {} }, ['webhooks', 'dead', '--client', sandbox.id, '--json'], io)).toBe(0)
      expect(JSON.parse(out.pop()!)).toEqual([])
      // Pressed again while it waits: refused, and nothing changes.
      const again = await post(tester, 'replay', { delivery_id: row!.id })
      expect(again.status).toBe(400)
      expect(alertOf(await again.text())).toBe('Only a dead delivery can be replayed; this one is delivered or still being tried.')

      up = true
      expect(await deliverDue(worker)).toBe(1)
      expect(receiver.received.at(-1)!.headers['webhook-id']).toBe(row!.id)
      expect(rowsOf(await page(tester, `/dashboard/webhooks/${endpointId}`))).toEqual([{ id: row!.id, status: 'delivered' }])
      // Another client's user cannot replay it, or see it.
      expect((await post(rivalUser, 'replay', { delivery_id: row!.id })).status).toBe(404)
      expect((await rivalUser.request(`/dashboard/webhooks/${endpointId}`)).status).toBe(404)
    } finally {
      receiver.stop()
      await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.clientId, sandbox.id))
    }
  })

  test('deliveries are listed newest first, 50 to a page, the older ones a link away; a made-up cursor is a 400 page', async () => {
    const endpoint = await addWebhookEndpoint(ctx.deps, shop.id, { url: 'https://hooks.shop.example/busy' })
    try {
      const ids: string[] = []
      // Three to a millisecond: the id breaks the ties.
      for (let i = 0; i < 57; i++) {
        if (i % 3 === 0) ctx.clock.advance(1)
        ids.push(await enqueueTestEvent(ctx.deps.db, endpoint, ctx.clock.now()))
      }
      // The order the database gives (its collation orders the ids), independently of the page's keyset.
      const newestFirst = (await ctx.deps.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id)).orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))).map((r) => r.id)
      const first = await page(owner, `/dashboard/webhooks/${endpoint.id}`)
      expect(rowsOf(first).map((r) => r.id)).toEqual(newestFirst.slice(0, 50))
      const older = /<a href="([^"]*)" rel="next"/.exec(first)![1]!.replaceAll('&amp;', '&')
      const second = await page(owner, older)
      expect(rowsOf(second).map((r) => r.id)).toEqual(newestFirst.slice(50))
      expect(second).not.toContain('rel="next"')
      expect(second).toContain(`<a href="/dashboard/webhooks/${endpoint.id}">Back to the newest</a>`)
      expect(new Set(ids)).toEqual(new Set(newestFirst))
      for (const before of ['x', '2026-11-22T12:00:00.000Z_x', '2026-02-30T12:00:00.000Z_msg_a']) {
        expect((await owner.request(`/dashboard/webhooks/${endpoint.id}?before=${encodeURIComponent(before)}`)).status).toBe(400)
      }
    } finally {
      ctx.clock.set('2026-11-22T12:00:00.000Z')
      await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id))
    }
  })

  test('a failed send shows why, in the receiver’s status or the system’s error, never the URL’s token; numbers and words in German', async () => {
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(null) })
    const url = `http://127.0.0.1:${closed.port}/hooks?key=s3cret`
    closed.stop(true)
    const endpoint = await addWebhookEndpoint(ctx.deps, sandbox.id, { url })
    try {
      await enqueueTestEvent(ctx.deps.db, endpoint, ctx.clock.now())
      expect(await deliverDue(ctx.deps)).toBe(1)
      const html = await page(tester, `/dashboard/webhooks/${endpoint.id}?lang=de`)
      expect(rowsOf(html)[0]!.status).toBe('failed')
      expect(html).toContain('Fehlgeschlagen, wird wiederholt')
      expect(html).toContain('<td class="mono last-answer" data-label="Letzte Antwort">unreachable: ECONNREFUSED: ')
      expect(html.slice(html.indexOf('last-answer'))).not.toContain('s3cret')
      // The next try, 5 s later (the schedule's first delay), as the other pages show times: in German, in UTC.
      expect(RETRY_DELAYS_S[0]).toBe(5)
      expect(html).toContain('<time datetime="2026-11-22T12:00:05.000Z">22. Nov. 2026, 12:00:05 UTC</time>')
      expect(html).toContain('<a href="/dashboard/webhooks?lang=de" aria-current="true">Webhooks</a>')
      expect(html).toContain('Testereignis senden')
    } finally {
      await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id))
    }
  })
})

describe('forms from elsewhere', () => {
  test('no CSRF token is 400, a wrong or another session’s token 403, a foreign origin 403: nothing is added, removed, sent or replayed', async () => {
    const endpoint = await addWebhookEndpoint(ctx.deps, shop.id, { url: 'https://hooks.shop.example/guarded' })
    const deliveryId = await enqueueTestEvent(ctx.deps.db, endpoint, ctx.clock.now())
    await ctx.deps.db.update(webhookDeliveries).set({ deadAt: ctx.clock.now(), attempts: 11, lastStatus: 500 }).where(eq(webhookDeliveries.id, deliveryId))
    try {
      const forms: [string, Record<string, string>][] = [
        ['add', { url: 'https://hooks.shop.example/forged', ...allEvents }],
        ['remove', { endpoint_id: endpoint.id }],
        ['test', { endpoint_id: endpoint.id }],
        ['replay', { delivery_id: deliveryId }],
      ]
      for (const [path, fields] of forms) {
        expect((await owner.post(`/dashboard/webhooks/${path}`, fields)).status).toBe(400)
        expect((await owner.post(`/dashboard/webhooks/${path}`, { ...fields, csrf: 'wrong' })).status).toBe(403)
        expect((await owner.post(`/dashboard/webhooks/${path}`, { ...fields, csrf: await sessionCsrf(rivalUser) })).status).toBe(403)
        expect((await post(owner, path, fields, { origin: 'https://evil.example' })).status).toBe(403)
        expect((await post(owner, path, fields, { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
      }
      expect((await endpointsOf(shop.id)).map((e) => e.id)).toEqual([endpoint.id])
      const deliveries = await deliveriesOf(endpoint.id)
      expect(deliveries.map((d) => d.id)).toEqual([deliveryId])
      expect(deliveries[0]!.deadAt).not.toBeNull()
      // `Origin: null` (our own form under no-referrer) is let through.
      expect((await post(owner, 'test', { endpoint_id: endpoint.id }, { origin: 'null' })).status).toBe(303)
    } finally {
      await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id))
    }
  })
})
