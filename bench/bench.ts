/**
 * `bun run bench`: the service's hot paths against their ceilings, in one run on this machine (issue 12).
 *
 *   bun run bench                                   # 10 s per path, 10 million seeded audit rows, writes docs/performance.md
 *   bun run bench --seconds 5 --audit-rows 100000   # a quicker look
 *   bun run bench --no-write                        # print only
 *   bun run bench --only exchange --workers 1 --profile /tmp/prof   # one path; the server writes a CPU profile (markdown)
 *
 * A fresh database on the Postgres server of `--database` (default: DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres; dropped at the end), the server as `bun start` runs it in a
 * process of its own, and the load generator in another (wrk if installed, else autocannon). Ceilings in
 * the same run: RSA-2048 signatures per second (`openssl speed`, one process and one per core) for the
 * token exchange, which signs one token per request; an Elysia hello world on the same Bun for the other
 * HTTP paths. The peer for the exchange: node-oidc-provider's token endpoint (bench/peer.mjs, on Node when
 * installed, else on Bun). The abuse limits are raised for the run (one address makes all the requests).
 * First of all, the face check's cost a core (bench/face-stages.ts on the camera clips, when
 * ../shared/liveness has them), before anything else has loaded the machine.
 */
import { cpus, totalmem } from 'node:os'
import { readFileSync, readdirSync } from 'node:fs'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { createApp, createHandler } from '../src/app.tsx'
import { startServices } from '../src/boot.ts'
import { createStatementLog } from '../src/db/statement-log.ts'
import type { AppDeps } from '../src/deps.ts'
import { loadConfig } from '../src/config.ts'
import { ENGINE_OPTIONS } from '../src/ops/engine-options.ts'
import { silentLogger } from '../src/lib/log.ts'
import { createClient } from '../src/clients/registry.ts'
import { sealGatePass } from '../src/gate/gate-cookie.ts'
import { updateGate } from '../src/gate/gate-settings.ts'
import { hasWrk, runLoad, type LoadPlan, type LoadResult } from './load.ts'
import { loadAverage, peakRssMiB, startFlags, waitForReady } from './processes.ts'
import { completeForm, openPage } from './page-visit.ts'
import { hasLivenessClips } from '../test/liveness/clips.ts'
import { exchangeComparisons, faceCheckLine, goalReadings, writeReport, type FaceCheckCost, type Row } from './report.ts'
import { freshBenchDatabase, seedAuditRows, seedCodes } from './seed.ts'

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    'audit-rows': { type: 'string', default: '10000000' },
    database: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
    only: { type: 'string' },
    workers: { type: 'string' },
    profile: { type: 'string' },
  },
})
const seconds = Number(values.seconds)
const auditRows = Number(values['audit-rows'])
const adminUrl = values.database ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const CALLBACK = 'https://shop.example/callback'
const GATED_HOST = 'gated.example'
const port = 20_000 + Math.floor(Math.random() * 20_000)
const baseUrl = `http://127.0.0.1:${port}`

function log(line: string) {
  console.error(`[bench] ${line}`)
}

/** RSA-2048 signatures per second, as `openssl speed` reports them (`-multi N` for N processes). */
async function opensslSigns(processes: number): Promise<number> {
  const argv = ['openssl', 'speed', '-seconds', '3', ...(processes > 1 ? ['-multi', String(processes)] : []), 'rsa2048']
  const child = Bun.spawn(argv, { stdout: 'pipe', stderr: 'ignore' })
  const out = await new Response(child.stdout).text()
  await child.exited
  // "rsa 2048 bits 0.000648s 0.000019s   1543.2  52631.6": the first rate is signatures.
  const match = /rsa\s+2048 bits\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)/.exec(out)
  if (!match) throw new Error(`could not read openssl speed's output:\n${out}`)
  return Number(match[1])
}

