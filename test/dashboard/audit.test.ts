import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { auditCsvStream, csvField, csvLine, CSV_COLUMNS } from '../../src/dashboard/audit-csv.ts'
import { auditLogs, type MethodClass } from '../../src/db/schema.ts'
import { silentLogger } from '../../src/lib/log.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { createUser, olderLink, signedIn, transactionIds, type DashboardBrowser } from './dashboard.ts'

/**
 * The audit log pages (issue 13, part 2): search, filters, keyset pagination, the detail view, the CSV, and
 * that a user sees only their own client's rows, whatever id they type or guess.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
let rival: Awaited<ReturnType<TestContext['createClient']>>
let owner: DashboardBrowser
let rivalUser: DashboardBrowser
/** The shop's rows, newest first, as the list must show them: (created_at desc, transaction_id desc). */
let expected: { id: string; createdAt: Date; methodClass: MethodClass; reverification: boolean }[] = []
let rivalIds: string[] = []

const START = new Date('2026-11-01T00:00:00.000Z')

beforeAll(async () => {
  ctx = await createTestContext()
  shop = await ctx.createClient({ name: 'Shop' })
  rival = await ctx.createClient({ name: 'Rival' })
  // 125 rows over five days, several in the same millisecond (so pages split ties), mixed classes and levels.
  for (let i = 0; i < 125; i++) {
    ctx.clock.set(new Date(START.getTime() + Math.floor(i / 4) * 3 * 60 * 60_000))
    const methodClass: MethodClass = i % 3 === 0 ? 'biometric' : 'age_only'
    const reverification = i % 5 === 0
    const { transactionId } = await ctx.issueCode({ clientId: shop.id, methodClass, reverification, method: 'sandbox' })
    expected.push({ id: transactionId, createdAt: ctx.clock.now(), methodClass, reverification })
  }
  for (let i = 0; i < 3; i++) rivalIds.push((await ctx.issueCode({ clientId: rival.id, method: 'sandbox' })).transactionId)
  expected.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
  ctx.clock.set('2026-11-22T12:00:00.000Z')
  await createUser(ctx, shop.id, 'owner@shop.example')
  await createUser(ctx, rival.id, 'owner@rival.example')
  owner = await signedIn(ctx, 'owner@shop.example')
  rivalUser = await signedIn(ctx, 'owner@rival.example')
}, 120_000)
afterAll(() => ctx.close())

/** Every id the list shows for a query, following its "older" links to the end. */
async function walk(browser: DashboardBrowser, query: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = []
  let next: string | undefined = `/dashboard/audit${query}`
  let pages = 0
  while (next) {
    const response: Response = await browser.request(next)
    expect(response.status).toBe(200)
    const html: string = await response.text()
    ids.push(...transactionIds(html))
    next = olderLink(html)
    pages++
  }
  return { ids, pages }
}

