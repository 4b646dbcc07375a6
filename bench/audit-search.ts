/**
 * `bun run bench:audit`: the dashboard's audit search and pagination on a client with a million audit rows
 * (issue 13), timed as a benchmark, never as a test.
 *
 *   bun run bench:audit                      # 1,000,000 rows for the client and as many for another, 30 runs a case
 *   bun run bench:audit --rows 100000 --runs 10     # at least 20,000 rows: a page per day
 *
 * A fresh database on the Postgres server of `--database` (default: DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres; dropped at the end), migrated by the service, seeded with
 * SQL (bench/seed.ts: a year of rows, a third biometric, a fifth re-verifications). A second client with as
 * many rows shares the table and its index, all of them age_only, so "biometric" matches none of its rows.
 * Each case is timed twice: the query alone (the dashboard's `searchAuditLogs`), and the whole page as a
 * signed-in browser gets it from the app's handler (session, query, rendering; no network). The CSV case
 * streams one month of rows through the same handler.
 */
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { createApp, createHandler } from '../src/app.tsx'
import { startServices } from '../src/boot.ts'
import { loadConfig } from '../src/config.ts'
import { auditPageQuery, encodeCursor, searchAuditLogs, type AuditCursor, type AuditFilter } from '../src/dashboard/audit-search.ts'
import { createDashboardSession } from '../src/dashboard/sessions.ts'
import { createDashboardUser } from '../src/dashboard/users.ts'
import { silentLogger } from '../src/lib/log.ts'
import { createClient } from '../src/clients/registry.ts'
import { freshBenchDatabase, seedAuditRows } from './seed.ts'

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '30' },
    database: { type: 'string' },
  },
})
const rows = Number(values.rows)
// A year of rows: a day must hold a full page (50) for the date cases to measure a page.
if (!Number.isInteger(rows) || rows < 20_000) throw new Error('--rows must be a whole number of at least 20000 (a full page of rows per day)')
const runs = Number(values.runs)
const adminUrl = values.database ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const APP_URL = 'http://localhost:3000'
const PAGE_ROWS = 50
const DAY_MS = 86_400_000

function log(line: string) {
  console.error(`[bench:audit] ${line}`)
}

type Timing = { p50: number; p95: number; max: number }

function summarise(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
  return { p50: at(0.5), p95: at(0.95), max: sorted.at(-1)! }
}

async function time(run: () => Promise<unknown>): Promise<Timing> {
  await run() // warm: plan cache, buffers
  const samples: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await run()
    samples.push(performance.now() - started)
  }
  return summarise(samples)
}

/** The query string of the audit page for a filter and cursor, as the page's own form and links write it. */
function auditQuery(filter: AuditFilter, before?: AuditCursor): string {
  const params = new URLSearchParams()
  if (filter.transactionId) params.set('transaction_id', filter.transactionId)
  if (filter.start) params.set('from', filter.start.toISOString().slice(0, 10))
  if (filter.end) params.set('to', new Date(filter.end.getTime() - DAY_MS).toISOString().slice(0, 10))
  if (filter.methodClass) params.set('method_class', filter.methodClass)
  if (filter.level) params.set('level', filter.level)
  if (before) params.set('before', encodeCursor(before))
  return params.size > 0 ? `?${params}` : ''
}