/** RS256 signatures per second as the server makes them, with every core (bench/bun-signs.ts). */
async function bunSigns(): Promise<number> {
  const child = Bun.spawn(['bun', 'bench/bun-signs.ts'], { stdout: 'pipe', stderr: 'inherit' })
  const out = await new Response(child.stdout).text()
  if ((await child.exited) !== 0 || !Number.isFinite(Number(out))) throw new Error(`bench/bun-signs.ts failed: ${out}`)
  return Number(out)
}

/**
 * What Postgres itself commits on this machine: one-row UPDATEs from 64 clients (pgbench), the least
 * durable write an exchange makes (it marks its code used). Undefined when pgbench is not installed.
 */
async function postgresCommits(databaseUrl: string, db: postgres.Sql): Promise<number | undefined> {
  if (Bun.spawnSync(['sh', '-c', 'command -v pgbench']).exitCode !== 0) return undefined
  await db`create table bench_commits (id int primary key, n int not null)`
  await db`insert into bench_commits select i, 0 from generate_series(1, 10000) as i`
  const script = `${Bun.env.TMPDIR ?? '/tmp'}/ofage-bench-commit.sql`
  await Bun.write(script, '\\set id random(1, 10000)\nupdate bench_commits set n = n + 1 where id = :id;\n')
  const child = Bun.spawn(['pgbench', '-n', '-c', '64', '-j', '2', '-T', String(seconds), '-f', script, databaseUrl], { stdout: 'pipe', stderr: 'ignore' })
  const out = await new Response(child.stdout).text()
  await child.exited
  await db`drop table bench_commits`
  return Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? NaN)
}

type CpuReading = Map<number, { role: 'server' | 'postgres' | 'other'; cpu: number }>

/**
 * The share of all cores each side used between two readings: per process (one that started meanwhile
 * counts from zero; one that exited is lost, except the load generator, counted among this process's
 * reaped children).
 */
function cpuShares(before: CpuReading, after: CpuReading, seconds: number) {
  const shares = { server: 0, postgres: 0, other: 0 }
  for (const [pid, { role, cpu }] of after) shares[role] += Math.max(0, cpu - (before.get(pid)?.cpu ?? 0))
  for (const role of ['server', 'postgres', 'other'] as const) shares[role] /= seconds * cpus().length
  return shares
}

/** CPU seconds used so far by every process, by who it is: the server's tree, Postgres, or the rest. */
function cpuByRole(serverPid: number): CpuReading {
  const ticks = 100
  const stats = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        return [{ pid: Number(entry), comm, ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / ticks }]
      } catch {
        return []
      }
    })
  const tree = new Set([serverPid])
  for (let grew = true; grew; ) {
    grew = false
    for (const stat of stats) if (!tree.has(stat.pid) && tree.has(stat.ppid)) (tree.add(stat.pid), (grew = true))
  }
  const reading: CpuReading = new Map()
  for (const stat of stats) reading.set(stat.pid, { role: tree.has(stat.pid) ? 'server' : stat.comm.startsWith('postgres') ? 'postgres' : 'other', cpu: stat.cpu })
  // The load generator has exited by the second reading: its time is in this process's reaped children.
  const self = readFileSync('/proc/self/stat', 'utf8')
  const fields = self.slice(self.lastIndexOf(')') + 2).split(' ')
  reading.set(-1, { role: 'other', cpu: (Number(fields[13]) + Number(fields[14])) / ticks })
  return reading
}