describe('the audit list', () => {
  test('newest first, 50 a page; following "older" visits every row once, ties in one millisecond included', async () => {
    const { ids, pages } = await walk(owner, '')
    expect(pages).toBe(3)
    expect(ids).toEqual(expected.map((row) => row.id))
  })

  test('search by transaction_id is exact, whatever the case or surrounding spaces', async () => {
    const target = expected[77]!.id
    const html = await (await owner.request(`/dashboard/audit?transaction_id=${encodeURIComponent(`  ${target.toUpperCase()} `)}`)).text()
    expect(transactionIds(html)).toEqual([target])
    const partial = await (await owner.request(`/dashboard/audit?transaction_id=${target.slice(0, 8)}`)).text()
    expect(transactionIds(partial)).toEqual([])
    expect(partial).toContain('No verification matches.')
  })

  test('filters by UTC date range (the end date included), method class and level, and pages within the filter', async () => {
    const inRange = (row: (typeof expected)[number]) => row.createdAt >= new Date('2026-11-02T00:00:00Z') && row.createdAt < new Date('2026-11-04T00:00:00Z')
    expect((await walk(owner, '?from=2026-11-02&to=2026-11-03')).ids).toEqual(expected.filter(inRange).map((row) => row.id))
    expect((await walk(owner, '?method_class=biometric')).ids).toEqual(expected.filter((row) => row.methodClass === 'biometric').map((row) => row.id))
    expect((await walk(owner, '?level=re_verification&method_class=age_only')).ids).toEqual(
      expected.filter((row) => row.reverification && row.methodClass === 'age_only').map((row) => row.id),
    )
    const firstLevel = await walk(owner, '?level=first_verification&from=2026-11-01')
    expect(firstLevel.ids).toEqual(expected.filter((row) => !row.reverification).map((row) => row.id))
    // 100 rows: two full pages, and no "older" link to an empty third.
    expect(firstLevel.ids).toHaveLength(100)
    expect(firstLevel.pages).toBe(2)
    // An empty field is "any", as the search form sends it.
    expect((await walk(owner, '?transaction_id=&from=&to=&method_class=&level=')).ids).toHaveLength(125)
  })

  test('times read in the page’s language with UTC said, and a date filter is restated in that format (issue 24)', async () => {
    // 2026-11-01T00:00Z, the oldest rows, as CLDR writes that instant in English and in German.
    const english = await (await owner.request('/dashboard/audit?from=2026-11-01&to=2026-11-01&level=first_verification')).text()
    expect(english).toContain('<time datetime="2026-11-01T00:00:00.000Z">Nov 1, 2026, 00:00:00 UTC</time>')
    expect(english).toContain('Showing verifications of Nov 1, 2026 (UTC).')
    const german = await (await owner.request('/dashboard/audit?from=2026-11-01&to=2026-11-01&level=first_verification&lang=de')).text()
    expect(german).toContain('>1. Nov. 2026, 00:00:00 UTC</time>')
    expect(german).not.toContain('2026-11-01 00:00:00')
    // A span, or one side of it: the browser's date field shows its own format, the page says it in its language.
    expect(await (await owner.request('/dashboard/audit?from=2026-11-02&to=2026-11-03')).text()).toContain('Showing verifications of Nov 2 – 3, 2026 (UTC).')
    expect(await (await owner.request('/dashboard/audit?from=2026-11-02&to=2026-11-03&lang=de')).text()).toContain('Angezeigt werden Verifizierungen vom 2.–3. Nov. 2026 (UTC).')
    expect(await (await owner.request('/dashboard/audit?from=2026-11-04')).text()).toContain('Showing verifications from Nov 4, 2026 on (UTC).')
    expect(await (await owner.request('/dashboard/audit?to=2026-11-04')).text()).toContain('Showing verifications up to and including Nov 4, 2026 (UTC).')
    expect(await (await owner.request('/dashboard/audit')).text()).not.toContain('Showing verifications')
  })

  test('the date fields are described by the rule they follow, and every cell is labelled by its column for the phone’s list layout', async () => {
    const html = await (await owner.request('/dashboard/audit')).text()
    expect(html).toContain('<input id="from" name="from" type="date" value="" aria-describedby="dates-help"/>')
    expect(html).toContain('<p id="dates-help" class="small">Whole days in UTC; both days are included.</p>')
    const firstRow = /<tbody><tr>([\s\S]*?)<\/tr>/.exec(html)![1]!
    const labels = [...firstRow.matchAll(/<td[^>]*data-label="([^"]*)"/g)].map((match) => match[1])
    const headers = [...html.matchAll(/<th scope="col">([^<]*)<\/th>/g)].map((match) => match[1])
    expect(labels).toEqual(headers)
    expect(labels).toHaveLength(7)
  })

  test('bad query values are a 400 page, never a 500', async () => {
    for (const query of [
      '?from=2026-02-30',
      '?from=2026-11-05&to=2026-11-01',
      '?from=yesterday',
      '?method_class=face',
      '?level=first',
      '?before=not-a-cursor',
      '?before=2026-13-45T00:00:00.000Z_00000000-0000-4000-8000-000000000000',
      '?before=2026-11-01T00:00:00.000Z_zzzzzzzz-0000-4000-8000-000000000000',
      '?method_class=age_only&method_class=biometric',
      `?transaction_id=${'a'.repeat(65)}`,
      '?from=%',
    ]) {
      const response = await owner.request(`/dashboard/audit${query}`)
      expect({ query, status: response.status }).toEqual({ query, status: 400 })
      expect(await response.text()).toContain('<code>invalid_request</code>')
    }
  })
})

describe('one verification', () => {
  test('shows every column we keep, in words, and what we do not keep', async () => {
    const [row] = await ctx.deps.db.select().from(auditLogs).where(eq(auditLogs.transactionId, expected[3]!.id))
    await ctx.deps.db.update(auditLogs).set({ revokedAt: new Date('2026-11-20T10:11:12.000Z'), ageBuffer: 8, method: 'face' }).where(eq(auditLogs.transactionId, row!.transactionId))
    const response = await owner.request(`/dashboard/audit/${row!.transactionId}`)
    expect(response.status).toBe(200)
    const html = await response.text()
    for (const text of [
      row!.transactionId,
      row!.subject,
      shop.id,
      `<time datetime="${row!.createdAt.toISOString()}">`,
      '18 or older',
      'face',
      '8 years above the threshold',
      // One date format in each language, UTC said (issue 24): not the ISO string the list used to show.
      '<time datetime="2026-11-20T10:11:12.000Z">Nov 20, 2026, 10:11:12 UTC</time>',
      'no longer validate',
      'No picture or video of a face',
      'No age estimate',
      'No credential',
      'No document data',
    ]) {
      expect(html).toContain(text)
    }
    const german = await (await owner.request(`/dashboard/audit/${row!.transactionId}?lang=de`)).text()
    expect(german).toContain('Was wir nicht speichern')
    expect(german).toContain('20. Nov. 2026, 10:11:12 UTC')
  })

  test('an unknown id, a malformed one and another client\'s are the same 404', async () => {
    const answers = []
    for (const id of ['00000000-0000-4000-8000-000000000000', rivalIds[0]!, 'not-a-uuid', '%00', rivalIds[0]!.toUpperCase()]) {
      const response = await owner.request(`/dashboard/audit/${id}`)
      answers.push({ status: response.status, body: await response.text() })
    }
    expect(answers[0]!.status).toBe(404)
    for (const answer of answers) expect(answer).toEqual(answers[0]!)
    expect(answers.some((answer) => answer.body.includes(rivalIds[0]!))).toBe(false)
    // The rival's own user sees it.
    expect((await rivalUser.request(`/dashboard/audit/${rivalIds[0]}`)).status).toBe(200)
  })
})

