import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import postgres from 'postgres'
import { openDatabase } from '../src/db/client.ts'
import { migrateDatabase } from '../src/db/migrate.ts'
import { migrationFiles } from '../src/db/migrations.ts'
import type { OnStatement } from '../src/db/statement-log.ts'
import type { AgeEstimator } from '../src/estimator/types.ts'
import type { Challenge } from '../src/liveness/challenge.ts'
import { createApp, createHandler } from '../src/app.tsx'
import { startServices } from '../src/boot.ts'
import { loadConfig, type Config } from '../src/config.ts'
import type { MethodClass } from '../src/db/schema.ts'
import { fixedClock } from '../src/lib/clock.ts'
import { silentLogger, type Logger } from '../src/lib/log.ts'
import { createClient } from '../src/clients/registry.ts'
import { type NewClient } from '../src/clients/model.ts'
import { issueCode, type ApprovedCheck } from '../src/oauth/issue-code.ts'
import { randomToken } from '../src/lib/crypto.ts'

/** A new PGlite may write its data directory differently: part of the template's name. */
const pgliteVersion = JSON.parse(readFileSync(join(import.meta.dir, '../node_modules/@electric-sql/pglite/package.json'), 'utf8')).version as string

export const ISSUER = 'https://issuer.ofage.test'
export const PUBLIC_URL = 'http://api.ofage.test'
export const REDIRECT_URI = 'https://shop.example/callback'

/** Where the suite runs: real Postgres when DATABASE_URL is set, else the embedded database in memory. */
export const onPostgres = Boolean(process.env.DATABASE_URL)

/**
 * A TCP port no socket on this machine holds now, as the OS hands one out (bind to port 0): for a server a
 * test starts. A random port could be one a Postgres connection of the test runner holds as its local end,
 * and the server would then never listen (a cluster test waited 30 s for one in CI).
 */
export async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  await probe.stop(true)
  return port
}

/**
 * A database of its own for a test's server: on Postgres a fresh database (as {@link freshDatabaseUrl}); on
 * PGlite a copy of a migrated embedded database (`DATA_DIR`), on tmpfs where there is one. PGlite's initdb
 * costs about 2.5 s a database and the copy 0.1 s (issue 33: 66 files made one each), so the migrated
 * template is made once per set of migrations and kept for the next run; each copy is removed by `drop()`.
 */
export async function freshDatabase(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (onPostgres) {
    const database = await freshDatabaseUrl()
    return { env: { DATABASE_URL: database.url }, drop: database.drop }
  }
  const dataDir = await freshDataDir()
  return { env: { DATA_DIR: dataDir.path }, drop: async () => dataDir.remove() }
}

/**
 * An embedded database of its own, migrated, whatever DATABASE_URL says: for a test of the embedded
 * default itself (a server as `npm start` runs it, a CLI command on DATA_DIR). A copy of the template.
 */
export async function freshDataDir(): Promise<{ path: string; remove(): void }> {
  const template = await pgliteTemplate()
  const path = mkdtempSync(join(dirname(template), 'ofage-test-db-'))
  cpSync(template, path, { recursive: true })
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}

let template: Promise<string> | undefined

/**
 * The migrated embedded database that {@link freshDatabase} copies, named after what it holds (the
 * migrations' text and PGlite's version): built in a folder of its own and renamed into place, so that two
 * test processes building it at once never see half of one.
 */
function pgliteTemplate(): Promise<string> {
  template ??= (async () => {
    const root = existsSync('/dev/shm') ? '/dev/shm' : tmpdir()
    const key = Bun.hash(JSON.stringify([pgliteVersion, Object.entries(migrationFiles)])).toString(36)
    const dir = join(root, `ofage-test-template-${key}`)
    if (existsSync(join(dir, 'migrated'))) return dir
    const building = mkdtempSync(join(root, 'ofage-test-building-'))
    const open = await openDatabase({ kind: 'pglite', dataDir: building }, { holder: 'the test suite' })
    try {
      await migrateDatabase(open)
    } finally {
      await open.close()
    }
    writeFileSync(join(building, 'migrated'), '')
    try {
      renameSync(building, dir)
    } catch {
      // Another test process put its own in place first: the same migrations, so either serves.
      rmSync(building, { recursive: true, force: true })
    }
    return dir
  })()
  return template
}

/**
 * A database of its own for one test file: a fresh database on the Postgres server named by
 * DATABASE_URL (dropped by `drop()`), or an in-memory PGlite.
 */
export async function freshDatabaseUrl(): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = process.env.DATABASE_URL
  if (!serverUrl) return { url: 'memory:', drop: async () => {} }
  const name = `ofage_test_${randomToken(8).toLowerCase().replace(/[^a-z0-9]/g, '')}`
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}

export function testConfig(env: Record<string, string | undefined> = {}): Config {
  // The face check loads models (seconds, hundreds of MB): only the tests that use it turn it on.
  // argon2 at its least for dashboard passwords (production's 64 MiB costs 0.2-0.3 s a hash here, and the
  // dashboard tests make hundreds); a test of that cost itself sets PASSWORD_HASH_MEMORY_KIB again, and a
  // test of production keeps production's (NODE_ENV=production refuses less than 19 MiB).
  const cheapPasswords = env.NODE_ENV === 'production' ? {} : { PASSWORD_HASH_MEMORY_KIB: '8' }
  return loadConfig({ PUBLIC_URL, ISSUER_URL: ISSUER, OFAGE_DEMO: '0', FACE_CHECK: '0', ...cheapPasswords, ...env })
}

