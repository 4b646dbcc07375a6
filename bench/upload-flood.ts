/**
 * Memory under a flood of large face uploads that the server should refuse (issue 10): 32 parallel
 * 20 MiB multipart posts, first to a session that does not exist, then to a live session with a wrong
 * CSRF token in the `x-csrf-token` header (what the page's script sends), then to the same live session
 * with a wrong token in the body only (the no-JS upload form: read, so bounded only by the upload cap).
 *
 *   bun bench/upload-flood.ts                                                   # Postgres at 127.0.0.1:5432
 *   bun bench/upload-flood.ts --postgres postgres://postgres@db:5432/postgres   # another server
 *   bun bench/upload-flood.ts --no-face                                         # FACE_CHECK=0: no model load
 *   bun bench/upload-flood.ts --rounds 8                                        # the last flood 8 times, back to back
 *
 * The server is a subprocess (`bun src/index.ts`) on a throwaway database; its RSS is read from
 * /proc/PID/status (VmRSS) every 5 ms. With the face check on (the default, as in production, where a
 * live session offers the face method) the estimator's models load first, so the idle RSS includes them;
 * with --no-face the face method is not offered and a live session's post is refused as "no such method".
 * For each flood: RSS just before, the peak while the requests run, and after (2 s after the last answer;
 * with --rounds the repeats follow at once, as in a sustained flood, and "after" is read right away); the
 * answers' statuses and the slowest answer. A request the server answers before reading its body may
 * see its upload cut short: that counts as "reset", not as a failure of the server.
 */
import { readFileSync } from 'node:fs'
import { startServices } from '../src/boot.ts'
import { silentLogger } from '../src/lib/log.ts'
import { createClient } from '../src/clients/registry.ts'
import { freshDatabaseUrl, REDIRECT_URI, testConfig, waitUntilReady } from '../test/helpers.ts'
import { testBrowser } from '../test/verification/browser.ts'

const PARALLEL = 32
const UPLOAD_BYTES = 20 * 1024 * 1024
const face = !process.argv.includes('--no-face')
const rounds = process.argv.includes('--rounds') ? Number(process.argv[process.argv.indexOf('--rounds') + 1]) : 1
if (!(Number.isInteger(rounds) && rounds > 0)) throw new Error('--rounds needs a positive integer')
const flag = process.argv.indexOf('--postgres')
process.env.DATABASE_URL = (flag >= 0 ? process.argv[flag + 1] : undefined) ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

const mib = (kib: number) => (kib / 1024).toFixed(0)

function readRssKib(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)
}

/** One multipart body, built once and shared: a csrf field and a 20 MiB "frame". */
function multipartBody(csrf: string): { body: Uint8Array<ArrayBuffer>; contentType: string } {
  const boundary = '----ofageflood7d3b'
  const head = new TextEncoder().encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n${csrf}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="frame"; filename="frame.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
  )
  const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`)
  const body = new Uint8Array(head.length + UPLOAD_BYTES + tail.length)
  body.set(head)
  body.fill(0xab, head.length, head.length + UPLOAD_BYTES)
  body.set(tail, head.length + UPLOAD_BYTES)
  return { body, contentType: `multipart/form-data; boundary=${boundary}` }
}

const database = await freshDatabaseUrl()
const port = 20_000 + Math.floor(Math.random() * 20_000)
const baseUrl = `http://127.0.0.1:${port}`
const env = { ...process.env, DATABASE_URL: database.url, PORT: String(port), PUBLIC_URL: baseUrl, APP_URL: baseUrl, ISSUER_URL: baseUrl, FACE_CHECK: face ? '1' : '0', OFAGE_DEMO: '0' }
const server = Bun.spawn(['bun', 'src/index.ts'], { env, stdout: 'ignore', stderr: 'ignore' })
let peakKib = 0
const sampler = setInterval(() => void (peakKib = Math.max(peakKib, readRssKib(server.pid))), 5)

try {
  await waitUntilReady(baseUrl, 180_000)
  const services = await startServices(testConfig({ DATABASE_URL: database.url }), { log: silentLogger })
  const { client } = await createClient(services.deps, { name: 'Flood shop', redirectUris: [REDIRECT_URI] })
  await services.close()
  const browser = testBrowser({ baseUrl })
  const { page } = await browser.open({ client_id: client.id, state: 'st' })
  const cookie = [...browser.jar].map(([name, value]) => `${name}=${value}`).join('; ')
  const live = /\/s\/[A-Za-z0-9_-]+/.exec(page.html)![0]
  const wrong = multipartBody('not-the-token')

  /** `atOnce`: follows the previous flood without a pause, as a sustained flood would. */
  type Flood = { label: string; path: string; headers: Record<string, string>; atOnce?: boolean }
  const floods: Flood[] = [
    { label: 'unknown session', path: '/s/nosuchsession/methods/face', headers: {} },
    { label: 'live session, wrong x-csrf-token', path: `${live}/methods/face`, headers: { cookie, 'x-csrf-token': 'not-the-token' } },
    ...Array.from({ length: rounds }, (_, i) => ({
      label: `live session, wrong token in body only${rounds > 1 ? `, round ${i + 1}` : ''}`,
      path: `${live}/methods/face`,
      headers: { cookie },
      atOnce: i > 0,
    })),
  ]
  console.log(`bun ${Bun.version}; server pid ${server.pid}; FACE_CHECK=${face ? 1 : 0}; ${PARALLEL} × ${UPLOAD_BYTES / 2 ** 20} MiB per flood`)
  console.log(`idle RSS after start: ${mib(readRssKib(server.pid))} MiB (peak during start ${mib(peakKib)} MiB)\n`)
  const rows: string[][] = [['flood', 'before MiB', 'peak MiB', 'after MiB', 'answers', 'slowest ms']]
  for (const [i, flood] of floods.entries()) {
    if (!flood.atOnce) await Bun.sleep(1000)
    const before = readRssKib(server.pid)
    peakKib = before
    const started = performance.now()
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, () =>
        fetch(`${baseUrl}${flood.path}`, {
          method: 'POST',
          body: wrong.body,
          headers: { 'content-type': wrong.contentType, accept: 'application/json', origin: baseUrl, ...flood.headers },
        }).then(
          async (response) => {
            await response.arrayBuffer()
            return { answer: String(response.status), ms: performance.now() - started }
          },
          () => ({ answer: 'reset', ms: performance.now() - started }),
        ),
      ),
    )
    const peak = peakKib
    if (!floods[i + 1]?.atOnce) await Bun.sleep(2000)
    const counts = new Map<string, number>()
    for (const { answer } of results) counts.set(answer, (counts.get(answer) ?? 0) + 1)
    const answers = [...counts].map(([answer, n]) => `${n}×${answer}`).join(' ')
    rows.push([flood.label, mib(before), mib(peak), mib(readRssKib(server.pid)), answers, Math.max(...results.map((r) => r.ms)).toFixed(0)])
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  for (const row of rows) console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '))
} finally {
  clearInterval(sampler)
  server.kill('SIGTERM')
  await server.exited
  await database.drop()
}
