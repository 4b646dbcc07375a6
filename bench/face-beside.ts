/**
 * Both loads at once (issue 34, item 2): the token exchange under wrk's load and visitors' face checks
 * through the hosted page, alone and together, for each process layout, in one run on this machine.
 *
 *   bun bench/face-beside.ts                                  # layouts 1:0 (the old default) and 2:10 (the new), 20 s a phase
 *   bun bench/face-beside.ts --layouts 1:0,2:0,2:5,2:10 --seconds 60 --visitors 12
 *
 * A layout is WORKERS:FACE_NICE: how many server processes, and the nice value of each one's estimator thread
 * (FACE_WORKERS=1 per process). For each, a fresh Postgres database, the server as `bun start` runs it with the
 * face check on, then three phases: the exchange alone (c64), the face checks alone (`--visitors` visitors,
 * each opening the page, asking for a challenge, waiting its prompts out and posting a capture of real frames
 * from shared/liveness), and both together. A face check counts when the page answers it (approved or
 * refused: every later capture of one face is refused as a replay, after the same analysis); "busy" answers
 * are counted apart. The visitors run in this process, the exchange's load in wrk's (or autocannon's).
 */
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { startServices } from '../src/boot.ts'
import { createClient } from '../src/clients/registry.ts'
import { loadConfig } from '../src/config.ts'
import type { Pose } from '../src/liveness/challenge.ts'
import { silentLogger } from '../src/lib/log.ts'
import { REDIRECT_URI } from '../test/helpers.ts'
import { captureFor, captureForm, FEMALE, hasLivenessClips } from '../test/liveness/clips.ts'
import { testBrowser } from '../test/verification/browser.ts'
import { runLoad, type LoadResult } from './load.ts'
import { loadAverage, peakRssMiB, startFlags, waitForReady } from './processes.ts'
import { freshBenchDatabase, seedCodes } from './seed.ts'

const { values } = parseArgs({
  options: {
    layouts: { type: 'string', default: '1:0,2:10' },
    seconds: { type: 'string', default: '20' },
    visitors: { type: 'string', default: '16' },
    database: { type: 'string' },
  },
})
const seconds = Number(values.seconds)
const visitors = Number(values.visitors)
const adminUrl = values.database ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const layouts = values.layouts.split(',').map((layout) => {
  const [workers, nice] = layout.split(':').map(Number)
  return { workers: workers!, nice: nice ?? 0 }
})
const log = (line: string) => console.error(`[face-beside] ${line}`)

type FaceResult = { checksPerMinute: number; busy: number; other: number; p50Ms: number; p99Ms: number }

/** Visitors doing face checks back to back until `until`: what the page answered, and how long each post took. */
async function faceLoad(baseUrl: string, clientId: string, until: number): Promise<FaceResult> {
  const times: number[] = []
  let busy = 0
  let other = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: visitors }, async () => {
      while (performance.now() < until) {
        const browser = testBrowser({ baseUrl })
        const { page } = await browser.open({ client_id: clientId, redirect_uri: REDIRECT_URI, state: 'bench' })
        const challengePath = /data-challenge="([^"]+)"/.exec(page.html)?.[1]?.replaceAll('&amp;', '&')
        if (!challengePath) throw new Error('no face form on the page')
        const challenge = (await (await browser.post(challengePath, { csrf: page.csrf! })).json()) as { challenge: string; poses: Pose[]; hold_ms: number[] }
        // The page refuses an answer sooner than its prompts could be shown.
        await Bun.sleep(challenge.hold_ms.reduce((sum, ms) => sum + ms, 0))
        if (performance.now() >= until) break
        const form = captureForm(page.csrf!, challenge.challenge, framesFor(challenge.poses))
        const posted = performance.now()
        const response = await browser.request(page.action('/methods/face'), { method: 'POST', body: form })
        const text = await response.text()
        if (response.status === 303 || response.status === 200) times.push(performance.now() - posted)
        else if (response.status === 503 || /busy/i.test(text)) busy++
        else other++
      }
    }),
  )
  times.sort((a, b) => a - b)
  const minutes = (performance.now() - started) / 60_000
  return { checksPerMinute: times.length / minutes, busy, other, p50Ms: times[Math.floor(times.length / 2)] ?? NaN, p99Ms: times[Math.floor(times.length * 0.99)] ?? NaN }
}

/** A capture the clip can give for any challenge: its turns where it has them, her straight frames for a nod. */
function framesFor(poses: Pose[]) {
  if (poses.every((pose) => pose === 'left' || pose === 'right')) return captureFor(poses)
  return [0, ...poses.map((_, k) => k + 1), poses.length + 1].flatMap((phase) => FEMALE.frontal.slice(0, 2).map((frame) => ({ frame, phase })))
}

