/**
 * What each request pays besides its own work (issue 34, item 3): the app's handler alone, then with the
 * instrument layer (request id, route label, metrics, the API deadline, the log line) a part at a time, in
 * process on the embedded database, for the paths that do least: JWKS, the public key, token validation.
 *
 *   bun bench/overhead.ts                 # 20,000 requests a variant and path, three rounds, medians
 *   bun bench/overhead.ts --requests 50000 --rounds 5
 *
 * Requests are made one after another (no concurrency), so a variant's figure is its CPU time per request
 * on one core; the rounds alternate the variants so that a busy machine slows them alike.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createApp } from '../src/app.tsx'
import { startServices } from '../src/boot.ts'
import { createClient } from '../src/clients/registry.ts'
import { loadConfig } from '../src/config.ts'
import { jsonLogger, silentLogger, type Logger } from '../src/lib/log.ts'
import { instrument } from '../src/ops/instrument.ts'
import { completeForm, openPage } from './page-visit.ts'
import { loadAverage } from './processes.ts'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '3' } } })
const requests = Number(values.requests)
const rounds = Number(values.rounds)
const BASE = 'http://127.0.0.1:3999'
const CALLBACK = 'https://shop.example/callback'

const dataDir = mkdtempSync(join(tmpdir(), 'ofage-overhead-'))
const services = await startServices(loadConfig({ DATABASE_URL: '', DATA_DIR: dataDir, PUBLIC_URL: BASE, OFAGE_DEMO: '0', FACE_CHECK: '0', RATE_LIMIT_SESSIONS: '1000000' }), { log: silentLogger })
try {
  const { deps } = services
  const app = createApp(deps)
  const bare = (request: Request) => app.handle(request)
  const { client, secret } = await createClient(deps, { name: 'Overhead shop', redirectUris: [CALLBACK], sandbox: true })
  const token = await tokenFor(bare, client.id, secret)

  // The log line's cost without the terminal's: formatted as in production, written nowhere.
  const formatted: Logger = jsonLogger(() => {})
  const variants: [string, (request: Request) => Promise<Response>][] = [
    ['the app alone', bare],
    ['+ id, route, metrics, deadline (no log line)', instrument(bare, silentLogger, deps.metrics)],
    ['+ the log line, formatted (written nowhere)', instrument(bare, formatted, deps.metrics)],
  ]
  const paths: [string, () => Request][] = [
    ['JWKS', () => new Request(`${BASE}/api/.well-known/jwks.json`)],
    ['public key', () => new Request(`${BASE}/api/verify/public-key`)],
    ['validation GET /api/verify/token', () => new Request(`${BASE}/api/verify/token/${token}`)],
  ]
  const results = new Map<string, number[]>()
  for (let round = 0; round < rounds + 1; round++) {
    for (const [path, make] of paths) {
      for (const [variant, handle] of variants) {
        const started = performance.now()
        for (let i = 0; i < requests; i++) {
          const response = await handle(make())
          await response.arrayBuffer()
          if (response.status !== 200) throw new Error(`${path}: ${response.status}`)
        }
        const microseconds = ((performance.now() - started) * 1000) / requests
        // Round 0 warms the JIT and is not counted.
        if (round > 0) results.set(`${path}\t${variant}`, [...(results.get(`${path}\t${variant}`) ?? []), microseconds])
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log(`\n${requests.toLocaleString('en')} requests a variant, ${rounds} rounds (medians), one after another, in process; load average ${await loadAverage()}\n`)
  console.log('| path | the app alone | + id, route, metrics, deadline | + the log line | the layer\'s share |')
  console.log('|---|---|---|---|---|')
  for (const [path] of paths) {
    const [alone, instrumented, logged] = variants.map(([variant]) => median(results.get(`${path}\t${variant}`)!))
    console.log(`| ${path} | ${alone!.toFixed(1)} µs | ${instrumented!.toFixed(1)} µs | ${logged!.toFixed(1)} µs | ${((100 * (logged! - alone!)) / logged!).toFixed(0)}% (${(instrumented! - alone!).toFixed(1)} + ${(logged! - instrumented!).toFixed(1)} µs) |`)
  }
} finally {
  await services.close()
  rmSync(dataDir, { recursive: true, force: true })
}

/** A real age token: the sandbox form completed through the app, its code exchanged. */
async function tokenFor(handle: (request: Request) => Promise<Response>, clientId: string, secret: string): Promise<string> {
  let location = ''
  const send = async (request: Request) => {
    const response = await handle(request)
    if (response.status === 303) location = response.headers.get('location') ?? ''
    return response
  }
  await completeForm(send, BASE, await openPage(send, BASE, clientId, CALLBACK))
  const code = new URL(location).searchParams.get('code')!
  const exchanged = await handle(
    new Request(`${BASE}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${btoa(`${clientId}:${secret}`)}` },
      body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, state: 'bench' }),
    }),
  )
  const { access_token } = (await exchanged.json()) as { access_token?: string }
  if (!access_token) throw new Error(`exchange ${exchanged.status}`)
  return access_token
}
