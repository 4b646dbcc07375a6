import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { OAuthError } from '../../src/errors.ts'
import { issueCode } from '../../src/oauth/issue-code.ts'
import { sql } from 'drizzle-orm'
import { updateClient } from '../../src/clients/registry.ts'
import { countMonthToDate, utcDay } from '../../src/usage/counters.ts'
import { countUsageByDay } from '../../src/usage/daily.ts'
import { basic, createTestContext, json, onPostgres, queryRows, REDIRECT_URI, type TestContext } from '../helpers.ts'

let ctx: TestContext
type TestClient = Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())
beforeEach(() => ctx.clock.set('2026-11-22T12:00:00.000Z'))

const usage = (client: TestClient, query = '') => ctx.request(`/api/oauth/usage${query}`, { headers: { authorization: client.authorization } })

/** Approves `count` checks for a client at the clock's current time. */
async function approve(client: TestClient, count: number, check: { methodClass?: 'age_only' | 'biometric'; reverification?: boolean } = {}) {
  for (let i = 0; i < count; i++) await ctx.issueCode({ clientId: client.id, ...check })
}

describe('GET /api/oauth/usage (SPEC.md §2.5, §4.6)', () => {
  test('counts by method class and re-verification; total = age_only + biometric', async () => {
    const client = await ctx.createClient()
    await approve(client, 3, { methodClass: 'age_only' })
    await approve(client, 2, { methodClass: 'biometric' })
    await approve(client, 1, { methodClass: 'biometric', reverification: true })
    const response = await usage(client)
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(await json(response)).toEqual({
      client_id: client.id,
      period: { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' },
      usage: { total_verifications: 6, age_only_count: 3, biometric_count: 3, reverification_count: 1 },
    })
  })

  test('counts only the authenticated client', async () => {
    const a = await ctx.createClient()
    const b = await ctx.createClient()
    await approve(a, 2)
    await approve(b, 5)
    expect((await json(await usage(a))).usage.total_verifications).toBe(2)
    expect((await json(await usage(b))).usage.total_verifications).toBe(5)
  })

  test('period=day, month (default) and all cover the UTC day, month and everything', async () => {
    ctx.clock.set('2026-10-15T00:00:00.000Z')
    const client = await ctx.createClient()
    ctx.clock.set('2026-10-31T23:59:59.999Z')
    await approve(client, 1)
    ctx.clock.set('2026-11-21T00:00:00.000Z')
    await approve(client, 2)
    ctx.clock.set('2026-11-22T00:00:00.000Z')
    await approve(client, 4)
    ctx.clock.set('2026-11-22T18:30:00.000Z')
    const day = await json(await usage(client, '?period=day'))
    expect(day.period).toEqual({ start: '2026-11-22T00:00:00.000Z', end: '2026-11-23T00:00:00.000Z' })
    expect(day.usage.total_verifications).toBe(4)
    expect((await json(await usage(client, '?period=month'))).usage.total_verifications).toBe(6)
    expect((await json(await usage(client))).usage.total_verifications).toBe(6)
    const all = await json(await usage(client, '?period=all'))
    expect(all.usage.total_verifications).toBe(7)
    expect(all.period).toEqual({ start: '2026-10-15T00:00:00.000Z', end: '2026-11-23T00:00:00.000Z' })
  })

  test('start_date and end_date as dates: end_date includes its whole day, and they override period', async () => {
    ctx.clock.set('2026-10-15T00:00:00.000Z')
    const client = await ctx.createClient()
    for (const [at, count] of [['2026-11-01T00:00:00.000Z', 1], ['2026-11-10T23:59:59.999Z', 2], ['2026-11-11T00:00:00.000Z', 4]] as const) {
      ctx.clock.set(at)
      await approve(client, count)
    }
    ctx.clock.set('2026-11-22T12:00:00.000Z')
    const report = await json(await usage(client, '?start_date=2026-11-01&end_date=2026-11-10&period=day'))
    expect(report.period).toEqual({ start: '2026-11-01T00:00:00.000Z', end: '2026-11-11T00:00:00.000Z' })
    expect(report.usage.total_verifications).toBe(3)
    expect((await json(await usage(client, '?start_date=2026-11-11'))).usage.total_verifications).toBe(4)
    expect((await json(await usage(client, '?end_date=2026-11-01'))).usage.total_verifications).toBe(1)
  })

  test('timestamps count exactly, including partial days at both edges', async () => {
    const client = await ctx.createClient()
    const times = ['2026-11-01T10:00:00.000Z', '2026-11-01T13:00:00.000Z', '2026-11-02T09:00:00.000Z', '2026-11-03T05:00:00.000Z', '2026-11-03T07:00:00.000Z']
    for (const at of times) {
      ctx.clock.set(at)
      await approve(client, 1, { methodClass: at.endsWith('07:00:00.000Z') ? 'biometric' : 'age_only' })
    }
    const report = await json(await usage(client, '?start_date=2026-11-01T12:00:00Z&end_date=2026-11-03T07:00:00.000Z'))
    expect(report.period).toEqual({ start: '2026-11-01T12:00:00.000Z', end: '2026-11-03T07:00:00.000Z' })
    // 13:00 on the 1st, the 2nd, and 05:00 on the 3rd; 07:00 is the exclusive end.
    expect(report.usage).toEqual({ total_verifications: 3, age_only_count: 3, biometric_count: 0, reverification_count: 0 })
    const offset = await json(await usage(client, '?start_date=2026-11-01T13:00:00%2B01:00&end_date=2026-11-03T08:00:00%2B01:00'))
    expect(offset.period.start).toBe('2026-11-01T12:00:00.000Z')
    expect(offset.usage.total_verifications).toBe(3)
    const withinOneDay = await json(await usage(client, '?start_date=2026-11-03T06:00:00Z&end_date=2026-11-03T08:00:00Z'))
    expect(withinOneDay.usage).toEqual({ total_verifications: 1, age_only_count: 0, biometric_count: 1, reverification_count: 0 })
  })

  test.each([
    ['?period=week'],
    ['?period=day&period=month'],
    ['?start_date=2026-13-01'],
    ['?start_date=2026-02-30'],
    ['?start_date=22-11-2026'],
    ['?start_date=2026-11-01T10:00:00'],
    ['?start_date=yesterday'],
    ['?start_date=2026-11-10&end_date=2026-11-01'],
    ['?start_date=2026-11-01T10:00:00Z&end_date=2026-11-01T10:00:00Z'],
  ])('%s is invalid_request 400', async (query) => {
    const client = await ctx.createClient()
    const response = await usage(client, query)
    expect(response.status).toBe(400)
    const body = await json(response)
    expect(body.error).toBe('invalid_request')
    expect(body.error_description.length).toBeGreaterThan(10)
  })

  test('needs client credentials: invalid_client 401', async () => {
    const client = await ctx.createClient()
    expect((await ctx.request('/api/oauth/usage')).status).toBe(401)
    const response = await ctx.request('/api/oauth/usage', { headers: { authorization: basic(client.id, 'wrong') } })
    expect(response.status).toBe(401)
    expect((await json(response)).error).toBe('invalid_client')
  })

  test('usage equals the approved audit rows, and codes never exchanged still count', async () => {
    const client = await ctx.createClient()
    await approve(client, 2)
    const { access_token } = await ctx.tokenFor(client)
    expect(access_token).toBeTruthy()
    expect((await json(await usage(client))).usage.total_verifications).toBe(3)
  })
})

describe('a day counted over several rows (src/usage/counters.ts: one per shard)', () => {
  /** The client's counter rows for the clock's day, as the completions left them. */
  const dayRows = (clientId: string) =>
    queryRows<{ shard: number; total: number }>(ctx.deps.db, sql`select shard, total from usage_daily where client_id = ${clientId} and day = ${utcDay(ctx.clock.now())}::date order by shard`)

  /** Writes the clock's day as two rows, as completions on two connections leave it: 3 age-only on shard 0, 2 biometric on shard 7. */
  async function spreadDay(clientId: string) {
    const day = utcDay(ctx.clock.now())
    await ctx.deps.db.execute(sql`delete from usage_daily where client_id = ${clientId} and day = ${day}::date`)
    await ctx.deps.db.execute(sql`insert into usage_daily (client_id, day, shard, total, age_only, biometric, reverification)
      values (${clientId}, ${day}::date, 0, 3, 3, 0, 0), (${clientId}, ${day}::date, 7, 2, 0, 2, 0)`)
  }

  test('the usage report, the dashboard\'s days and the plan limit sum the rows', async () => {
    const client = await ctx.createClient()
    await approve(client, 3, { methodClass: 'age_only' })
    await approve(client, 2, { methodClass: 'biometric' })
    // Whatever rows the five completions used (on Postgres, their connections'), the day is now two rows.
    await spreadDay(client.id)
    expect((await dayRows(client.id)).map((row) => [Number(row.shard), Number(row.total)])).toEqual([
      [0, 3],
      [7, 2],
    ])
    const expected = { total_verifications: 5, age_only_count: 3, biometric_count: 2, reverification_count: 0 }
    expect((await json(await usage(client, '?period=day'))).usage).toEqual(expected)
    expect((await json(await usage(client))).usage).toEqual(expected)
    const days = await countUsageByDay(ctx.deps.db, client.id, { start: new Date('2026-11-21T00:00:00.000Z'), end: new Date('2026-11-23T00:00:00.000Z') })
    expect(days).toEqual([
      { day: '2026-11-21', usage: { total_verifications: 0, age_only_count: 0, biometric_count: 0, reverification_count: 0 } },
      { day: '2026-11-22', usage: expected },
    ])
    expect(await countMonthToDate(ctx.deps.db, client.id, ctx.clock.now())).toBe(5)
    // The plan limit counts both rows: a limit of 6 leaves one verification, not four.
    await updateClient(ctx.deps.db, client.id, { verificationLimit: 6 })
    await approve(client, 1)
    expect((await ctx.issueCode({ clientId: client.id }).catch((error) => error)).code).toBe('payment_required')
  })

  test.skipIf(!onPostgres)('completions at once on several connections count on several rows, and none is lost', async () => {
    const client = await ctx.createClient()
    await Promise.all(Array.from({ length: 40 }, () => issueCode(ctx.deps, { clientId: client.id, redirectUri: REDIRECT_URI, ageOver: 18, methodClass: 'age_only' })))
    const rows = await dayRows(client.id)
    expect(rows.length).toBeGreaterThan(1)
    expect(rows.reduce((sum, row) => sum + row.total, 0)).toBe(40)
    expect((await json(await usage(client, '?period=day'))).usage.total_verifications).toBe(40)
  })
})

describe('plan limits (DESIGN.md "Plan limits")', () => {
  test('issuing beyond the monthly limit is payment_required; a new month starts afresh', async () => {
    const client = await ctx.createClient({ verificationLimit: 2 })
    await approve(client, 2)
    const refused = await ctx.issueCode({ clientId: client.id }).catch((error) => error)
    expect(refused).toBeInstanceOf(OAuthError)
    expect(refused.code).toBe('payment_required')
    expect(refused.status).toBe(402)
    ctx.clock.set('2026-12-01T00:00:00.000Z')
    await approve(client, 2)
    expect((await json(await usage(client, '?period=all'))).usage.total_verifications).toBe(4)
  })

  test('a limit of 0 refuses every verification', async () => {
    const client = await ctx.createClient({ verificationLimit: 0 })
    expect((await ctx.issueCode({ clientId: client.id }).catch((error) => error)).code).toBe('payment_required')
  })

  test('30 concurrent completions against a limit of 7: exactly 7 succeed and 7 are counted', async () => {
    const client = await ctx.createClient({ verificationLimit: 7 })
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, () =>
        issueCode(ctx.deps, { clientId: client.id, redirectUri: REDIRECT_URI, ageOver: 18, methodClass: 'age_only' }),
      ),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(7)
    const reasons = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as OAuthError).code] : []))
    expect(reasons).toEqual(Array(23).fill('payment_required'))
    expect((await json(await usage(client))).usage.total_verifications).toBe(7)
  })

  test('issuing for a suspended or unknown client, or to an unregistered redirect URI, is refused', async () => {
    const client = await ctx.createClient()
    const unregistered = await ctx.issueCode({ clientId: client.id, redirectUri: 'https://evil.example/cb' }).catch((e) => e)
    expect(unregistered.code).toBe('invalid_redirect_uri')
    const unknown = await ctx.issueCode({ clientId: 'cl_nope' }).catch((e) => e)
    expect(unknown.code).toBe('invalid_client')
    expect((await json(await usage(client))).usage.total_verifications).toBe(0)
  })
})