async function main() {
  if (!hasLivenessClips) throw new Error('needs ../shared/liveness (the camera clips)')
  log(`${cpus()[0]?.model.trim()}, ${cpus().length} cores; ${seconds} s a phase, ${visitors} face visitors; layouts ${values.layouts}`)
  const rows: string[] = []
  for (const layout of layouts) {
    const database = await freshBenchDatabase(adminUrl, 'ofage_beside')
    const db = postgres(database.url, { max: 2, onnotice: () => {} })
    const port = 20_000 + Math.floor(Math.random() * 20_000)
    const baseUrl = `http://127.0.0.1:${port}`
    const env = { ...process.env, DATABASE_URL: database.url, PORT: String(port), PUBLIC_URL: baseUrl, OFAGE_DEMO: '0', FACE_CHECK: '1', FACE_WORKERS: '1', WORKERS: String(layout.workers), FACE_NICE: String(layout.nice) }
    const limits = { RATE_LIMIT_SESSIONS: '1000000', RATE_LIMIT_CHECKS: '1000000', RATE_LIMIT_AUTH_FAILURES: '1000000' }
    let server: ReturnType<typeof Bun.spawn> | undefined
    try {
      const services = await startServices(loadConfig({ ...env, ...limits, FACE_CHECK: '0' }), { log: silentLogger })
      const exchanger = await createClient(services.deps, { name: 'Bench exchange', redirectUris: [REDIRECT_URI], sandbox: true })
      const shop = await createClient(services.deps, { name: 'Bench face shop', redirectUris: [REDIRECT_URI] })
      await services.close()
      // wrk sends each body once: enough codes for 3,000 exchanges a second in each phase and the warm-up.
      const perPhase = 3_000 * seconds
      const codes = await seedCodes(db, exchanger.client.id, REDIRECT_URI, 2 * perPhase + 10_000, 30)
      const authorization = `Basic ${Buffer.from(`${exchanger.client.id}:${exchanger.secret}`).toString('base64')}`
      const exchangePlan = (count = perPhase) => ({
        url: `${baseUrl}/api/oauth/token`,
        method: 'POST' as const,
        headers: { 'content-type': 'application/json', authorization },
        bodies: codes.splice(0, count).map((code) => JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 'bench' })),
        connections: 64,
        seconds,
      })
      server = Bun.spawn(['bun', ...startFlags(), 'src/index.ts'], { env: { ...env, ...limits }, stdout: 'ignore', stderr: 'ignore' })
      await waitForReady(baseUrl)
      const name = `WORKERS=${layout.workers}, FACE_NICE=${layout.nice}`
      // A warm-up of each (the JIT, the pool, the models' first frames), not counted.
      await runLoad({ ...exchangePlan(10_000), seconds: 2 })
      await faceLoad(baseUrl, shop.client.id, performance.now() + 5_000)
      let peakRss = 0
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, peakRssMiB(server!.pid))), 250)
      const alone = await runLoad(exchangePlan())
      const faceAlone = await faceLoad(baseUrl, shop.client.id, performance.now() + seconds * 1000)
      const [together, faceTogether] = await Promise.all([runLoad(exchangePlan()), faceLoad(baseUrl, shop.client.id, performance.now() + seconds * 1000)])
      clearInterval(sampler)
      const exchange = (r: LoadResult) => `${r.requestsPerSecond.toFixed(0)}/s p99 ${r.p99Ms.toFixed(0)} ms${r.errors ? ` (${r.errors} errors)` : ''}`
      const face = (r: FaceResult) => `${r.checksPerMinute.toFixed(1)}/min p50 ${(r.p50Ms / 1000).toFixed(1)} s p99 ${(r.p99Ms / 1000).toFixed(1)} s${r.busy ? `, ${r.busy} busy` : ''}${r.other ? `, ${r.other} other` : ''}`
      const row = `| ${name} | ${exchange(alone)} | ${face(faceAlone)} | ${exchange(together)} (${((100 * together.requestsPerSecond) / alone.requestsPerSecond).toFixed(0)}%) | ${face(faceTogether)} (${((100 * faceTogether.checksPerMinute) / faceAlone.checksPerMinute).toFixed(0)}%) | ${peakRss.toFixed(0)} MiB |`
      log(row)
      rows.push(row)
    } finally {
      server?.kill('SIGTERM')
      await server?.exited
      await db.end()
      await database.drop()
    }
  }
  console.log(`\n${cpus().length} cores, load average at the end ${await loadAverage()}; ${seconds} s a phase, ${visitors} face visitors\n`)
  console.log('| layout | exchange alone (c64) | face checks alone | exchange beside face checks | face checks beside the exchange | peak RSS of a server process |')
  console.log('|---|---|---|---|---|---|')
  for (const row of rows) console.log(row)
}

await main()
