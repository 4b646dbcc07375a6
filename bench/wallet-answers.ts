/**
 * Many answers to one wallet request (issue 19): the same valid presentation posted N times at once to
 * the OpenID4VP response endpoint. Before the fix, every post that found the request still open was
 * verified, and only the write of its outcome refused all but one (up to 98 of 300–600 verified, RSS
 * 129 → 211 MiB); now one conditional UPDATE claims the request first and the rest are refused unverified.
 *
 *   bun bench/wallet-answers.ts                          # 300 answers, 3 rounds
 *   bun bench/wallet-answers.ts --answers 600 --rounds 5
 *   bun bench/wallet-answers.ts --format mdl             # sd-jwt (default), av or mdl
 *   bun bench/wallet-answers.ts --postgres postgres://postgres@127.0.0.1:5432/postgres   # not embedded
 *
 * The server is a subprocess (`bun src/index.ts`) on a fresh embedded database in a temp DATA_DIR (or a
 * fresh database on the Postgres server named by --postgres, dropped afterwards), trusting
 * the dev issuer (CREDENTIAL_TRUST_LIST), with one production (non-sandbox) client created before it starts.
 * Each round opens the hosted page in a new session, starts the digital ID request, lets the dev wallet
 * fetch the signed request and build one answer, then posts that answer N times concurrently. The server's
 * RSS is read from /proc/PID/status (VmRSS) just before the burst and every 20 ms during it (peak);
 * "verified" is the rise of ofage_verifications_total{method="credential"} on /metrics, which counts every
 * answer whose presentation was checked. Bun's fetch sends at most 256 requests at once unless
 * BUN_CONFIG_MAX_HTTP_REQUESTS says otherwise: the script sets it (by running itself again) so that all
 * N posts are in flight together.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServices } from '../src/boot.ts'
import { createDevIssuer, issueDevCredential, type DevCredentialFormat } from '../src/credentials/dev/issuer.ts'
import { answerRequest, createDevWallet, fetchRequest } from '../src/credentials/dev/wallet.ts'
import { silentLogger } from '../src/lib/log.ts'
import { createClient } from '../src/clients/registry.ts'
import { freePort, freshDatabaseUrl, REDIRECT_URI, testConfig, waitUntilReady } from '../test/helpers.ts'
import { testBrowser } from '../test/verification/browser.ts'

if (!process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) {
  const again = Bun.spawn([process.execPath, ...process.argv.slice(1)], {
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '65535' },
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  process.exit(await again.exited)
}

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 ? (process.argv[at + 1] ?? '') : fallback
}
const answers = Number(option('answers', '300'))
const rounds = Number(option('rounds', '3'))
const format = option('format', 'sd-jwt') as DevCredentialFormat
const postgres = option('postgres', '')
if (!(Number.isInteger(answers) && answers > 0 && Number.isInteger(rounds) && rounds > 0)) throw new Error('--answers and --rounds need positive integers')
if (!['sd-jwt', 'av', 'mdl'].includes(format)) throw new Error('--format is sd-jwt, av or mdl')

const mib = (kib: number) => (kib / 1024).toFixed(0)
const readRssKib = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)

// The dev issuer, trusted by the server; a wallet holding one credential from it.
const dir = mkdtempSync(join(tmpdir(), 'ofage-wallet-answers-'))
const issuer = await createDevIssuer(new Date())
writeFileSync(join(dir, 'trust-list.pem'), issuer.rootCertificate)
const wallet = await createDevWallet()
wallet.credentials.push(await issueDevCredential(issuer, { format, age: 30, holderPublicKey: wallet.holder.publicKey, now: new Date() }))

if (postgres) process.env.DATABASE_URL = postgres
const database = postgres ? await freshDatabaseUrl() : undefined
const port = await freePort()
const baseUrl = `http://127.0.0.1:${port}`
const metricsToken = 'bench-wallet-answers'
const env: Record<string, string> = {
  ...(database ? { DATABASE_URL: database.url } : { DATA_DIR: join(dir, 'data') }),
  PORT: String(port),
  PUBLIC_URL: baseUrl,
  APP_URL: baseUrl,
  ISSUER_URL: baseUrl,
  FACE_CHECK: '0',
  OFAGE_DEMO: '0',
  CREDENTIAL_TRUST_LIST: join(dir, 'trust-list.pem'),
  METRICS_TOKEN: metricsToken,
  // One process (Postgres would get one per core): its RSS and its /metrics are the whole server's.
  WORKERS: '1',
}

// The client is created before the server opens the database: the embedded one allows one process.
const services = await startServices(testConfig(env), { log: silentLogger })
const { client } = await createClient(services.deps, { name: 'Wallet bench shop', redirectUris: [REDIRECT_URI] })
await services.close()

const { DATABASE_URL: _ignored, ...inherited } = process.env
const log = join(dir, 'server.log') // its log lines (stderr), shown if the run fails
const server = Bun.spawn(['bun', 'src/index.ts'], { cwd: join(import.meta.dir, '..'), env: { ...inherited, ...env }, stdout: 'ignore', stderr: Bun.file(log) })

/** Presentations the server has checked so far (each verification counts once, whatever its outcome). */
async function verifiedSoFar(): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text()
  return [...text.matchAll(/^ofage_verifications_total\{[^}]*method="credential"[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0)
}

/** A new session on the hosted page, its wallet request started, and the dev wallet's one answer to it. */
async function oneAnswer(): Promise<{ url: string; body: string }> {
  const browser = testBrowser({ baseUrl })
  const { response, page } = await browser.open({ client_id: client.id, state: 'st' })
  if (response.status !== 200) throw new Error(`the hosted page answered ${response.status}`)
  const started = await browser.post(`${page.action('/methods/credential').split('?')[0]}/start`, { csrf: page.csrf! })
  if (started.status !== 200) throw new Error(`starting the wallet request answered ${started.status}: ${await started.text()}`)
  const { wallet_url } = (await started.json()) as { wallet_url: string }
  const request = await fetchRequest(wallet_url)
  const vpToken = await answerRequest(wallet, request, { clientId: request.client_id, responseUri: request.response_uri }, new Date())
  return { url: request.response_uri, body: new URLSearchParams({ vp_token: JSON.stringify(vpToken), state: request.state }).toString() }
}

const rows: string[][] = [['round', 'posted', 'accepted', 'refused', 'verified', 'RSS before → peak MiB', 'wall ms', 'refusals']]
try {
  await waitUntilReady(baseUrl, 60_000)
  console.log(`bun ${Bun.version}; server pid ${server.pid}; ${database ? 'Postgres' : 'embedded database'}; ${format} credential; ${answers} answers × ${rounds} rounds; idle RSS ${mib(readRssKib(server.pid))} MiB\n`)
  for (let round = 1; round <= rounds; round++) {
    const answer = await oneAnswer()
    await Bun.sleep(500)
    const verifiedBefore = await verifiedSoFar()
    const before = readRssKib(server.pid)
    let peak = before
    const sampler = setInterval(() => void (peak = Math.max(peak, readRssKib(server.pid))), 20)
    const started = performance.now()
    const results = await Promise.all(
      Array.from({ length: answers }, async () => {
        const response = await fetch(answer.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: answer.body })
        const body = (await response.json().catch(() => ({}))) as { error_description?: string }
        return { status: response.status, reason: body.error_description?.replace(/[:,].*/, '') }
      }),
    )
    const wall = performance.now() - started
    clearInterval(sampler)
    peak = Math.max(peak, readRssKib(server.pid))
    const verified = (await verifiedSoFar()) - verifiedBefore
    const refusals = new Map<string, number>()
    for (const { status, reason } of results) if (status !== 200) refusals.set(`${status} ${reason}`, (refusals.get(`${status} ${reason}`) ?? 0) + 1)
    const accepted = results.filter((r) => r.status === 200).length
    rows.push([
      String(round),
      String(answers),
      String(accepted),
      String(answers - accepted),
      String(verified),
      `${mib(before)} → ${mib(peak)}`,
      wall.toFixed(0),
      [...refusals].map(([reason, n]) => `${n}× ${reason}`).join('; '),
    ])
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  for (const row of rows) console.log(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padStart(widths[i]!))).join('  '))
} catch (error) {
  console.error(`server log (tail):\n${readFileSync(log, 'utf8').split('\n').slice(-20).join('\n')}`)
  throw error
} finally {
  server.kill('SIGTERM')
  await server.exited
  await database?.drop()
  rmSync(dir, { recursive: true, force: true })
}
