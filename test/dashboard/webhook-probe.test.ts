import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { webhookDeliveries, webhookEndpoints } from '../../src/db/schema.ts'
import { deliverDue } from '../../src/webhooks/delivery.ts'
import { addWebhookEndpoint } from '../../src/webhooks/endpoints.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { listen, type Listener } from '../lib/tcp-listener.ts'
import { createUser, sessionCsrf, signedIn, type DashboardBrowser } from './dashboard.ts'

/**
 * Issue 30, finding 4: a port probe from the dashboard. In production the page refused
 * `https://localhost:P/hook` but took `https://localhost.:P/hook`; "Send a test event" then connected to the
 * loopback listener, and the deliveries list showed how the port answered. Here P is a real listener on this
 * machine's loopback, and every way of writing its address is tried: the page refuses it, and an endpoint
 * that names it anyway (added while the operator allowed loopback) gets a send that is refused when it
 * connects. The listener sees no connection, and the list shows the refusal, never the port's answer.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
let owner: DashboardBrowser
let v4: Listener
let v6: Listener

beforeAll(async () => {
  ctx = await createTestContext({ env: { NODE_ENV: 'production' } })
  shop = await ctx.createClient({ name: 'Probing shop' })
  await createUser(ctx, shop.id, 'owner@probing.example')
  owner = await signedIn(ctx, 'owner@probing.example')
  v4 = await listen('127.0.0.1')
  v6 = await listen('::1')
}, 60_000)
beforeEach(() => {
  v4.connections = 0
  v6.connections = 0
})
afterAll(async () => {
  await v4.close()
  await v6.close()
  await ctx.close()
})

const INTERNAL = 'This address is on a private or local network, which the service does not send to. Use your backend’s public address.'
const allEvents = { 'event_verification.approved': 'on', 'event_code.replayed': 'on', 'event_plan.limit_reached': 'on', 'event_client.secret_rotated': 'on' }
const alertOf = (html: string) => /<div role="alert" class="alert"[^>]*><p>([^<]*)<\/p>/.exec(html)?.[1]
const lastAnswerOf = (html: string) => /<td class="mono last-answer" data-label="Last answer">([^<]*)<\/td>/.exec(html)?.[1]
const rowsOf = (html: string) => [...html.matchAll(/<tr data-delivery-id="([^"]+)" data-status="([a-z]+)">/g)].map((match) => ({ id: match[1]!, status: match[2]! }))

/** The listener's address in every form the issue names, as the https URL a dashboard user would type. */
const loopbackUrls = () => [
  ...['localhost.', 'LOCALHOST', 'foo.localhost', 'localhost', '127.1', '2130706433', '0x7f000001', '0177.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]'].map((host) => `https://${host}:${v4.port}/hook`),
  `https://[::1]:${v6.port}/hook`,
]

async function post(path: string, fields: Record<string, string>) {
  return owner.post(`/dashboard/webhooks/${path}`, { csrf: await sessionCsrf(owner), ...fields })
}

describe('a port probe from the dashboard, in production', () => {
  test('the page refuses the listener’s address in every form, the trailing-dot localhost included, and private and metadata addresses', async () => {
    try {
      for (const url of [...loopbackUrls(), 'https://0.0.0.0/hook', 'https://169.254.169.254/latest/meta-data/', 'https://10.0.0.7/hook', 'https://192.168.1.1/hook', 'https://[fc00::1]/hook', 'https://[fe80::1]/hook']) {
        const response = await post('add', { url, ...allEvents })
        expect([url, response.status, alertOf(await response.text())]).toEqual([url, 400, INTERNAL])
      }
      expect(await ctx.deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.clientId, shop.id))).toEqual([])
    } finally {
      await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.clientId, shop.id))
    }
  })

  test('an endpoint that names the listener anyway: "Send a test event" never connects, and the deliveries list shows refused_address, not the port’s answer', async () => {
    // Added while the operator allowed loopback (OUTBOUND_ALLOWED_NETWORKS named it, since removed): the add-time
    // check is not the line that holds, the connection is.
    const allowedThen = { ...ctx.deps, config: { ...ctx.deps.config, outbound: { allowLoopback: true, allowedNetworks: [] } } }
    for (const url of loopbackUrls()) {
      const endpoint = await addWebhookEndpoint(allowedThen, shop.id, { url })
      try {
        const sent = await post('test', { endpoint_id: endpoint.id })
        expect([url, sent.status]).toEqual([url, 303])
        expect(await deliverDue(ctx.deps)).toBe(1)
        const html = await (await owner.request(`/dashboard/webhooks/${endpoint.id}`)).text()
        expect([url, rowsOf(html).map((row) => row.status), lastAnswerOf(html)]).toEqual([
          url,
          ['failed'],
          'refused_address: the endpoint’s host is or resolves to a private, loopback or reserved address, which webhooks are not sent to',
        ])
        const [delivery] = await ctx.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id))
        expect([delivery!.lastStatus, delivery!.deliveredAt]).toEqual([null, null])
      } finally {
        await ctx.deps.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id))
      }
    }
    expect([v4.connections, v6.connections]).toEqual([0, 0])
  })
})
