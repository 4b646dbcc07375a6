import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { loadConfig } from '../src/config.ts'
import { ENGINE_OPTIONS } from '../src/ops/engine-options.ts'
import { freePort, freshDatabaseUrl, onPostgres, waitUntilReady } from './helpers.ts'

/** The engine's options unset, so that the server sets them itself. */
const withoutEngineOptions = Object.fromEntries(Object.keys(ENGINE_OPTIONS).map((name) => [name, undefined]))

/**
 * Issue 12: WORKERS server processes share the port (`reusePort`). The first starts the others, restarts
 * one that dies, stops them on SIGTERM; a worker whose first process was killed outright stops too.
 */
/** The running children of a process (not a zombie that is exited and not yet reaped). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const [state, ppid] = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')
        return Number(ppid) === pid && state !== 'Z'
      } catch {
        return false
      }
    })
    .map(Number)
}

/** Running: a zombie (exited, not yet reaped by whoever adopted it) has stopped serving. */
const alive = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0] !== 'Z'
  } catch {
    return false
  }
}

async function until(check: () => boolean, ms = 10_000) {
  const started = performance.now()
  while (!check()) {
    if (performance.now() - started > ms) throw new Error(`timed out: ${check}`)
    await Bun.sleep(50)
  }
}

test('WORKERS: by default one process per core, face check on or off (issue 34); the embedded database allows one', () => {
  const postgres = { DATABASE_URL: 'postgres://localhost/x' }
  const cores = navigator.hardwareConcurrency
  expect(loadConfig({ ...postgres, FACE_CHECK: '0' }).workers).toBe(cores)
  expect(loadConfig({ ...postgres, FACE_WORKERS: '2' }).workers).toBe(cores)
  expect(loadConfig({ ...postgres }).face.nice).toBe(5)
  expect(loadConfig({ ...postgres, WORKERS: '3' }).workers).toBe(3)
  expect(loadConfig({ DATABASE_URL: '' }).workers).toBe(1)
  expect(() => loadConfig({ DATABASE_URL: '', WORKERS: '2' })).toThrow('WORKERS')
})

let database: Awaited<ReturnType<typeof freshDatabaseUrl>>
let server: ReturnType<typeof Bun.spawn>
const port = await freePort()
const url = `http://127.0.0.1:${port}`

beforeAll(async () => {
  if (!onPostgres) return
  database = await freshDatabaseUrl()
  const env = { ...process.env, DATABASE_URL: database.url, PORT: String(port), PUBLIC_URL: url, APP_URL: url, FACE_CHECK: '0', OFAGE_DEMO: '0', WORKERS: '3', METRICS_PUBLIC: '1', ...withoutEngineOptions }
  server = Bun.spawn(['bun', 'src/index.ts'], { env, stdout: 'ignore', stderr: 'ignore' })
  await waitUntilReady(url, 30_000)
}, 60_000)

afterAll(async () => {
  if (!onPostgres) return
  server?.kill('SIGKILL')
  await database?.drop()
})

test.skipIf(!onPostgres)('a scrape is answered by any one of the workers, and its series say which: none is read into another', async () => {
  await until(() => childrenOf(server.pid).length === 2)
  // A new connection each time, as a scraper's may be: the kernel picks the worker, once the others listen too
  // (they start after the first is ready).
  const workers = new Set<string>()
  const started = performance.now()
  while (workers.size < 2 && performance.now() - started < 20_000) {
    const scrapes = await Promise.all(Array.from({ length: 10 }, () => fetch(`${url}/metrics`, { headers: { connection: 'close' } }).then((r) => r.text())))
    for (const text of scrapes) {
      const samples = text.split('\n').filter((line) => line.startsWith('ofage_'))
      const named = new Set(samples.map((line) => /[{,]worker="(\d+)"/.exec(line)?.[1]))
      expect(named.size).toBe(1)
      workers.add([...named][0]!)
    }
    await Bun.sleep(200)
  }
  expect([...workers].every((worker) => ['0', '1', '2'].includes(worker))).toBe(true)
  expect(workers.size).toBeGreaterThan(1)
}, 30_000)

test.skipIf(!onPostgres)('three workers serve one port; a dead one is started again; when the first is killed outright the others stop', async () => {
  await until(() => childrenOf(server.pid).length === 2)
  const responses = await Promise.all(Array.from({ length: 50 }, () => fetch(`${url}/api/.well-known/jwks.json`).then((r) => r.status)))
  expect(responses.every((status) => status === 200)).toBe(true)
  // Every process runs with the server's engine options (src/ops/engine-options.ts): the first set them, the workers inherit them.
  for (const pid of [server.pid, ...childrenOf(server.pid)]) {
    const environment = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
    for (const [name, value] of Object.entries(ENGINE_OPTIONS)) expect(environment).toContain(`${name}=${value}`)
  }

  const [victim] = childrenOf(server.pid)
  process.kill(victim!, 'SIGKILL')
  await until(() => !alive(victim!))
  await until(() => childrenOf(server.pid).length === 2)
  expect(childrenOf(server.pid)).not.toContain(victim)

  // SIGKILL cannot be forwarded: the workers notice they are orphans and stop.
  const workers = childrenOf(server.pid)
  server.kill('SIGKILL')
  await server.exited
  await until(() => workers.every((pid) => !alive(pid)))
  expect(await fetch(`${url}/healthz`).then(() => 'answered', () => 'refused')).toBe('refused')
}, 60_000)