async function main() {
  const database = await freshBenchDatabase(adminUrl, 'ofage_bench')
  const databaseUrl = database.url
  const db = postgres(databaseUrl, { max: 2, onnotice: () => {} })
  let server: ReturnType<typeof Bun.spawn> | undefined
  let hello: ReturnType<typeof Bun.spawn> | undefined
  try {
    const loadAtStart = await loadAverage()
    const machine = describeMachine(await db`select version()`.then((rows) => String(rows[0]!.version)))
    log(`${machine.cpu}, ${machine.cores} cores, ${machine.memory}; load generator: ${hasWrk ? 'wrk' : 'autocannon'}`)

    // First, on a quiet machine: a core's cost, not what the other measurements leave running behind them
    // (Postgres writing out pgbench's commits, or vacuuming a million new rows).
    const faceCheck = values.only && !'face check'.includes(values.only) ? undefined : await faceCheckCost()
    if (faceCheck) log(faceCheckLine(faceCheck))

    log('ceilings: openssl speed rsa2048, one process and one per core; RS256 in this Bun')
    const signsOne = await opensslSigns(1)
    const signsAll = await opensslSigns(cpus().length)
    const signsBun = await bunSigns()
    const helloPort = port + 1
    hello = Bun.spawn(['bun', 'bench/hello.ts'], { env: { ...process.env, PORT: String(helloPort) }, stdout: 'ignore', stderr: 'inherit' })
    await Bun.sleep(1000)
    const helloPlan: LoadPlan = { url: `http://127.0.0.1:${helloPort}/`, connections: 64, seconds }
    await runLoad({ ...helloPlan, seconds: 2 })
    const helloCpuBefore = cpuByRole(hello.pid)
    const helloWallBefore = performance.now()
    const helloWorld = await runLoad(helloPlan)
    const helloCpu = cpuShares(helloCpuBefore, cpuByRole(hello.pid), (performance.now() - helloWallBefore) / 1000)
    hello.kill()
    await hello.exited
    const commits = await postgresCommits(databaseUrl, db)
    const peer = values.only && !'token exchange'.includes(values.only) ? undefined : await peerTokens(port + 2)
    log(`openssl: ${signsOne.toFixed(0)}/s (1 process), ${signsAll.toFixed(0)}/s (${cpus().length}); the server's RS256: ${signsBun.toFixed(0)}/s; hello world: ${helloWorld.requestsPerSecond.toFixed(0)}/s; Postgres one-row commits: ${commits?.toFixed(0) ?? 'no pgbench'}/s; peer token endpoint: ${peer?.result.requestsPerSecond.toFixed(0) ?? 'not run'}/s`)

    const env = { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), PUBLIC_URL: baseUrl, APP_URL: baseUrl, ISSUER_URL: baseUrl, FACE_CHECK: '0', OFAGE_DEMO: '0' }
    const limits = { RATE_LIMIT_SESSIONS: '1000000', RATE_LIMIT_CHECKS: '1000000', RATE_LIMIT_AUTH_FAILURES: '1000000' }
    const statementLog = createStatementLog()
    const services = await startServices(loadConfig({ ...env, ...limits }), { log: silentLogger, onStatement: statementLog.onStatement })
    const { client, secret } = await createClient(services.deps, { name: 'Bench shop', redirectUris: [CALLBACK], sandbox: true })
    const flowStatements = await countFlowStatements(services.deps, statementLog, client.id)
    log(`hosted page flow, counted in process: ${flowStatements.open} statements to open the page, ${flowStatements.complete} to complete the form`)
    // The gate's check runs before every request of a gated site: a valid cookie, as a proxy forwards it.
    await updateGate(services.deps, client.id, { addHosts: [GATED_HOST] })
    const issuedAt = Math.floor(Date.now() / 1000)
    const gateCookie = sealGatePass(services.deps.keys.gateKey, { clientId: client.id, origin: `https://${GATED_HOST}`, ageOver: 18, verificationId: crypto.randomUUID(), issuedAt, expiresAt: issuedAt + 86_400 })
    await services.close()
    const authorization = `Basic ${Buffer.from(`${client.id}:${secret}`).toString('base64')}`

    log(`seeding ${auditRows.toLocaleString('en')} audit rows and their daily counters`)
    const seedStarted = performance.now()
    await seedAuditRows(db, client.id, auditRows)
    const seedSeconds = (performance.now() - seedStarted) / 1000
    const codes = await seedCodes(db, client.id, CALLBACK, Math.max(20_000, 8_000 * (seconds + 2)), 30)
    log(`seeded in ${seedSeconds.toFixed(0)} s`)

    const profiling = values.profile ? ['--cpu-prof-md', `--cpu-prof-dir=${values.profile}`] : []
    const workers = values.workers ? { WORKERS: values.workers } : {}
    server = Bun.spawn(['bun', ...profiling, ...startFlags(), 'src/index.ts'], { env: { ...env, ...limits, ...workers }, stdout: 'ignore', stderr: 'ignore' })
    await waitForReady(baseUrl)
    // Every worker answers /readyz only once it listens; a second lets the last of them settle.
    await Bun.sleep(1000)
    const idleRss = peakRssMiB(server.pid)
    const exchangeBody = (code: string) => JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, state: 'bench' })
    const first = await fetch(`${baseUrl}/api/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: exchangeBody(codes.pop()!) })
    const { access_token: token } = (await first.json()) as { access_token: string }
    const json = { 'content-type': 'application/json' }

    const plans: { path: string; plan?: LoadPlan; flow?: number; ceiling: 'sign' | 'hello' | undefined }[] = [
      { path: 'token exchange (c64)', ceiling: 'sign', plan: { url: `${baseUrl}/api/oauth/token`, method: 'POST', headers: { ...json, authorization }, bodies: codes.map(exchangeBody), connections: 64, seconds } },
      { path: 'validation GET /api/verify/token (c64)', ceiling: 'hello', plan: { url: `${baseUrl}/api/verify/token/${token}`, connections: 64, seconds } },
      { path: 'validate POST /api/oauth/validate (c64)', ceiling: 'hello', plan: { url: `${baseUrl}/api/oauth/validate`, method: 'POST', headers: json, body: JSON.stringify({ token }), connections: 64, seconds } },
      { path: 'gate GET /gate/auth, valid cookie (c64)', ceiling: 'hello', plan: { url: `${baseUrl}/gate/auth`, headers: { 'x-forwarded-host': GATED_HOST, cookie: `__Host-ofage_gate=${gateCookie}` }, connections: 64, seconds } },
      { path: 'JWKS (c64)', ceiling: 'hello', plan: { url: `${baseUrl}/api/.well-known/jwks.json`, connections: 64, seconds } },
      { path: 'public key (c64)', ceiling: 'hello', plan: { url: `${baseUrl}/api/verify/public-key`, connections: 64, seconds } },
      { path: `usage report, month, ${auditRows.toLocaleString('en')} audit rows (c64)`, ceiling: 'hello', plan: { url: `${baseUrl}/api/oauth/usage`, headers: { authorization }, connections: 64, seconds } },
      { path: 'hosted page flow: GET page + POST form (c16)', ceiling: undefined, flow: 16 },
    ]
    const rows: Row[] = []
    let peakRss = 0
    for (const { path, plan, flow, ceiling } of plans.filter((p) => !values.only || p.path.includes(values.only!))) {
      // A short warm-up first (the JIT, the pool), except for codes, which can be used once.
      if (plan && !plan.bodies) await runLoad({ ...plan, seconds: 2 })
      let pathRss = 0
      const sampler = setInterval(() => (pathRss = Math.max(pathRss, peakRssMiB(server!.pid))), 200)
      const cpuBefore = cpuByRole(server.pid)
      const wallBefore = performance.now()
      const result = plan ? await runLoad(plan) : await runFlow(client.id, flow!)
      const cpu = cpuShares(cpuBefore, cpuByRole(server.pid), (performance.now() - wallBefore) / 1000)
      clearInterval(sampler)
      peakRss = Math.max(peakRss, pathRss)
      const ceilingValue = ceiling === 'sign' ? signsAll : ceiling === 'hello' ? helloWorld.requestsPerSecond : undefined
      rows.push({ path, result, cpu, ceiling: ceilingValue, ceilingName: ceiling === 'sign' ? `RSA-2048 signing, openssl -multi ${cpus().length}` : ceiling === 'hello' ? 'Elysia hello world' : undefined })
      log(`${path}: ${result.requestsPerSecond.toFixed(0)}/s, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms, ${result.errors} errors; CPU server ${(100 * cpu.server).toFixed(0)}%, Postgres ${(100 * cpu.postgres).toFixed(0)}%, load generator and rest ${(100 * cpu.other).toFixed(0)}%; peak RSS ${pathRss.toFixed(0)} MiB`)
    }
    const report = { machine, seconds, auditRows, seedSeconds, tool: hasWrk ? 'wrk' : 'autocannon', signsOne, signsAll, signsBun, commits, helloWorld, helloCpu, peer, rows, peakRssMiB: peakRss, idleRssMiB: idleRss, workers: Number(values.workers ?? cpus().length), flowStatements, faceCheck, load: { start: loadAtStart, end: await loadAverage() } }
    printReport(report)
    if (!values['no-write']) {
      writeReport(report, 'docs/performance.md', 'docs/performance.svg')
      log('wrote docs/performance.md and docs/performance.svg')
    }
  } finally {
    // SIGTERM: the server shuts down cleanly (and writes its CPU profile when asked to).
    server?.kill('SIGTERM')
    await server?.exited
    hello?.kill()
    await db.end()
    await database.drop()
  }
}

/**
 * The peer's token endpoint under the exchange's load: node-oidc-provider issuing RS256 JWT access tokens
 * for client_credentials, in one process of its own (Node when installed, as it is meant to run).
 */
async function peerTokens(peerPort: number): Promise<{ result: LoadResult; runtime: string }> {
  const runtime = Bun.which('node') ? 'node' : 'bun'
  const child = Bun.spawn([runtime, 'bench/peer.mjs', String(peerPort)], { stdout: 'ignore', stderr: 'ignore' })
  try {
    const url = `http://127.0.0.1:${peerPort}/token`
    const plan: LoadPlan = {
      url,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa('bench:bench-secret')}` },
      body: 'grant_type=client_credentials',
      connections: 64,
      seconds,
    }
    for (let i = 0; i < 100 && !(await fetch(url, { method: 'POST', headers: plan.headers, body: plan.body }).then((r) => r.ok, () => false)); i++) await Bun.sleep(100)
    await runLoad({ ...plan, seconds: 2 })
    const result = await runLoad(plan)
    const version = Bun.spawnSync([runtime, '--version']).stdout.toString().trim()
    return { result, runtime: runtime === 'node' ? `Node ${version}` : `Bun ${version}` }
  } finally {
    child.kill()
    await child.exited
  }
}

/**
 * What a live capture costs a core (issue 34's face check goal), by bench/face-stages.ts on frames sized as
 * the page sends them, pinned to one core where taskset is installed; undefined without the camera clips.
 */
async function faceCheckCost(): Promise<FaceCheckCost | undefined> {
  if (!hasLivenessClips) return undefined
  const pin = Bun.which('taskset') ? ['taskset', '-c', '0'] : []
  // With the engine's options the server runs with (src/ops/engine-options.ts), unless this environment sets them.
  const env = { ...ENGINE_OPTIONS, ...process.env }
  const child = Bun.spawn([...pin, 'bun', 'bench/face-stages.ts', '--side', '960', '--json'], { env, stdout: 'pipe', stderr: 'inherit' })
  const out = await new Response(child.stdout).text()
  if ((await child.exited) !== 0) return undefined
  return { ...(JSON.parse(out.trim().split('\n').at(-1)!) as Omit<FaceCheckCost, 'pinned'>), pinned: pin.length > 0 }
}

/**
 * The statements one visitor's flow sends (BEGIN and COMMIT included), counted in process through the app's
 * handler on the bench's database: the second visit, since the first one also reads the client.
 */
async function countFlowStatements(deps: AppDeps, statementLog: ReturnType<typeof createStatementLog>, clientId: string) {
  const handle = createHandler(deps, createApp(deps))
  await completeForm(handle, baseUrl, await openPage(handle, baseUrl, clientId, CALLBACK))
  const opened = await statementLog.measure(() => openPage(handle, baseUrl, clientId, CALLBACK))
  const completed = await statementLog.measure(() => completeForm(handle, baseUrl, opened.result))
  return { open: opened.statements.length, complete: completed.statements.length }
}

async function runFlow(clientId: string, connections: number): Promise<LoadResult> {
  const run = async (s: number) => {
    const child = Bun.spawn(['bun', 'bench/page-flow.ts', baseUrl, clientId, CALLBACK, String(connections), String(s)], { stdout: 'pipe', stderr: 'inherit' })
    const out = await new Response(child.stdout).text()
    await child.exited
    return JSON.parse(out) as { rps: number; p50: number; p99: number; requests: number; errors: number }
  }
  await run(2)
  const result = await run(seconds)
  return { requestsPerSecond: result.rps, p50Ms: result.p50, p99Ms: result.p99, requests: result.requests, errors: result.errors, tool: 'wrk' }
}

function describeMachine(postgresVersion: string) {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown CPU',
    cores: cpus().length,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    bun: Bun.version,
    postgres: postgresVersion.split(' on ')[0]!,
    kernel: readFileSync('/proc/version', 'utf8').split(' ').slice(0, 3).join(' '),
  }
}

function printReport(report: Parameters<typeof writeReport>[0]) {
  console.log(`\n${report.machine.cpu}, ${report.machine.cores} cores, ${report.machine.memory}, Bun ${report.machine.bun}, ${report.machine.postgres}; ${report.tool}, ${report.seconds} s per path`)
  console.log(`the server: ${report.workers} processes, the face check off; load average ${report.load.start} at the start, ${report.load.end} at the end`)
  console.log(`ceilings: openssl rsa2048 sign ${report.signsOne.toFixed(0)}/s (1 process), ${report.signsAll.toFixed(0)}/s (-multi ${report.machine.cores}); the server's RS256 ${report.signsBun.toFixed(0)}/s (a process a core); hello world ${report.helloWorld.requestsPerSecond.toFixed(0)}/s`)
  if (report.peer) console.log(`peer: node-oidc-provider token endpoint (${report.peer.runtime}) ${report.peer.result.requestsPerSecond.toFixed(0)}/s, p99 ${report.peer.result.p99Ms.toFixed(1)} ms`)
  for (const row of report.rows) {
    const ratio = row.ceiling ? ` = ${((100 * row.result.requestsPerSecond) / row.ceiling).toFixed(0)}% of ${row.ceilingName}${exchangeComparisons(row, report)}` : ''
    console.log(`${row.path.padEnd(62)} ${row.result.requestsPerSecond.toFixed(0).padStart(7)}/s  p50 ${row.result.p50Ms.toFixed(1).padStart(6)} ms  p99 ${row.result.p99Ms.toFixed(1).padStart(6)} ms  errors ${row.result.errors}${ratio}`)
  }
  console.log(`peak RSS of a server process under load: ${report.peakRssMiB.toFixed(0)} MiB`)
  if (report.flowStatements) console.log(`hosted page flow: ${report.flowStatements.open} statements to open the page, ${report.flowStatements.complete} to complete the form`)
  console.log(faceCheckLine(report.faceCheck))
  console.log("\nissue 34's goals in this run:")
  for (const g of goalReadings(report)) console.log(`${g.met ? 'met   ' : 'MISSED'} ${g.goal}: ${g.measured}${g.met ? '' : `; missed by ${g.shortBy}; bound: ${g.bound}`}`)
}

await main()
