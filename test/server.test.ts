import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { pruneExpired } from '../src/jobs/prune.ts'
import { createTestContext, queryRows, type TestContext } from './helpers.ts'
import { testBrowser } from './verification/browser.ts'

let ctx: TestContext

beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const count = async (table: string) =>
  (await queryRows<{ n: number }>(ctx.deps.db, sql.raw(`select count(*)::int as n from ${table}`)))[0]!.n

test('pruneExpired removes codes, sessions and passes an hour past expiry, and keeps audit rows', async () => {
  const client = await ctx.createClient({ sandbox: true })
  const browser = testBrowser(ctx)
  const { page } = await browser.open({ client_id: client.id })
  await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
  const counts = async () => ({ codes: await count('auth_codes'), sessions: await count('verification_sessions'), passes: await count('age_passes') })
  expect(await counts()).toEqual({ codes: 1, sessions: 1, passes: 1 })

  // A code lives 60 s and an age pass 30 days (README); a page session 30 min. Each row outlives its expiry
  // by an hour and is gone just after. The clock stood still while the three were made.
  const minute = 60_000
  const hour = 60 * minute
  let elapsed = 0
  const pruneAt = async (ms: number) => {
    ctx.clock.advance(ms - elapsed)
    elapsed = ms
    await pruneExpired(ctx.deps)
    return counts()
  }
  expect(await pruneAt(minute + hour - 1)).toEqual({ codes: 1, sessions: 1, passes: 1 })
  expect(await pruneAt(minute + hour + 1)).toEqual({ codes: 0, sessions: 1, passes: 1 })
  expect(await pruneAt(30 * minute + hour - 1)).toEqual({ codes: 0, sessions: 1, passes: 1 })
  expect(await pruneAt(30 * minute + hour + 1)).toEqual({ codes: 0, sessions: 0, passes: 1 })
  expect(await pruneAt(30 * 24 * hour + hour - 1)).toEqual({ codes: 0, sessions: 0, passes: 1 })
  expect(await pruneAt(30 * 24 * hour + hour + 1)).toEqual({ codes: 0, sessions: 0, passes: 0 })
  expect(await count('audit_logs')).toBe(1)
})
