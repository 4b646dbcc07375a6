import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { eventPayload } from '../../src/webhooks/events.ts'
import { addWebhookEndpoint } from '../../src/webhooks/endpoints.ts'
import { createTestContext, queryRows, type TestContext } from '../helpers.ts'
import { callback, testBrowser } from '../verification/browser.ts'

/**
 * A completion is one statement (src/oauth/issue-code.ts): the claim of the session, the plan limit, the audit
 * row, the usage count, the code, the webhook events and the age pass. Raced through the hosted page, with
 * real concurrency on Postgres (the app's pool of connections; the embedded database runs them one by one):
 * DESIGN.md's "never exceeded, even by concurrent completions", "usage counts equal approved audit rows", one
 * code per session, and each event once.
 */
let ctx: TestContext

beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_SESSIONS: '1000', RATE_LIMIT_CHECKS: '1000' } })
})
afterAll(() => ctx.close())

const count = async (query: ReturnType<typeof sql>) => (await queryRows<{ n: number }>(ctx.deps.db, query))[0]!.n

/** `visitors` browsers, each with the page open on a session of its own, ready to post the sandbox form. */
async function openPages(clientId: string, visitors: number) {
  return Promise.all(
    Array.from({ length: visitors }, async (_, i) => {
      const browser = testBrowser(ctx)
      const { page } = await browser.open({ client_id: clientId, state: `v${i}` })
      const complete = () => browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
      return { browser, complete }
    }),
  )
}

/** Everything a client's approvals wrote: audit rows, usage, codes, completed sessions, and its deliveries by event. */
async function written(clientId: string) {
  return {
    audit: await count(sql`select count(*)::integer as n from audit_logs where client_id = ${clientId}`),
    usage: await count(sql`select coalesce(sum(total), 0)::integer as n from usage_daily where client_id = ${clientId}`),
    codes: await count(sql`select count(*)::integer as n from auth_codes where client_id = ${clientId}`),
    completed: await count(sql`select count(*)::integer as n from verification_sessions where client_id = ${clientId} and completed_at is not null`),
    approvedEvents: await count(sql`select count(*)::integer as n from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where e.client_id = ${clientId} and d.event_type = 'verification.approved'`),
    limitEvents: await count(sql`select count(*)::integer as n from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where e.client_id = ${clientId} and d.event_type = 'plan.limit_reached'`),
  }
}

describe('a completion is one statement, raced', () => {
  test('24 visitors complete at once against a limit of 5: exactly 5 codes, audit rows, usage, passes and approval events, and one limit event', async () => {
    const client = await ctx.createClient({ sandbox: true, verificationLimit: 5 })
    await addWebhookEndpoint(ctx.deps, client.id, { url: 'https://hooks.example/ofage' })
    const visitors = await openPages(client.id, 24)
    const passesBefore = await count(sql`select count(*)::integer as n from age_passes`)
    const responses = await Promise.all(visitors.map(({ complete }) => complete()))
    expect(responses.filter((r) => r.status === 303)).toHaveLength(5)
    expect(responses.filter((r) => r.status === 402)).toHaveLength(19)
    expect(new Set(responses.flatMap((r) => callback(r)?.code ?? [])).size).toBe(5)
    expect(await written(client.id)).toEqual({ audit: 5, usage: 5, codes: 5, completed: 5, approvedEvents: 5, limitEvents: 1 })
    // An age pass only with a code: the refused visitors got none.
    expect(await count(sql`select count(*)::integer as n from age_passes`)).toBe(passesBefore + 5)
    expect(visitors.filter(({ browser }) => browser.jar.has('ofage_pass'))).toHaveLength(5)
    // The event is the text the outbox has always written, with the limit read from the locked row.
    const [limit] = await queryRows<{ payload: string }>(ctx.deps.db, sql`select d.payload from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where e.client_id = ${client.id} and d.event_type = 'plan.limit_reached'`)
    expect(limit!.payload).toBe(eventPayload('plan.limit_reached', { client_id: client.id, verification_limit: 5, month: '2026-11' }, ctx.clock.now()))
  }, 30_000)

  test('each of 12 sessions posted three times at once: one code per session, the other posts session_expired', async () => {
    for (const verificationLimit of [null, 1000]) {
      const client = await ctx.createClient({ sandbox: true, verificationLimit })
      const visitors = await openPages(client.id, 12)
      const responses = await Promise.all(visitors.flatMap(({ complete }) => [complete(), complete(), complete()]))
      expect(responses.filter((r) => r.status === 303)).toHaveLength(12)
      const refused = responses.filter((r) => r.status !== 303)
      expect(refused.every((r) => r.status === 400)).toBe(true)
      for (const response of refused) expect(await response.text()).toContain('session_expired')
      expect(await written(client.id)).toEqual({ audit: 12, usage: 12, codes: 12, completed: 12, approvedEvents: 0, limitEvents: 0 })
    }
  }, 30_000)

  test('a limit lowered under the month\'s count refuses at once; raised again, the same sessions complete', async () => {
    const client = await ctx.createClient({ sandbox: true, verificationLimit: 10 })
    const visitors = await openPages(client.id, 6)
    await Promise.all(visitors.slice(0, 3).map(({ complete }) => complete()))
    await ctx.deps.db.execute(sql`update clients set verification_limit = 2 where id = ${client.id}`)
    const refused = await Promise.all(visitors.slice(3).map(({ complete }) => complete()))
    expect(refused.map((r) => r.status)).toEqual([402, 402, 402])
    await ctx.deps.db.execute(sql`update clients set verification_limit = 5 where id = ${client.id}`)
    const responses = await Promise.all(visitors.slice(3).map(({ complete }) => complete()))
    expect(responses.filter((r) => r.status === 303)).toHaveLength(2)
    expect(await written(client.id)).toMatchObject({ audit: 5, usage: 5, codes: 5, completed: 5 })
  }, 30_000)
})
