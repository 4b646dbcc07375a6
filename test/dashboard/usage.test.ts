import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { UsageCounts } from '../../src/usage/report.ts'
import { UsageChart } from '../../src/dashboard/usage-chart.tsx'
import { updateClient } from '../../src/clients/registry.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { createUser, signedIn, type DashboardBrowser } from './dashboard.ts'

/**
 * The usage page (issue 13, part 3): this UTC month's counts against the plan limit and a chart of the days
 * so far, counted by the same code as GET /api/oauth/usage, and only ever the signed-in user's client.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
let rival: Awaited<ReturnType<TestContext['createClient']>>
let capped: Awaited<ReturnType<TestContext['createClient']>>
let owner: DashboardBrowser
let rivalUser: DashboardBrowser
let cappedUser: DashboardBrowser

const DAY_MS = 86_400_000
const COUNT_KEYS = ['total_verifications', 'age_only_count', 'biometric_count', 'reverification_count'] as const

beforeAll(async () => {
  ctx = await createTestContext()
  ctx.clock.set('2026-11-01T00:00:00.000Z')
  shop = await ctx.createClient({ name: 'Shop' })
  rival = await ctx.createClient({ name: 'Rival' })
  capped = await ctx.createClient({ name: 'Capped', verificationLimit: 3 })
  // Last month's verification: never part of this month's numbers.
  ctx.clock.set('2026-10-31T23:59:59.000Z')
  await ctx.issueCode({ clientId: shop.id })
  // Two days of this month, with different classes and a re-verification; the rival on a day in between.
  ctx.clock.set('2026-11-03T09:00:00.000Z')
  await ctx.issueCode({ clientId: shop.id, methodClass: 'age_only' })
  await ctx.issueCode({ clientId: shop.id, methodClass: 'biometric' })
  await ctx.issueCode({ clientId: shop.id, methodClass: 'age_only', reverification: true })
  ctx.clock.advance(DAY_MS)
  for (let i = 0; i < 7; i++) await ctx.issueCode({ clientId: rival.id, methodClass: 'biometric' })
  ctx.clock.advance(2 * DAY_MS + 3 * 3_600_000)
  await ctx.issueCode({ clientId: shop.id, methodClass: 'biometric', reverification: true })
  await ctx.issueCode({ clientId: shop.id, methodClass: 'biometric' })
  for (let i = 0; i < 3; i++) await ctx.issueCode({ clientId: capped.id })
  // Now: 2026-11-06T12:00Z, the sixth day of the month.
  await createUser(ctx, shop.id, 'owner@shop.example')
  await createUser(ctx, rival.id, 'owner@rival.example')
  await createUser(ctx, capped.id, 'owner@capped.example')
  owner = await signedIn(ctx, 'owner@shop.example')
  rivalUser = await signedIn(ctx, 'owner@rival.example')
  cappedUser = await signedIn(ctx, 'owner@capped.example')
}, 60_000)
afterAll(() => ctx.close())

/** The counts the page shows in its summary. */
function pageCounts(html: string): UsageCounts {
  const read = (key: string) => Number(new RegExp(`data-count="${key}">(\\d+)<`).exec(html)?.[1])
  return Object.fromEntries(COUNT_KEYS.map((key) => [key, read(key)])) as UsageCounts
}

