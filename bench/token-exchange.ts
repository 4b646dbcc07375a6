/**
 * Benchmark of the back channel: issuing codes, exchanging them, validating tokens.
 *
 *   bun bench/token-exchange.ts                                                            # PGlite only
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/token-exchange.ts   # PGlite, then Postgres
 *   bun bench/token-exchange.ts --postgres postgres://postgres@127.0.0.1:5432/postgres     # same
 *
 * Each database gets a fresh, migrated store (on Postgres a throwaway database, dropped at the end) and
 * an in-process app driven through `app.handle`, so the numbers include routing, validation and JSON but
 * no sockets. Every request is checked for its expected status; a failure aborts the run.
 *
 * Clock: the services run on the real `systemClock`, not the tests' frozen one. A frozen clock would
 * work (nothing would ever expire), but it would make every token carry the same `iat` and skip the
 * expiry arithmetic against a moving "now"; with the real clock the code path is production's. Codes
 * live 60 s, so each phase issues its own codes immediately before it and uses them within seconds.
 */
import { jwtVerify } from 'jose'
import { createApp } from '../src/app.tsx'
import { startServices } from '../src/boot.ts'
import { ALGORITHM } from '../src/keys/signing-key.ts'
import { systemClock } from '../src/lib/clock.ts'
import { silentLogger } from '../src/lib/log.ts'
import { createClient } from '../src/clients/registry.ts'
import { issueCode } from '../src/oauth/issue-code.ts'
import { basic, freshDatabaseUrl, PUBLIC_URL, REDIRECT_URI, testConfig } from '../test/helpers.ts'

const WARMUP = 50
const N_ISSUE = 500
const N_EXCHANGE = 500
const N_VALIDATE = 1000
const N_CONCURRENT = 500
const CONCURRENCY = 16

type Result = { phase: string; n: number; concurrency: number; wallMs: number; latencies: number[]; rss: number }

// Peak RSS: sampled on a timer (the event loop turns between queries) and at the end of every phase.
let peakRss = 0
const sampleRss = () => void (peakRss = Math.max(peakRss, process.memoryUsage().rss))
const rssTimer = setInterval(sampleRss, 5)

/** Runs `op(0..n-1)` with at most `concurrency` in flight; concurrency 1 is a plain sequential loop. */
async function pool(n: number, concurrency: number, op: (i: number) => Promise<unknown>) {
  const latencies: number[] = []
  let next = 0
  const worker = async () => {
    while (next < n) {
      const i = next++
      const start = performance.now()
      await op(i)
      latencies.push(performance.now() - start)
    }
  }
  const start = performance.now()
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker))
  return { wallMs: performance.now() - start, latencies }
}

/** Warm-up of WARMUP ops (untimed), then `n` timed ops; `op` gets indices 0..WARMUP+n-1. */
async function measure(phase: string, n: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<Result> {
  await pool(WARMUP, concurrency, op)
  const { wallMs, latencies } = await pool(n, concurrency, (i) => op(WARMUP + i))
  const rss = process.memoryUsage().rss
  peakRss = Math.max(peakRss, rss)
  return { phase, n, concurrency, wallMs, latencies, rss }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1)

function printTable(title: string, results: Result[]) {
  const header = ['phase', 'n', 'conc', 'wall ms', 'ops/s', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'rss MiB']
  const rows = results.map((r) => {
    const sorted = [...r.latencies].sort((a, b) => a - b)
    const ms = (v: number) => v.toFixed(3)
    return [
      r.phase, String(r.n), String(r.concurrency), r.wallMs.toFixed(1), ((r.n / r.wallMs) * 1000).toFixed(0),
      ms(percentile(sorted, 50)), ms(percentile(sorted, 95)), ms(percentile(sorted, 99)), ms(sorted.at(-1) ?? NaN), mib(r.rss),
    ]
  })
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)))
  const line = (cells: string[]) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')
  console.log(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`)
  for (const row of rows) console.log(line(row))
}

async function expectStatus(response: Response, status: number): Promise<Response> {
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${await response.text()}`)
  return response
}

