import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp, createHandler } from '../src/app.tsx'
import { basic, createTestContext, json, REDIRECT_URI, type TestContext } from './helpers.ts'

/**
 * Abuse limits (issue 10): counted in the database, so every instance shares them. Addresses come from
 * X-Forwarded-For here (TRUST_PROXY=1), as they do behind the operator's proxy.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  ctx = await createTestContext({ env: { TRUST_PROXY: '1', RATE_LIMIT_AUTH_FAILURES: '5', RATE_LIMIT_SESSIONS: '3' } })
  shop = await ctx.createClient({ sandbox: true })
})
afterAll(() => ctx.close())

const usage = (authorization: string, address: string, handle = ctx.handle) =>
  handle(new Request(`http://api.ofage.test/api/oauth/usage`, { headers: { authorization, 'x-forwarded-for': `203.0.113.9, ${address}` } }))

describe('failed client authentication', () => {
  test('past the limit an address gets 429 with the spec body and Retry-After, even with the right secret, until the window ends', async () => {
    const wrong = basic(shop.id, 'not-the-secret')
    for (let i = 0; i < 5; i++) expect((await usage(wrong, '198.51.100.1')).status).toBe(401)
    const limited = await usage(wrong, '198.51.100.1')
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await json(limited)).toEqual({ error: 'too_many_requests', error_description: expect.stringContaining('Too many requests') })
    expect((await usage(shop.authorization, '198.51.100.1')).status).toBe(429)
    // The site itself, at its own address, is not locked out by someone failing on its client id.
    expect((await usage(shop.authorization, '198.51.100.2')).status).toBe(200)
    ctx.clock.advance(60_000)
    expect((await usage(shop.authorization, '198.51.100.1')).status).toBe(200)
  })

  test('parallel failures all count, and a second instance on the same database sees them', async () => {
    const wrong = basic(shop.id, 'still-wrong')
    const statuses = await Promise.all(Array.from({ length: 12 }, () => usage(wrong, '198.51.100.3').then((r) => r.status)))
    // A burst is checked before its own failures are written, so it may be answered 401 in full; each one
    // counts, and everything after it is refused before any secret is hashed.
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true)
    const otherInstance = createHandler(ctx.deps, createApp(ctx.deps))
    expect((await usage(wrong, '198.51.100.3', otherInstance)).status).toBe(429)
    const token = await otherInstance(
      new Request('http://api.ofage.test/api/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: wrong, 'x-forwarded-for': '198.51.100.3' },
        body: JSON.stringify({ grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT_URI, state: 's' }),
      }),
    )
    expect(token.status).toBe(429)
  })

  test('without TRUST_PROXY, a client-written X-Forwarded-For is ignored', async () => {
    const plain = await createTestContext({ env: { RATE_LIMIT_AUTH_FAILURES: '2' } })
    try {
      const client = await plain.createClient()
      const wrong = basic(client.id, 'wrong')
      const statuses: number[] = []
      for (const address of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) {
        statuses.push((await plain.request('/api/oauth/usage', { headers: { authorization: wrong, 'x-forwarded-for': address } })).status)
      }
      expect(statuses).toEqual([401, 401, 429])
    } finally {
      await plain.close()
    }
  })
})

describe('page sessions', () => {
  test('one address opens a bounded number of sessions a minute; the page says so with 429', async () => {
    const open = () =>
      ctx.handle(new Request(`http://api.ofage.test/?client_id=${shop.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`, { headers: { 'x-forwarded-for': '198.51.100.7' } }))
    for (let i = 0; i < 3; i++) expect((await open()).status).toBe(200)
    const limited = await open()
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).not.toBeNull()
    expect(await limited.text()).toContain('Too many requests from your network')
    // Counted where operators look. (This read a second, never-closed context's registry: it proved only that
    // the metric exists, and left a test database behind in every Postgres run.)
    const metrics = await ctx.deps.metrics.registry.metrics()
    expect(metrics).toMatch(/^ofage_rate_limited_total\{route="page"[^}]*\} [1-9]\d*$/m)
  })
})