/** The per-day table: day → its four counts. */
function pageTable(html: string): Map<string, number[]> {
  const rows = [...html.matchAll(/<tr data-day="(\d{4}-\d{2}-\d{2})">([\s\S]*?)<\/tr>/g)]
  return new Map(rows.map((row) => [row[1]!, [...row[2]!.matchAll(/<td class="number" data-label="[^"]+">(\d+)<\/td>/g)].map((cell) => Number(cell[1]))]))
}

/** The chart's bars: day → total. */
function pageBars(html: string): Map<string, number> {
  return new Map([...html.matchAll(/<rect class="bar"[^>]*data-day="([\d-]+)" data-total="(\d+)"/g)].map((bar) => [bar[1]!, Number(bar[2])]))
}

async function apiUsage(client: { authorization: string }, query: string): Promise<UsageCounts> {
  const response = await ctx.request(`/api/oauth/usage?${query}`, { headers: { authorization: client.authorization } })
  expect(response.status).toBe(200)
  return ((await response.json()) as { usage: UsageCounts }).usage
}

async function usagePage(browser: DashboardBrowser, headers: Record<string, string> = {}): Promise<string> {
  const response = await browser.request('/dashboard/usage', { headers })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-security-policy') ?? '').toContain("style-src 'self'")
  return response.text()
}

describe('the usage page', () => {
  test('signed out, it sends the browser to sign in', async () => {
    const response = await ctx.request('/dashboard/usage')
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/dashboard/sign-in')
  })

  test('its month totals are the usage API’s period=month counts', async () => {
    const html = await usagePage(owner)
    const api = await apiUsage(shop, 'period=month')
    expect(api).toEqual({ total_verifications: 5, age_only_count: 2, biometric_count: 3, reverification_count: 2 })
    expect(pageCounts(html)).toEqual(api)
    expect(html).toContain('<h1>Usage</h1>')
    expect(html).toContain('November 2026')
    expect(html).toContain('your plan has no monthly limit')
  })

  test('one bar and one table row per day so far, each the API’s count for that day', async () => {
    const html = await usagePage(owner)
    const bars = pageBars(html)
    const table = pageTable(html)
    const days = Array.from({ length: 6 }, (_, i) => `2026-11-0${i + 1}`)
    expect([...bars.keys()]).toEqual(days)
    expect([...table.keys()]).toEqual(days)
    for (const day of days) {
      const api = await apiUsage(shop, `start_date=${day}&end_date=${day}`)
      expect({ day, bar: bars.get(day) }).toEqual({ day, bar: api.total_verifications })
      expect({ day, row: table.get(day) }).toEqual({ day, row: COUNT_KEYS.map((key) => api[key]) })
    }
    expect(bars.get('2026-11-03')).toBe(3)
    expect(bars.get('2026-11-06')).toBe(2)
    // Accessible and within the CSP: an image with a title and description, no script, no style attribute.
    expect(html).toMatch(/<svg[^>]*role="img"[^>]*aria-labelledby="usage-chart-title usage-chart-desc"/)
    expect(html).toContain('<title id="usage-chart-title">Verifications per day</title>')
    expect(html).toContain('<details class="table-toggle"><summary>Show the numbers per day as a table</summary>')
    expect(html).not.toMatch(/\sstyle=/)
    expect(html).not.toContain('<script')
  })

  test('another client’s counts never appear', async () => {
    const shopTable = pageTable(await usagePage(owner))
    expect(shopTable.get('2026-11-04')).toEqual([0, 0, 0, 0])
    const rivalHtml = await usagePage(rivalUser)
    expect(pageCounts(rivalHtml)).toEqual(await apiUsage(rival, 'period=month'))
    expect(pageCounts(rivalHtml).total_verifications).toBe(7)
    expect(pageTable(rivalHtml).get('2026-11-03')).toEqual([0, 0, 0, 0])
    expect(pageBars(rivalHtml).get('2026-11-04')).toBe(7)
  })

  test('a plan limit shows used / limit and a percentage, and says when it is reached', async () => {
    const html = await usagePage(cappedUser)
    expect(pageCounts(html).total_verifications).toBe(3)
    expect(html).toContain('3 of 3 verifications used')
    expect(html).toContain('100% of the monthly limit')
    expect(html).toContain('The limit is reached')
    // The shop's API agrees with the page that the limit is spent: a fourth completion is refused.
    await expect(ctx.issueCode({ clientId: capped.id })).rejects.toMatchObject({ code: 'payment_required' })
  })

  test('below the limit, the percentage and no note', async () => {
    ctx.clock.set('2026-12-02T08:00:00.000Z')
    try {
      await ctx.issueCode({ clientId: capped.id })
      const html = await usagePage(await signedIn(ctx, 'owner@capped.example'))
      expect(html).toContain('1 of 3 verifications used')
      expect(html).toContain('33% of the monthly limit')
      expect(html).not.toContain('The limit is reached')
      expect([...pageBars(html).keys()]).toEqual(['2026-12-01', '2026-12-02'])
    } finally {
      ctx.clock.set('2026-11-06T12:00:00.000Z')
    }
  })

  test('a y-axis from 0 past the busiest day, with its grid lines; one slot per day of the month (issue 24)', async () => {
    const html = await usagePage(owner)
    // The busiest day has 3: ticks 0, 1, 2, 3, each a labelled line across the plot.
    expect([...html.matchAll(/<g class="y-tick" data-tick="(\d+)">/g)].map((tick) => tick[1])).toEqual(['0', '1', '2', '3'])
    expect([...html.matchAll(/text-anchor="end">([^<]+)<\/text>/g)].map((label) => label[1])).toEqual(['0', '1', '2', '3'])
    // The x-axis names days 1, 5, … 30 of November, though only six have bars so far.
    expect([...html.matchAll(/text-anchor="middle">(\d+)<\/text>/g)].map((label) => label[1])).toEqual(['1', '5', '10', '15', '20', '25', '30'])
    // The top tick is the busiest bar's height: the bar of 3 reaches the line of 3.
    const topLine = /data-tick="3"><line class="grid" x1="[\d.]+" y1="([\d.]+)"/.exec(html)![1]
    expect(/<rect class="bar" x="[\d.]+" y="([\d.]+)"[^>]*data-day="2026-11-03"/.exec(html)![1]).toBe(topLine)
    expect(html).not.toContain('data-empty-chart')
  })

  test('a month without verifications says so instead of drawing an empty chart', async () => {
    ctx.clock.set('2027-01-02T08:00:00.000Z')
    try {
      const html = await usagePage(await signedIn(ctx, 'owner@shop.example'))
      expect(html).toContain('<p class="empty-state" data-empty-chart>No verifications yet this month.')
      expect(html).not.toContain('<svg')
      expect(html).toContain('0 verifications used; your plan has no monthly limit.')
      // The numbers per day are still there, as a table of zeros.
      expect(pageTable(html).get('2027-01-02')).toEqual([0, 0, 0, 0])
    } finally {
      ctx.clock.set('2026-11-06T12:00:00.000Z')
    }
  })

  test('numbers are written as the page’s language writes them: 10,000 in English, 10.000 in German (issue 24)', async () => {
    await updateClient(ctx.deps.db, capped.id, { verificationLimit: 10_000 })
    try {
      const english = await usagePage(cappedUser)
      expect(english).toContain('3 of 10,000 verifications used')
      expect(english).toContain('0% of the monthly limit')
      const german = await usagePage(cappedUser, { 'accept-language': 'de' })
      expect(german).toContain('3 von 10.000 Verifizierungen verbraucht')
      expect(await usagePage(cappedUser, { 'accept-language': 'fr' })).toContain('3 sur 10\u202f000')
    } finally {
      await updateClient(ctx.deps.db, capped.id, { verificationLimit: 3 })
    }
    // The chart's axis and bars too, for a busy day of 12,345 (drawn alone: no test seeds that many).
    const busy = { day: '2026-11-03', usage: { total_verifications: 12_345, age_only_count: 12_345, biometric_count: 0, reverification_count: 0 } }
    const chart = await UsageChart({ view: { lang: 'de', explicit: false }, month: 'November 2026', days: [busy], daysInMonth: 30 })
    expect([...chart.matchAll(/text-anchor="end">([^<]+)<\/text>/g)].map((label) => label[1])).toEqual(['0', '5.000', '10.000', '15.000'])
    expect(chart).toContain('<title>3. Nov. 2026: 12.345</title>')
    expect(chart).toContain('höchstens 12.345 an einem Tag')
  })

  test('one verification is one, not "1 verifications" (issue 24)', async () => {
    ctx.clock.set('2026-12-02T09:00:00.000Z')
    try {
      await ctx.issueCode({ clientId: rival.id })
      expect(await usagePage(await signedIn(ctx, 'owner@rival.example'))).toContain('1 verification used; your plan has no monthly limit.')
    } finally {
      ctx.clock.set('2026-11-06T12:00:00.000Z')
    }
  })

  test('in German by Accept-Language, and the navigation links to it', async () => {
    const html = await usagePage(owner, { 'accept-language': 'de-DE,de;q=0.9' })
    expect(html).toContain('<html lang="de">')
    expect(html).toContain('<h1>Nutzung</h1>')
    expect(html).toContain('Dieser Monat')
    expect(html).toContain('November 2026')
    expect(html).toContain('kein Monatslimit')
    expect(html).toContain('<a href="/dashboard/usage" aria-current="page">Nutzung</a>')
    const capped = await usagePage(cappedUser, { 'accept-language': 'de' })
    expect(capped).toContain('3 von 3 Verifizierungen verbraucht')
    expect(capped).toContain('Das Limit ist erreicht')
  })
})