async function bench(label: string, databaseUrl: string) {
  const database = databaseUrl === 'memory:' ? { url: 'memory:', drop: async () => {} } : await freshDatabaseUrl()
  const config = testConfig({ DATABASE_URL: database.url })
  const services = await startServices(config, { clock: systemClock, log: silentLogger })
  try {
    const { deps } = services
    const app = createApp(deps)
    const { client, secret } = await createClient(deps, { name: 'Bench shop', redirectUris: [REDIRECT_URI] })
    const authorization = basic(client.id, secret)
    const startRss = process.memoryUsage().rss
    const issue = () => issueCode(deps, { clientId: client.id, redirectUri: REDIRECT_URI, state: 'st', ageOver: 18, methodClass: 'age_only' })
    const tokens: string[] = []
    const exchange = async (code: string) => {
      const body = JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 'st' })
      const init = { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body }
      const response = await expectStatus(await app.handle(new Request(`${PUBLIC_URL}/api/oauth/token`, init)), 200)
      tokens.push(((await response.json()) as { access_token: string }).access_token)
    }
    const results: Result[] = []

    // 1. issueCode alone: one transaction writing the audit row, the usage counter and the code.
    results.push(await measure('issueCode', N_ISSUE, 1, issue))

    // 2. Sequential exchanges; the codes are issued (untimed) right before.
    let codes = (await issueSequential(issue, WARMUP + N_EXCHANGE)).map((c) => c.code)
    results.push(await measure('exchange (POST /api/oauth/token)', N_EXCHANGE, 1, (i) => exchange(codes[i]!)))

    // 3. Validation through the app: signature, claims, and the revocation lookup in audit_logs.
    const token = (i: number) => tokens[i % tokens.length]!
    results.push(await measure('validate (GET /api/verify/token)', N_VALIDATE, 1, async (i) => {
      const response = await app.handle(new Request(`${PUBLIC_URL}/api/verify/token/${token(i)}`))
      await (await expectStatus(response, 200)).json()
    }))

    // 4. Baseline: the signature and claim checks alone with jose, no HTTP layer and no database.
    const { publicKey } = await deps.keys.signing.published()
    results.push(await measure('jose jwtVerify (local baseline)', N_VALIDATE, 1, (i) =>
      jwtVerify(token(i), publicKey, { algorithms: [ALGORITHM], issuer: config.issuerUrl, requiredClaims: ['iat', 'exp', 'sub', 'aud'] }),
    ))

    // 5. Concurrent exchanges of distinct codes, CONCURRENCY in flight.
    codes = (await issueSequential(issue, WARMUP + N_CONCURRENT)).map((c) => c.code)
    results.push(await measure(`exchange x${CONCURRENCY} concurrent`, N_CONCURRENT, CONCURRENCY, (i) => exchange(codes[i]!)))

    printTable(`== ${label} ==`, results)
    console.log(`RSS after start-up (migrated, key loaded, before any phase): ${mib(startRss)} MiB`)
  } finally {
    await services.close()
    await database.drop()
  }
  sampleRss()
  // Collect what the closed database left behind, so the next database's RSS column starts clean-ish.
  Bun.gc(true)
  console.log(`peak RSS so far: ${mib(peakRss)} MiB; after close + full GC: ${mib(process.memoryUsage().rss)} MiB`)
}

async function issueSequential<T>(op: () => Promise<T>, count: number): Promise<T[]> {
  const out: T[] = []
  for (let i = 0; i < count; i++) out.push(await op())
  return out
}

function postgresUrl(): string | undefined {
  const flag = process.argv.indexOf('--postgres')
  if (flag !== -1) {
    const url = process.argv[flag + 1]
    if (!url) throw new Error('--postgres needs a URL')
    return url
  }
  return process.env.DATABASE_URL || undefined
}

const serverUrl = postgresUrl()
console.log(`bun ${Bun.version}, ${process.platform}/${process.arch}, warm-up ${WARMUP} ops per phase`)
await bench('PGlite (in memory)', 'memory:')
if (serverUrl) {
  // freshDatabaseUrl() creates its throwaway database on the server named by DATABASE_URL.
  process.env.DATABASE_URL = serverUrl
  await bench(`Postgres (${new URL(serverUrl).host})`, serverUrl)
}
clearInterval(rssTimer)
sampleRss()
console.log(`\npeak RSS (whole run): ${mib(peakRss)} MiB`)
