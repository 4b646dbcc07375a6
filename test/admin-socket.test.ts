import { afterAll, beforeAll, expect, test } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { basic, freePort, freshDataDir, onPostgres, REDIRECT_URI, waitUntilReady } from './helpers.ts'

/**
 * A real server process on the embedded store, and CLI commands run as separate processes while it
 * holds DATA_DIR: they must go through its admin socket, never open the store themselves.
 */
// A copy of the migrated template: the server finds the store made, as after its first start.
const dataDirCopy = await freshDataDir()
const dataDir = dataDirCopy.path
const port = await freePort()
const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), DATABASE_URL: '', FACE_CHECK: '0', OFAGE_DEMO: '0' }
let server: ReturnType<typeof Bun.spawn> | undefined

/** What `keys show` printed while the server ran. */
let published: { thumbprint: string; source: string; jwk: unknown } | undefined

async function cli(...argv: string[]) {
  return cliWithEnv({}, ...argv)
}

async function cliWithEnv(extra: Record<string, string>, ...argv: string[]) {
  const child = Bun.spawn(['bun', 'src/cli.ts', ...argv], { env: { ...env, ...extra }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { out, err, status }
}

beforeAll(async () => {
  if (onPostgres) return
  server = Bun.spawn(['bun', 'src/index.ts'], { env, stdout: 'ignore', stderr: 'pipe' })
  // A loaded 2-core machine takes more than 10 s to start it (issue 19, Found 8).
  await waitUntilReady(`http://127.0.0.1:${port}`, 30_000)
}, 60_000)

afterAll(() => {
  server?.kill()
  rmSync(dataDir, { recursive: true, force: true })
})

test.skipIf(onPostgres)('clients create against a running embedded server goes through its owner-only admin socket', async () => {
  const socket = join(dataDir, 'admin.sock')
  expect(statSync(socket).mode & 0o777).toBe(0o600)

  const created = await cli('clients', 'create', '--name', 'Socket shop', '--redirect-uri', REDIRECT_URI, '--json')
  expect(created.err).toBe('')
  expect(created.status).toBe(0)
  const client = JSON.parse(created.out)
  expect(client.client_secret).toBeTruthy()

  // The running server knows the client: its secret authenticates over HTTP.
  const usage = await fetch(`http://127.0.0.1:${port}/api/oauth/usage`, { headers: { authorization: basic(client.client_id, client.client_secret) } })
  expect(usage.status).toBe(200)

  // The server migrated at its start: migrate through its socket has nothing left to apply, and says so.
  const migrated = await cli('migrate')
  expect(migrated).toMatchObject({ status: 0, out: expect.stringMatching(/^The database is up to date \(\d+ migrations\)\.\n$/) })

  const listed = await cli('clients', 'list', '--json')
  expect(JSON.parse(listed.out).map((c: { client_id: string }) => c.client_id)).toContain(client.client_id)
  const failing = await cli('clients', 'show', 'cl_nope')
  expect(failing.status).toBe(1)
  expect(failing.err).toContain('no client cl_nope')

  // The server's own key, as its key set publishes it.
  const keys = await cli('keys', 'show', '--json')
  expect(keys.status).toBe(0)
  published = JSON.parse(keys.out)
  const jwks = (await (await fetch(`http://127.0.0.1:${port}/api/.well-known/jwks.json`)).json()) as { keys: unknown[] }
  expect(jwks.keys).toEqual([published!.jwk])
  expect(published!.source).toStartWith('generated ')
  expect(published!.source).toEndWith(`, kept in the embedded database (DATA_DIR=${dataDir})`)
}, 30_000)

test.skipIf(onPostgres)('keys rotate through the socket: the running server signs and publishes the new key at once', async () => {
  const rotated = await cli('keys', 'rotate', '--json')
  expect(rotated.err).toBe('')
  expect(rotated.status).toBe(0)
  const record = JSON.parse(rotated.out)
  expect(record).toMatchObject({ previous: { thumbprint: published!.thumbprint }, instances_agree: true })
  expect(record.instances).toEqual([expect.objectContaining({ pid: server!.pid, signing: true, key: record.thumbprint })])
  const jwks = (await (await fetch(`http://127.0.0.1:${port}/api/.well-known/jwks.json`)).json()) as { keys: unknown[] }
  expect(jwks.keys).toEqual([record.jwk])
  published = record
}, 30_000)

test.skipIf(onPostgres)('SIGTERM stops the server cleanly: exit 0, socket and lock removed', async () => {
  server!.kill('SIGTERM')
  expect(await server!.exited).toBe(0)
  expect(existsSync(join(dataDir, 'admin.sock'))).toBe(false)
  expect(existsSync(join(dataDir, 'ofage.lock'))).toBe(false)
  // With the server gone, a command opens the store itself.
  // The server migrated at its start: migrate through its socket has nothing left to apply, and says so.
  const migrated = await cli('migrate')
  expect(migrated).toMatchObject({ status: 0, out: expect.stringMatching(/^The database is up to date \(\d+ migrations\)\.\n$/) })

  const listed = await cli('clients', 'list', '--json')
  expect(listed.status).toBe(0)
  expect(JSON.parse(listed.out)).toHaveLength(1)

  // The key in force is the database's: a shell with another SIGNING_KEY_FILE is shown that key, not its own.
  const keyFile = join(dataDir, 'other-key.pem')
  writeFileSync(keyFile, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }))
  const shown = await cliWithEnv({ SIGNING_KEY_FILE: keyFile }, 'keys', 'show', '--json')
  expect(shown.status).toBe(0)
  expect(JSON.parse(shown.out)).toMatchObject({ thumbprint: published!.thumbprint, source: published!.source, instances: [] })
  expect(JSON.parse((await cli('keys', 'show', '--json')).out).thumbprint).toBe(published!.thumbprint)
}, 30_000)
