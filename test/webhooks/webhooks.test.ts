import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eq, sql } from 'drizzle-orm'
import { Webhook } from 'standardwebhooks'
import { verifyWebhook } from 'ofage/client'
import { startServices } from '../../src/boot.ts'
import { runCommand } from '../../src/cli/run.ts'
import { webhookDeliveries, webhookEndpoints } from '../../src/db/schema.ts'
import { fixedClock, systemClock } from '../../src/lib/clock.ts'
import { silentLogger } from '../../src/lib/log.ts'
import { rotateClientSecret } from '../../src/clients/secrets.ts'
import { deliverDue, RETRY_DELAYS_S, startWebhookWorker } from '../../src/webhooks/delivery.ts'
import { addWebhookEndpoint, MAX_WEBHOOK_ENDPOINTS, removeWebhookEndpoint } from '../../src/webhooks/endpoints.ts'
import { createTestContext, freshDatabaseUrl, onPostgres, queryRows, REDIRECT_URI, testConfig, type TestContext } from '../helpers.ts'

/**
 * Issue 11: signed webhooks through a durable outbox. Events are written in the transaction of what they
 * report; a worker delivers them, signed per Standard Webhooks, with exponential backoff for 24 hours,
 * at least once, and dead letters are listed and replayed from the CLI.
 */

/** A receiver on a real port: records every request, answers with `answer()` (200 by default). */
function startReceiver(answer: (count: number) => number = () => 200) {
  const received: { id: string; timestamp: string; signature: string; body: string }[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const body = await request.text()
      received.push({ id: request.headers.get('webhook-id')!, timestamp: request.headers.get('webhook-timestamp')!, signature: request.headers.get('webhook-signature')!, body })
      return new Response(null, { status: answer(received.length) })
    },
  })
  return { url: `http://127.0.0.1:${server.port}/hooks`, received, stop: () => server.stop(true) }
}

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const outbox = (endpointId: string) => ctx.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId))