describe('no access to another client\'s rows', () => {
  test('the list, the search and the CSV of one client never show another\'s rows', async () => {
    const { ids } = await walk(owner, '')
    expect(ids.filter((id) => rivalIds.includes(id))).toEqual([])
    for (const id of rivalIds) {
      const search = await (await owner.request(`/dashboard/audit?transaction_id=${id}`)).text()
      expect(transactionIds(search)).toEqual([])
      const csv = await (await owner.request(`/dashboard/audit.csv?transaction_id=${id}`)).text()
      expect(csv).toBe(csvLine([...CSV_COLUMNS]))
    }
    const rivalList = await walk(rivalUser, '')
    expect(rivalList.ids.sort()).toEqual([...rivalIds].sort())
    const rivalCsv = await (await rivalUser.request('/dashboard/audit.csv')).text()
    expect(rivalCsv.trim().split('\r\n')).toHaveLength(1 + rivalIds.length)
    expect(rivalCsv).not.toContain(shop.id)
  })

  test('no query parameter names a client: a client_id in the URL is ignored', async () => {
    const html = await (await owner.request(`/dashboard/audit?client_id=${rival.id}`)).text()
    expect(transactionIds(html).some((id) => rivalIds.includes(id))).toBe(false)
  })
})

describe('the CSV export', () => {
  test('is an attachment with a header row and the filtered rows, newest first', async () => {
    const response = await owner.request('/dashboard/audit.csv?method_class=biometric&from=2026-11-02')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-[A-Za-z0-9_-]+-2026-11-22\.csv"$/)
    const lines = (await response.text()).split('\r\n')
    expect(lines.at(-1)).toBe('')
    expect(lines[0]).toBe('transaction_id,created_at,client_id,sub,method_class,verification_level,age_over,method,age_buffer,revoked_at')
    const want = expected.filter((row) => row.methodClass === 'biometric' && row.createdAt >= new Date('2026-11-02T00:00:00Z'))
    expect(lines.slice(1, -1).map((line) => line.split(',')[0])).toEqual(want.map((row) => row.id))
    const first = lines[1]!.split(',')
    expect(first[1]).toBe(want[0]!.createdAt.toISOString())
    expect(first[2]).toBe(shop.id)
    expect(first[4]).toBe('biometric')
    expect(first[6]).toBe('18')
  })

  test('fields are escaped per RFC 4180, and a value a spreadsheet would run is defused', async () => {
    expect(csvField('plain')).toBe('plain')
    expect(csvField(null)).toBe('')
    expect(csvField(18)).toBe('18')
    expect(csvField('a,b')).toBe('"a,b"')
    expect(csvField('say "hi"')).toBe('"say ""hi"""')
    expect(csvField('two\r\nlines')).toBe('"two\r\nlines"')
    expect(csvField('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"')
    expect(csvField('@cmd')).toBe("'@cmd")
    const { transactionId } = await ctx.issueCode({ clientId: shop.id, method: 'odd,"method"\nname' })
    const csv = await (await owner.request(`/dashboard/audit.csv?transaction_id=${transactionId}`)).text()
    expect(csv).toContain(`,"odd,""method""\nname",`)
    expect(csv.startsWith('transaction_id,')).toBe(true)
  })

  test('is streamed page by page: a small page size gives the same rows across page boundaries', async () => {
    const read = async (pageRows: number) => new Response(auditCsvStream(ctx.deps.db, shop.id, {}, silentLogger, pageRows)).text()
    const whole = await read(1000)
    expect(whole.split('\r\n')).toHaveLength(1 + expected.length + 1 + 1)
    expect(await read(7)).toBe(whole)
    expect(await read(1)).toBe(whole)
  })

  test('signed out, the CSV is not served', async () => {
    const response = await ctx.request('/dashboard/audit.csv')
    expect(response.status).toBe(303)
    expect(response.headers.get('content-type') ?? '').not.toContain('text/csv')
  })
})
