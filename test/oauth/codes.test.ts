import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { pruneExpiredCodes } from '../../src/oauth/codes.ts'
import { createTestContext, json, queryRows, REDIRECT_URI, type TestContext } from '../helpers.ts'

let ctx: TestContext

beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

describe('pruneExpiredCodes', () => {
  test('deletes codes expired before the cutoff, keeps the rest and every audit row', async () => {
    const client = await ctx.createClient()
    const old = await ctx.issueCode({ clientId: client.id, state: 's' })
    ctx.clock.advance(30 * 60_000)
    const recent = await ctx.issueCode({ clientId: client.id, state: 's' })
    // Cutoff between the two expiries: only the older code goes.
    const cutoff = new Date(ctx.clock.now().getTime() - 60_000)
    expect(await pruneExpiredCodes(ctx.deps.db, cutoff)).toBe(1)
    const exchange = (code: string) =>
      ctx.exchange(client.authorization, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 's' })
    expect((await json(await exchange(old.code))).error).toBe('invalid_grant')
    expect((await exchange(recent.code)).status).toBe(200)
    expect(await queryRows(ctx.deps.db, sql`select count(*)::int as n from audit_logs where client_id = ${client.id}`)).toEqual([{ n: 2 }])
  })
})

describe('codes at rest', () => {
  test('only a hash of each code is stored', async () => {
    const client = await ctx.createClient()
    const { code } = await ctx.issueCode({ clientId: client.id })
    const rows = await queryRows<{ code_hash: string }>(ctx.deps.db, sql`select code_hash from auth_codes where client_id = ${client.id}`)
    expect(rows).toHaveLength(1)
    expect(rows[0]!.code_hash).not.toContain(code)
    expect(rows[0]!.code_hash).toMatch(/^[0-9a-f]{64}$/)
  })
})