describe('events are written with what they report', () => {
  test('an approval, the limit reached, a replay and a rotation each write one event, with nothing personal', async () => {
    const shop = await ctx.createClient({ name: 'Events shop', verificationLimit: 2 })
    const endpoint = await addWebhookEndpoint(ctx.deps, shop.id, { url: 'https://shop.example/hooks' })
    const first = await ctx.issueCode({ clientId: shop.id, state: 's' })
    expect((await outbox(endpoint.id)).map((d) => d.eventType)).toEqual(['verification.approved'])
    const [approved] = await outbox(endpoint.id)
    const payload = JSON.parse(approved!.payload)
    expect(payload).toEqual({
      type: 'verification.approved',
      timestamp: ctx.clock.now().toISOString(),
      data: { client_id: shop.id, transaction_id: first.transactionId, age_over: 18, method_class: 'age_only', verification_level: 'first_verification', sandbox: false },
    })

    await ctx.issueCode({ clientId: shop.id, state: 's' })
    // The limit is now reached: a third completion is refused, and writes nothing.
    await expect(ctx.issueCode({ clientId: shop.id, state: 's' })).rejects.toThrow('verification limit')
    expect((await outbox(endpoint.id)).map((d) => d.eventType).sort()).toEqual(['plan.limit_reached', 'verification.approved', 'verification.approved'])

    const exchange = { grant_type: 'authorization_code', code: first.code, redirect_uri: REDIRECT_URI, state: 's' }
    expect((await ctx.exchange(shop.authorization, exchange)).status).toBe(200)
    expect((await ctx.exchange(shop.authorization, exchange)).status).toBe(400)
    expect((await ctx.exchange(shop.authorization, exchange)).status).toBe(400)
    await rotateClientSecret(ctx.deps, shop.id)
    const types = (await outbox(endpoint.id)).map((d) => d.eventType)
    expect(types.filter((type) => type === 'code.replayed')).toHaveLength(1)
    expect(types.filter((type) => type === 'client.secret_rotated')).toHaveLength(1)
    // Nothing listens at shop.example: the endpoint goes, and its deliveries with it.
    expect(await removeWebhookEndpoint(ctx.deps.db, endpoint.id)).toBe(true)
    expect(await outbox(endpoint.id)).toEqual([])
  })

  test('the same URL cannot be added twice to a client (two secrets for one receiver); another client, or another URL, may', async () => {
    const shop = await ctx.createClient({ name: 'Twice shop' })
    const first = await addWebhookEndpoint(ctx.deps, shop.id, { url: 'https://shop.example/hooks' })
    for (const url of ['https://shop.example/hooks', 'https://SHOP.example:443/hooks']) {
      const refused = await addWebhookEndpoint(ctx.deps, shop.id, { url, events: ['code.replayed'] }).catch((error) => error)
      expect(refused.code).toBe('invalid_request')
      expect(refused.description).toBe(
        `client ${shop.id} already has the webhook endpoint ${first.id} for https://shop.example/hooks, with its own signing secret: ` +
          `to change its events or secret, remove it (webhooks remove ${first.id}) and add it again`,
      )
    }
    // Added at once, the same URL is still stored once.
    const raced = await Promise.allSettled([1, 2, 3, 4, 5, 6, 7, 8].map(() => addWebhookEndpoint(ctx.deps, shop.id, { url: 'https://shop.example/raced' })))
    expect(raced.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1)
    const other = await ctx.createClient({ name: 'Other shop' })
    expect((await addWebhookEndpoint(ctx.deps, other.id, { url: 'https://shop.example/hooks' })).url).toBe('https://shop.example/hooks')
    expect((await addWebhookEndpoint(ctx.deps, shop.id, { url: 'https://shop.example/hooks/2' })).url).toBe('https://shop.example/hooks/2')
    const out: string[] = []
    const io = { out: (text: string) => out.push(text), err: (text: string) => out.push(text) }
    expect(await runCommand({ deps: ctx.deps, close: async () => {} }, ['webhooks', 'add', shop.id, '--url', 'https://shop.example/hooks'], io)).toBe(1)
    expect(out.join('\n')).toContain(`already has the webhook endpoint ${first.id}`)
  })

  test('an endpoint gets only the events it asked for; bad URLs and unknown events are refused', async () => {
    const shop = await ctx.createClient({ name: 'Picky shop' })
    const endpoint = await addWebhookEndpoint(ctx.deps, shop.id, { url: 'https://shop.example/replays', events: ['code.replayed'] })
    await ctx.issueCode({ clientId: shop.id })
    expect(await outbox(endpoint.id)).toEqual([])
    await expect(addWebhookEndpoint(ctx.deps, shop.id, { url: 'https://shop.example/x', events: ['verification.denied'] })).rejects.toThrow('unknown event type')
    await expect(addWebhookEndpoint(ctx.deps, shop.id, { url: 'ftp://shop.example/x' })).rejects.toThrow('http(s)')
    await expect(addWebhookEndpoint({ ...ctx.deps, config: { ...ctx.deps.config, production: true } }, shop.id, { url: 'http://shop.example/x' })).rejects.toThrow('https')
    await removeWebhookEndpoint(ctx.deps.db, endpoint.id)
  })

  test('a live client’s webhook URL must be https, as its redirect URIs (loopback aside); a sandbox client’s may be http; the CLI says why', async () => {
    const live = await ctx.createClient({ name: 'Live hooks shop' })
    const sandbox = await ctx.createClient({ name: 'Sandbox hooks shop', sandbox: true })
    const refused = await addWebhookEndpoint(ctx.deps, live.id, { url: 'http://shop.example/hooks' }).catch((error) => error)
    expect(refused.code).toBe('invalid_request')
    expect(refused.description).toBe('a webhook URL must use https for a live client (only loopback addresses and sandbox clients may use http): http://shop.example/hooks')
    expect((await addWebhookEndpoint(ctx.deps, live.id, { url: 'http://127.0.0.1:8080/hooks' })).url).toBe('http://127.0.0.1:8080/hooks')
    expect((await addWebhookEndpoint(ctx.deps, sandbox.id, { url: 'http://shop.example/hooks' })).url).toBe('http://shop.example/hooks')
    const out: string[] = []
    const io = { out: (text: string) => out.push(text), err: (text: string) => out.push(text) }
    expect(await runCommand({ deps: ctx.deps, close: async () => {} }, ['webhooks', 'add', live.id, '--url', 'http://shop.example/cli'], io)).toBe(1)
    expect(out.join('\n')).toContain('must use https for a live client')
  })

  test('an internal address is refused when added, from the CLI too, unless OUTBOUND_ALLOWED_NETWORKS names it; then the worker delivers there in production', async () => {
    const shop = await ctx.createClient({ name: 'Internal hooks shop' })
    const out: string[] = []
    const io = { out: (text: string) => out.push(text), err: (text: string) => out.push(text) }
    expect(await runCommand({ deps: ctx.deps, close: async () => {} }, ['webhooks', 'add', shop.id, '--url', 'https://10.0.5.7/hooks'], io)).toBe(1)
    expect(out.join('\n')).toContain('OUTBOUND_ALLOWED_NETWORKS')
    const receiver = startReceiver()
    const production = { ...ctx.deps, config: { ...ctx.deps.config, production: true, outbound: { allowLoopback: false, allowedNetworks: [] } } }
    // In production loopback is refused like any internal address: when added, and again when sent.
    await expect(addWebhookEndpoint(production, shop.id, { url: receiver.url.replace('http:', 'https:') })).rejects.toThrow('OUTBOUND_ALLOWED_NETWORKS')
    const endpoint = await addWebhookEndpoint(ctx.deps, shop.id, { url: receiver.url })
    try {
      await ctx.issueCode({ clientId: shop.id })
      expect(await deliverDue(production)).toBe(1)
      expect(receiver.received).toEqual([])
      expect((await outbox(endpoint.id))[0]!.lastError).toStartWith('refused_address: ')
      // The operator names the receiver's address: the retry reaches it.
      const allowed = { ...production, config: { ...production.config, outbound: { allowLoopback: false, allowedNetworks: ['127.0.0.1/32'] } } }
      ctx.clock.advance(RETRY_DELAYS_S[0]! * 1000)
      expect(await deliverDue(allowed)).toBe(1)
      expect(receiver.received).toHaveLength(1)
      expect((await outbox(endpoint.id))[0]!.deliveredAt).not.toBeNull()
    } finally {
      receiver.stop()
      await removeWebhookEndpoint(ctx.deps.db, endpoint.id)
    }
  })

  test('a client has at most 10 endpoints, even when adds race for the last place', async () => {
    const shop = await ctx.createClient({ name: 'Crowded shop' })
    for (let i = 1; i <= 8; i++) await addWebhookEndpoint(ctx.deps, shop.id, { url: `https://shop.example/hooks/${i}` })
    const raced = await Promise.allSettled([9, 10, 11, 12, 13].map((i) => addWebhookEndpoint(ctx.deps, shop.id, { url: `https://shop.example/hooks/${i}` })))
    expect(raced.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(2)
    const refused = raced.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult
    expect(refused.reason.description).toBe(`client ${shop.id} has 10 webhook endpoints, the most a client may have: remove one first`)
    const listed = await ctx.deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.clientId, shop.id))
    expect(listed).toHaveLength(MAX_WEBHOOK_ENDPOINTS)
    expect(MAX_WEBHOOK_ENDPOINTS).toBe(10)
  })
})

