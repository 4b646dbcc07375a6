/**
 * CPU per token exchange, in process (issue 34): the main thread's (JavaScript, the driver's socket writes)
 * and the whole process's (with Bun's crypto threads, where the RS256 signature runs), read from /proc, on a
 * fresh Postgres database. No HTTP and no load generator, so two trees can be compared on a busy machine:
 * run it in each, alternating.
 *
 *   bun bench/exchange-cpu.ts                        # 3,000 exchanges a round, 16 at a time, 3 rounds after a warm-up
 *   bun bench/exchange-cpu.ts --n 6000 --rounds 5 --database postgres://postgres@127.0.0.1:5432/postgres
 *
 * The codes are written straight into the database before each round (untimed), so a round is exchanges only.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { createApp } from '../src/app.tsx'
import { startServices } from '../src/boot.ts'
import { createClient } from '../src/clients/registry.ts'
import { systemClock } from '../src/lib/clock.ts'
import { silentLogger } from '../src/lib/log.ts'
import { basic, PUBLIC_URL, REDIRECT_URI, testConfig } from '../test/helpers.ts'
import { freshBenchDatabase, seedCodes } from './seed.ts'

const { values } = parseArgs({ options: { n: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '3' }, database: { type: 'string' } } })
const n = Number(values.n)
const adminUrl = values.database ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const CONCURRENCY = 16

/** CPU microseconds the main thread has used (its /proc task has the process's id). */
function mainThreadMicros(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

const database = await freshBenchDatabase(adminUrl, 'ofage_exchange_cpu')
const services = await startServices(testConfig({ DATABASE_URL: database.url }), { clock: systemClock, log: silentLogger })
try {
  const app = createApp(services.deps)
  const { client, secret } = await createClient(services.deps, { name: 'Bench shop', redirectUris: [REDIRECT_URI] })
  const headers = { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.id, secret) }
  const seeder = postgres(database.url, { max: 1, onnotice: () => {} })
  // Round 0 warms the JIT and the connections' prepared statements; it is not printed.
  for (let round = 0; round <= Number(values.rounds); round++) {
    const codes = await seedCodes(seeder, client.id, REDIRECT_URI, n, 30)
    Bun.gc(true)
    const main = mainThreadMicros()
    const cpu = process.cpuUsage()
    const started = performance.now()
    let next = 0
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < n) {
          const body = new URLSearchParams({ grant_type: 'authorization_code', code: codes[next++]!, redirect_uri: REDIRECT_URI, state: 'bench' })
          const response = await app.handle(new Request(`${PUBLIC_URL}/api/oauth/token`, { method: 'POST', headers, body }))
          if (response.status !== 200) throw new Error(`expected 200, got ${response.status}: ${await response.text()}`)
          await response.json()
        }
      }),
    )
    const seconds = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    if (round === 0) continue
    const perExchange = (micros: number) => `${(micros / n).toFixed(0)} µs`
    console.log(`round ${round}: ${(n / seconds).toFixed(0)} exchanges/s; CPU per exchange: main thread ${perExchange(mainThreadMicros() - main)}, process ${perExchange(used.user + used.system)}`)
  }
  await seeder.end()
} finally {
  await services.close()
  await database.drop()
}