export type TestContext = Awaited<ReturnType<typeof createTestContext>>

/** An app on a fresh, migrated database with a frozen clock; requests go through `app.handle`. */
export async function createTestContext(
  options: { env?: Record<string, string>; log?: Logger; estimator?: AgeEstimator; pickChallenge?: () => Challenge; onStatement?: OnStatement } = {},
) {
  const database = await freshDatabase()
  const clock = fixedClock('2026-11-22T12:00:00.000Z')
  const config = testConfig({ ...database.env, ...options.env })
  const services = await startServices(config, { clock, log: options.log ?? silentLogger, pickChallenge: options.pickChallenge, onStatement: options.onStatement })
  const deps = { ...services.deps, ...(options.estimator && { estimator: options.estimator }) }
  const app = createApp(deps)
  const handle = createHandler(deps, app)

  const context = {
    app,
    /** The server's handler: the app plus request ids, request logs and metrics. */
    handle,
    deps,
    clock,
    config,
    request(path: string, init?: RequestInit) {
      return handle(new Request(`${PUBLIC_URL}${path}`, init))
    },
    async createClient(input: Partial<NewClient> = {}) {
      const { client, secret } = await createClient(deps, { name: 'Test shop', redirectUris: [REDIRECT_URI], ...input })
      return { client, secret, id: client.id, authorization: basic(client.id, secret) }
    },
    issueCode(check: Partial<ApprovedCheck> & { clientId: string }) {
      return issueCode(deps, { redirectUri: REDIRECT_URI, ageOver: 18, methodClass: 'age_only' as MethodClass, ...check })
    },
    exchange(authorization: string, body: Record<string, unknown>) {
      return context.request('/api/oauth/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify(body),
      })
    },
    /** Issues a code and exchanges it: the whole back-channel in one call. */
    async tokenFor(client: { id: string; authorization: string }, check: Partial<ApprovedCheck> = {}) {
      const { code } = await context.issueCode({ clientId: client.id, state: 'st', ...check })
      const response = await context.exchange(client.authorization, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: check.redirectUri ?? REDIRECT_URI,
        state: check.state === undefined ? 'st' : check.state ?? undefined,
      })
      if (response.status !== 200) throw new Error(`exchange failed: ${response.status} ${await response.text()}`)
      return (await response.json()) as { access_token: string; transaction_id: string; token_type: string; expires_in: number }
    },
    async close() {
      await services.close()
      await database.drop()
    },
  }
  return context
}

/** `Authorization: Basic` with RFC 6749 §2.3.1 form-encoding of both parts. */
export function basic(clientId: string, secret: string, encode = true): string {
  const part = (value: string) => (encode ? encodeURIComponent(value).replaceAll('%20', '+') : value)
  return `Basic ${Buffer.from(`${part(clientId)}:${part(secret)}`).toString('base64')}`
}

export async function json(response: Response): Promise<any> {
  const type = response.headers.get('content-type') ?? ''
  if (!type.includes('application/json')) throw new Error(`expected JSON, got ${type}: ${await response.text()}`)
  return response.json()
}

/** Rows of a raw query (src/db/rows.ts). */
export { queryRows } from '../src/db/rows.ts'

/**
 * Waits, when a fixed rate-limit window of `windowMs` ends within `marginMs`, until the next one has begun: the
 * limits count in windows aligned to the clock (src/ratelimit/limits.ts), so a test that expects its second hit
 * refused must not straddle a window's edge, where the count starts again (CI saw a 200 for a 429 so once).
 */
export async function awayFromWindowEdge(windowMs = 60_000, marginMs = 10_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs)
  if (left < marginMs) await Bun.sleep(left + 50)
}

/** Polls a running server's /readyz until it answers 200; returns how long that took. */
export async function waitUntilReady(baseUrl: string, ms = 15_000): Promise<number> {
  const started = performance.now()
  while (performance.now() - started < ms) {
    if (await fetch(`${baseUrl}/readyz`).then((r) => r.ok, () => false)) return performance.now() - started
    await Bun.sleep(100)
  }
  throw new Error(`${baseUrl} not ready after ${ms} ms`)
}

/**
 * A server process as `bun start` runs it (`bun src/index.ts`), with `env` over this process's, ready to
 * answer (a variable set to undefined is left out); `pid` is the process started, `stop()` sends SIGTERM and
 * waits for it to exit. For tests of what only a real server does (Bun's static routes, socket addresses, the
 * engine's options); the caller owns the database in `env`.
 */
export async function startServerProcess(env: Record<string, string | undefined>): Promise<{ pid: number; stop(): Promise<void> }> {
  const child = Bun.spawn(['bun', 'src/index.ts'], { env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'ignore' })
  try {
    await waitUntilReady(`http://127.0.0.1:${env.PORT}`, 30_000)
  } catch (cause) {
    child.kill('SIGTERM')
    await child.exited
    throw cause
  }
  return {
    pid: child.pid,
    async stop() {
      child.kill('SIGTERM')
      await child.exited
    },
  }
}
