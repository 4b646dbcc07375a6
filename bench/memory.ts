/**
 * Peak resident memory of one server process (issue 34, item 4): idle once ready, then under the bench's
 * loads (token exchange, validation, JWKS, each 10 s at c64 with wrk or autocannon), with the face check off
 * and on, and with Bun's `--smol` (a smaller heap, collected more often) or without.
 *
 *   bun bench/memory.ts                       # the four variants, one after another
 *   bun bench/memory.ts --seconds 5 --variants off,off-smol
 */
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { startServices } from '../src/boot.ts'
import { createClient } from '../src/clients/registry.ts'
import { loadConfig } from '../src/config.ts'
import { silentLogger } from '../src/lib/log.ts'
import { runLoad } from './load.ts'
import { loadAverage, peakRssMiB, startFlags, waitForReady } from './processes.ts'
import { freshBenchDatabase, seedCodes } from './seed.ts'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, variants: { type: 'string', default: 'off,off-smol,on,on-smol' }, database: { type: 'string' } } })
const seconds = Number(values.seconds)
const adminUrl = values.database ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const CALLBACK = 'https://shop.example/callback'
const rows: string[] = []

for (const variant of values.variants.split(',')) {
  const face = variant.startsWith('on')
  const smol = variant.endsWith('smol')
  const database = await freshBenchDatabase(adminUrl, 'ofage_memory')
  const db = postgres(database.url, { max: 2, onnotice: () => {} })
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const baseUrl = `http://127.0.0.1:${port}`
  const env = { ...process.env, DATABASE_URL: database.url, PORT: String(port), PUBLIC_URL: baseUrl, OFAGE_DEMO: '0', FACE_CHECK: face ? '1' : '0', WORKERS: '1', RATE_LIMIT_AUTH_FAILURES: '1000000' }
  let server: ReturnType<typeof Bun.spawn> | undefined
  try {
    const services = await startServices(loadConfig({ ...env, FACE_CHECK: '0' }), { log: silentLogger })
    const { client, secret } = await createClient(services.deps, { name: 'Memory shop', redirectUris: [CALLBACK], sandbox: true })
    await services.close()
    const codes = await seedCodes(db, client.id, CALLBACK, 4_000 * seconds, 30)
    // One code kept back for the token the validation load checks.
    const tokenCode = codes.pop()!
    server = Bun.spawn(['bun', ...startFlags(), ...(smol ? ['--smol'] : []), 'src/index.ts'], { env, stdout: 'ignore', stderr: 'ignore' })
    await waitForReady(baseUrl)
    await Bun.sleep(2000)
    const idle = peakRssMiB(server.pid)
    let peak = idle
    const sampler = setInterval(() => (peak = Math.max(peak, peakRssMiB(server!.pid))), 200)
    const authorization = `Basic ${Buffer.from(`${client.id}:${secret}`).toString('base64')}`
    const exchange = await runLoad({
      url: `${baseUrl}/api/oauth/token`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      bodies: codes.map((code) => JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, state: 'bench' })),
      connections: 64,
      seconds,
    })
    const exchanged = (await (await fetch(`${baseUrl}/api/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify({ grant_type: 'authorization_code', code: tokenCode, redirect_uri: CALLBACK, state: 'bench' }) })).json()) as { access_token: string }
    const afterExchange = peak
    const validation = await runLoad({ url: `${baseUrl}/api/verify/token/${exchanged.access_token}`, connections: 64, seconds })
    const afterValidation = peak
    const jwks = await runLoad({ url: `${baseUrl}/api/.well-known/jwks.json`, connections: 64, seconds })
    clearInterval(sampler)
    console.error(`peak after the exchange ${afterExchange.toFixed(0)}, after validation ${afterValidation.toFixed(0)}, after JWKS ${peak.toFixed(0)} MiB`)
    const row = `| face check ${face ? 'on' : 'off'}${smol ? ', `--smol`' : ''} | ${idle.toFixed(0)} MiB | ${peak.toFixed(0)} MiB | ${exchange.requestsPerSecond.toFixed(0)}/s | ${validation.requestsPerSecond.toFixed(0)}/s | ${jwks.requestsPerSecond.toFixed(0)}/s |`
    console.error(row)
    rows.push(row)
  } finally {
    server?.kill('SIGTERM')
    await server?.exited
    await db.end()
    await database.drop()
  }
}
console.log(`\none server process (WORKERS=1), ${seconds} s a load at c64; load average ${await loadAverage()}\n`)
console.log('| variant | idle, ready | peak under load | exchange | validation | JWKS |')
console.log('|---|---|---|---|---|---|')
for (const row of rows) console.log(row)