async function main() {
  const database = await freshBenchDatabase(adminUrl, 'ofage_bench_audit')
  const sql = postgres(database.url, { max: 2, onnotice: () => {} })
  const services = await startServices(loadConfig({ DATABASE_URL: database.url, APP_URL, PUBLIC_URL: APP_URL, OFAGE_DEMO: '0', FACE_CHECK: '0' }), { log: silentLogger })
  try {
    const { deps } = services
    const shop = (await createClient(deps, { name: 'Bench shop', redirectUris: ['https://shop.example/cb'] })).client
    const other = (await createClient(deps, { name: 'Other shop', redirectUris: ['https://other.example/cb'] })).client
    log(`seeding ${rows.toLocaleString('en')} audit rows for each of two clients`)
    const seedStarted = performance.now()
    await seedAuditRows(sql, shop.id, rows)
    await seedAuditRows(sql, other.id, rows)
    await sql`update audit_logs set method_class = 'age_only', verification_level = 'first_verification' where client_id = ${other.id}`
    await sql`vacuum analyze audit_logs`
    log(`seeded in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s`)

    const { user } = await createDashboardUser(deps, { clientId: shop.id, email: 'bench@shop.example' })
    const { user: otherUser } = await createDashboardUser(deps, { clientId: other.id, email: 'bench@other.example' })
    const handle = createHandler(deps, createApp(deps))
    const cookieOf = async (userId: string) => `ofage_dashboard=${(await createDashboardSession(deps, userId)).token}`
    const shopCookie = await cookieOf(user.id)
    const otherCookie = await cookieOf(otherUser.id)
    const get = async (cookie: string, path: string) => {
      const response = await handle(new Request(`${APP_URL}${path}`, { headers: { cookie } }))
      if (response.status !== 200) throw new Error(`${path}: ${response.status}`)
      return response.text()
    }

    // Reference points: the first page's cursor, a cursor half a year back, an id deep in the history.
    const first = await searchAuditLogs(deps.db, shop.id, { filter: {}, limit: PAGE_ROWS })
    const [middle] = await sql<{ created_at: Date; transaction_id: string }[]>`
      select created_at, transaction_id from audit_logs where client_id = ${shop.id}
      order by created_at desc, transaction_id desc offset ${Math.floor(rows / 2)} limit 1`
    const deep: AuditCursor = { createdAt: middle!.created_at, transactionId: middle!.transaction_id }
    const [otherRow] = await sql<{ transaction_id: string }[]>`select transaction_id from audit_logs where client_id = ${other.id} limit 1`
    const day = new Date(Math.floor((Date.now() - 200 * DAY_MS) / DAY_MS) * DAY_MS)

    const cases: { name: string; cookie: string; clientId: string; filter: AuditFilter; before?: AuditCursor; expect: (n: number) => boolean }[] = [
      { name: 'newest page, no filter', cookie: shopCookie, clientId: shop.id, filter: {}, expect: (n) => n === PAGE_ROWS },
      { name: 'second page (cursor)', cookie: shopCookie, clientId: shop.id, filter: {}, before: first.next, expect: (n) => n === PAGE_ROWS },
      { name: `page ${Math.floor(rows / 2 / PAGE_ROWS).toLocaleString('en')} (half a year back)`, cookie: shopCookie, clientId: shop.id, filter: {}, before: deep, expect: (n) => n === PAGE_ROWS },
      { name: 'transaction_id, exact, deep in the history', cookie: shopCookie, clientId: shop.id, filter: { transactionId: deep.transactionId }, expect: (n) => n === 1 },
      { name: "another client's transaction_id (no row)", cookie: shopCookie, clientId: shop.id, filter: { transactionId: otherRow!.transaction_id }, expect: (n) => n === 0 },
      { name: 'one day, 200 days back', cookie: shopCookie, clientId: shop.id, filter: { start: day, end: new Date(day.getTime() + DAY_MS) }, expect: (n) => n === PAGE_ROWS },
      { name: 'biometric re-verifications (1 row in 15)', cookie: shopCookie, clientId: shop.id, filter: { methodClass: 'biometric', level: 're_verification' }, expect: (n) => n === PAGE_ROWS },
      { name: 'biometric, one month, 200 days back', cookie: shopCookie, clientId: shop.id, filter: { methodClass: 'biometric', start: day, end: new Date(day.getTime() + 30 * DAY_MS) }, expect: (n) => n === PAGE_ROWS },
      { name: 'worst case: a filter no row matches, whole history', cookie: otherCookie, clientId: other.id, filter: { methodClass: 'biometric' }, expect: (n) => n === 0 },
      { name: 'worst case, bounded by a month', cookie: otherCookie, clientId: other.id, filter: { methodClass: 'biometric', start: day, end: new Date(day.getTime() + 30 * DAY_MS) }, expect: (n) => n === 0 },
    ]

    const results: { name: string; query: Timing; page: Timing }[] = []
    for (const c of cases) {
      const found = await searchAuditLogs(deps.db, c.clientId, { filter: c.filter, before: c.before, limit: PAGE_ROWS })
      if (!c.expect(found.rows.length)) throw new Error(`${c.name}: ${found.rows.length} rows`)
      const query = await time(() => searchAuditLogs(deps.db, c.clientId, { filter: c.filter, before: c.before, limit: PAGE_ROWS }))
      const page = await time(() => get(c.cookie, `/dashboard/audit${auditQuery(c.filter, c.before)}`))
      results.push({ name: c.name, query, page })
      log(`${c.name}: query p50 ${query.p50.toFixed(1)} ms, p95 ${query.p95.toFixed(1)} ms; page p50 ${page.p50.toFixed(1)} ms, p95 ${page.p95.toFixed(1)} ms`)
    }

    // The CSV of one month (about a twelfth of the rows), streamed through the handler.
    const month = { start: day, end: new Date(day.getTime() + 30 * DAY_MS) }
    const rssBefore = process.memoryUsage().rss
    let peakRss = rssBefore
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20)
    const csvStarted = performance.now()
    const response = await handle(new Request(`${APP_URL}/dashboard/audit.csv${auditQuery(month)}`, { headers: { cookie: shopCookie } }))
    let bytes = 0
    let lines = 0
    for await (const chunk of response.body!) {
      bytes += chunk.byteLength
      for (const byte of chunk) if (byte === 10) lines++
    }
    const csvSeconds = (performance.now() - csvStarted) / 1000
    clearInterval(sampler)
    const csvRows = lines - 1

    // The worst case's statement as the dashboard sends it, explained: how many rows it read.
    const statement = auditPageQuery(deps.db, other.id, { filter: { methodClass: 'biometric' }, limit: PAGE_ROWS }).toSQL()
    const [explained] = await sql.unsafe(`explain (analyze, format json) ${statement.sql}`, statement.params as never[])
    const planText = JSON.stringify(explained)
    const read = [...planText.matchAll(/"Actual Rows":\s*(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0)
    const filtered = [...planText.matchAll(/"Rows Removed by Filter":\s*(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0)
    const indexes = [...new Set([...planText.matchAll(/"Index Name":\s*"([^"]+)"/g)].map((match) => match[1]))].join(', ')

    console.log(`\n### Dashboard audit search, ${rows.toLocaleString('en')} rows per client (2 clients), ${runs} runs a case\n`)
    console.log('| case | query p50 | query p95 | page p50 | page p95 |')
    console.log('|---|---:|---:|---:|---:|')
    for (const r of results) console.log(`| ${r.name} | ${r.query.p50.toFixed(1)} ms | ${r.query.p95.toFixed(1)} ms | ${r.page.p50.toFixed(1)} ms | ${r.page.p95.toFixed(1)} ms |`)
    console.log(
      `\nCSV of one month: ${csvRows.toLocaleString('en')} rows, ${(bytes / 1024 / 1024).toFixed(1)} MiB in ${csvSeconds.toFixed(1)} s (${Math.round(csvRows / csvSeconds).toLocaleString('en')} rows/s); ` +
        `process RSS ${(rssBefore / 1024 / 1024).toFixed(0)} MiB before, at most ${(peakRss / 1024 / 1024).toFixed(0)} MiB while streaming.`,
    )
    console.log(`Worst case plan: ${indexes}; ${read} rows returned by its nodes, ${filtered} read and filtered out.`)
  } finally {
    await services.close()
    await sql.end()
    await database.drop()
  }
}

await main()