describe('delivery', () => {
  test('signed per Standard Webhooks: the reference library and ofage/client verify it; a tampered body, another secret or an old message do not', async () => {
    const receiver = startReceiver()
    try {
      const shop = await ctx.createClient({ name: 'Signed shop' })
      const endpoint = await addWebhookEndpoint(ctx.deps, shop.id, { url: receiver.url })
      await ctx.issueCode({ clientId: shop.id })
      // Signed at the real time, as a receiver checks the timestamp against its own clock.
      expect(await deliverDue({ ...ctx.deps, clock: systemClock })).toBeGreaterThanOrEqual(1)
      const [message] = receiver.received
      const headers = { 'webhook-id': message!.id, 'webhook-timestamp': message!.timestamp, 'webhook-signature': message!.signature }
      expect(new Webhook(endpoint.secret).verify(message!.body, headers)).toMatchObject({ type: 'verification.approved' })
      expect(await verifyWebhook(endpoint.secret, message!.body, headers)).toMatchObject({ ok: true, id: message!.id, event: { type: 'verification.approved' } })
      expect(await verifyWebhook(endpoint.secret, message!.body.replace('"age_over":18', '"age_over":21'), headers)).toEqual({ ok: false, reason: 'bad_signature' })
      const other = await addWebhookEndpoint(ctx.deps, shop.id, { url: `${receiver.url}/other` })
      expect(await verifyWebhook(other.secret, message!.body, headers)).toEqual({ ok: false, reason: 'bad_signature' })
      expect(await verifyWebhook(endpoint.secret, message!.body, headers, { now: new Date(Date.now() + 10 * 60_000) })).toEqual({ ok: false, reason: 'stale' })
      expect((await outbox(endpoint.id))[0]!.deliveredAt).not.toBeNull()
    } finally {
      receiver.stop()
    }
  })

  test('a receiver that fails three times gets the event once it recovers, on the backoff schedule, with one message id', async () => {
    const receiver = startReceiver((count) => (count <= 3 ? 500 : 204))
    try {
      const shop = await ctx.createClient({ name: 'Flaky shop' })
      const endpoint = await addWebhookEndpoint(ctx.deps, shop.id, { url: receiver.url })
      await ctx.issueCode({ clientId: shop.id })
      for (let attempt = 1; attempt <= 4; attempt++) {
        expect(await deliverDue(ctx.deps)).toBe(1)
        // Not due again before its delay is over.
        expect(await deliverDue(ctx.deps)).toBe(0)
        if (attempt < 4) ctx.clock.advance(RETRY_DELAYS_S[attempt - 1]! * 1000)
      }
      expect(receiver.received).toHaveLength(4)
      expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1)
      const [delivery] = await outbox(endpoint.id)
      expect(delivery).toMatchObject({ attempts: 4, lastStatus: 204 })
      expect(delivery!.deliveredAt).not.toBeNull()
      ctx.clock.advance(86_400_000)
      expect(await deliverDue(ctx.deps)).toBe(0)
    } finally {
      receiver.stop()
    }
  })

  test('a failed send logs its cause (ECONNREFUSED and the message), not only "TypeError", and never the payload, secret or URL token', async () => {
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(null) })
    const url = `http://127.0.0.1:${closed.port}/hooks/t0ken-in-path?key=s3cret`
    closed.stop(true)
    const shop = await ctx.createClient({ name: 'Unreachable shop' })
    const endpoint = await addWebhookEndpoint(ctx.deps, shop.id, { url })
    await ctx.issueCode({ clientId: shop.id })
    try {
      const lines: Record<string, unknown>[] = []
      const log = { info: (event: string, fields?: Record<string, unknown>) => void lines.push({ event, ...fields }), error: () => {} }
      expect(await deliverDue({ ...ctx.deps, log })).toBeGreaterThanOrEqual(1)
      const failed = lines.find((line) => line.event === 'webhook_failed' && line.endpoint_id === endpoint.id)!
      expect(failed.error).toStartWith('unreachable: ECONNREFUSED: ')
      const [delivery] = await outbox(endpoint.id)
      expect(delivery!.lastError).toBe(failed.error as string)
      const logged = JSON.stringify(lines)
      for (const secret of [endpoint.secret, 't0ken-in-path', 's3cret', 'verification.approved', delivery!.payload]) expect(logged).not.toContain(secret)
    } finally {
      await removeWebhookEndpoint(ctx.deps.db, endpoint.id)
    }
  })

  test('after 24 hours of failures the delivery is dead; the CLI lists it and replays it', async () => {
    let up = false
    const receiver = startReceiver(() => (up ? 200 : 503))
    try {
      const shop = await ctx.createClient({ name: 'Down shop' })
      const endpoint = await addWebhookEndpoint(ctx.deps, shop.id, { url: receiver.url })
      await ctx.issueCode({ clientId: shop.id })
      for (const delay of [...RETRY_DELAYS_S, 0]) {
        expect(await deliverDue(ctx.deps)).toBe(1)
        ctx.clock.advance(delay * 1000)
      }
      expect(RETRY_DELAYS_S.reduce((sum, s) => sum + s, 0)).toBeLessThanOrEqual(24 * 3600)
      const [dead] = await outbox(endpoint.id)
      expect(dead).toMatchObject({ attempts: RETRY_DELAYS_S.length + 1, lastStatus: 503 })
      expect(dead!.deadAt).not.toBeNull()
      ctx.clock.advance(86_400_000)
      expect(await deliverDue(ctx.deps)).toBe(0)

      const out: string[] = []
      const io = { out: (text: string) => out.push(text), err: (text: string) => out.push(text) }
      expect(await runCommand({ deps: ctx.deps, close: async () => {} }, ['webhooks', 'dead', '--client', shop.id, '--json'], io)).toBe(0)
      expect(JSON.parse(out.pop()!)).toMatchObject([{ delivery_id: dead!.id, event_type: 'verification.approved', attempts: 11, last_status: 503 }])
      up = true
      expect(await runCommand({ deps: ctx.deps, close: async () => {} }, ['webhooks', 'replay', dead!.id], io)).toBe(0)
      expect(await deliverDue(ctx.deps)).toBe(1)
      expect((await outbox(endpoint.id))[0]!.deliveredAt).not.toBeNull()
      expect(receiver.received.at(-1)!.id).toBe(dead!.id)
      expect(await runCommand({ deps: ctx.deps, close: async () => {} }, ['webhooks', 'replay', dead!.id], io)).toBe(1)
    } finally {
      receiver.stop()
    }
  })
})

