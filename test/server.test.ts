import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { pruneExpired } from '../src/server.ts'
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
  const before = { codes: await count('auth_codes'), sessions: await count('verification_sessions'), passes: await count('age_passes') }
  expect(before).toEqual({ codes: 1, sessions: 1, passes: 1 })

  ctx.clock.advance(60 * 60_000)
  await pruneExpired(ctx.deps)
  expect(await count('verification_sessions')).toBe(1)
  ctx.clock.advance(31 * 24 * 60 * 60_000)
  await pruneExpired(ctx.deps)
  expect({ codes: await count('auth_codes'), sessions: await count('verification_sessions'), passes: await count('age_passes') }).toEqual({
    codes: 0,
    sessions: 0,
    passes: 0,
  })
  expect(await count('audit_logs')).toBe(1)
})