test('a restart loses no pending delivery: the outbox is in the database', async () => {
  const database = await freshDatabaseUrl()
  const dataDir = onPostgres ? undefined : mkdtempSync(join(tmpdir(), 'ofage-webhooks-'))
  const config = testConfig(onPostgres ? { DATABASE_URL: database.url } : { DATA_DIR: dataDir })
  const clock = fixedClock()
  const receiver = startReceiver()
  try {
    const first = await startServices(config, { clock, log: silentLogger })
    const { createClient } = await import('../../src/clients/registry.ts')
    const { issueCode } = await import('../../src/oauth/issue-code.ts')
    const { client } = await createClient(first.deps, { name: 'Restart shop', redirectUris: [REDIRECT_URI] })
    // Nothing listens at first: the attempt fails and waits for its retry.
    await addWebhookEndpoint(first.deps, client.id, { url: receiver.url.replace(/:\d+\//, ':1/') })
    await issueCode(first.deps, { clientId: client.id, redirectUri: REDIRECT_URI, ageOver: 18, methodClass: 'age_only' })
    const worker = startWebhookWorker(first.deps, 10)
    while ((await queryRows<{ n: number }>(first.deps.db, sql`select attempts as n from webhook_deliveries`))[0]?.n !== 1) await Bun.sleep(10)
    await worker.stop()
    await first.close()

    // The same store, a new process: the receiver moved to where it listens, the retry comes due.
    const second = await startServices(config, { clock, log: silentLogger })
    await second.deps.db.execute(sql`update webhook_endpoints set url = ${receiver.url}`)
    clock.advance(RETRY_DELAYS_S[0]! * 1000)
    expect(await deliverDue(second.deps)).toBe(1)
    expect(receiver.received).toHaveLength(1)
    expect(JSON.parse(receiver.received[0]!.body).type).toBe('verification.approved')
    await second.close()
  } finally {
    receiver.stop()
    await database.drop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  }
}, 30_000)

test.skipIf(!onPostgres)('two instances delivering from one outbox never send one attempt twice', async () => {
  const database = await freshDatabaseUrl()
  const config = testConfig({ DATABASE_URL: database.url })
  const receiver = startReceiver()
  const instances = [await startServices(config, { log: silentLogger }), await startServices(config, { log: silentLogger })]
  try {
    const { createClient } = await import('../../src/clients/registry.ts')
    const { issueCode } = await import('../../src/oauth/issue-code.ts')
    const { client } = await createClient(instances[0]!.deps, { name: 'Busy shop', redirectUris: [REDIRECT_URI] })
    await addWebhookEndpoint(instances[0]!.deps, client.id, { url: receiver.url })
    await Promise.all(Array.from({ length: 60 }, () => issueCode(instances[0]!.deps, { clientId: client.id, redirectUri: REDIRECT_URI, ageOver: 18, methodClass: 'age_only' })))
    // Both instances pass over the outbox at once, again and again, until it is empty.
    const drain = async (deps: (typeof instances)[number]['deps']) => {
      while ((await queryRows<{ n: number }>(deps.db, sql`select count(*)::int as n from webhook_deliveries where delivered_at is null`))[0]!.n > 0) await deliverDue(deps)
    }
    await Promise.all(instances.map((instance) => drain(instance.deps)))
    expect(receiver.received).toHaveLength(60)
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(60)
  } finally {
    receiver.stop()
    for (const instance of instances) await instance.close()
    await database.drop()
  }
}, 30_000)
