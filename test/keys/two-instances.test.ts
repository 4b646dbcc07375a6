import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLocalJWKSet, jwtVerify } from 'jose'
import { OfageClient } from 'ofage/client'
import { startServices, type Services } from '../../src/boot.ts'
import { silentLogger } from '../../src/lib/log.ts'
import { createClient } from '../../src/clients/registry.ts'
import { issueCode } from '../../src/oauth/issue-code.ts'
import { basic, freePort, freshDatabaseUrl, onPostgres, REDIRECT_URI, testConfig, waitUntilReady } from '../helpers.ts'

/**
 * Issue 32 with real servers: two instances on one Postgres database, each with its own SIGNING_KEY_FILE,
 * as behind a load balancer. Another key stops start-up in one line; `keys rotate --file` switches both at
 * once; one whose file was not updated stops signing and leaves the load balancer's rotation (/readyz).
 */
const ISSUER = 'https://issuer.ofage.test'
const dir = mkdtempSync(join(tmpdir(), 'ofage-two-instances-'))
const pem = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
const modulusOf = (key: string) => createPublicKey(key).export({ format: 'jwk' }).n!
const files = [join(dir, 'one.pem'), join(dir, 'two.pem')]
const k1 = pem()
for (const file of files) writeFileSync(file, k1)

type Server = { process: ReturnType<typeof Bun.spawn>; url: string; log: string[]; drained: Promise<void> }
let database: Awaited<ReturnType<typeof freshDatabaseUrl>>
let services: Services
const servers: Server[] = []
let client: { id: string; secret: string }

function envFor(extra: Record<string, string>) {
  return { ...process.env, DATABASE_URL: database.url, ISSUER_URL: ISSUER, FACE_CHECK: '0', OFAGE_DEMO: '0', WORKERS: '1', SIGNING_KEY_FILE: '', ...extra }
}

async function spawnServer(file: string | undefined): Promise<Server> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = Bun.spawn(['bun', 'src/index.ts'], { env: envFor({ PORT: String(port), PUBLIC_URL: url, ...(file && { SIGNING_KEY_FILE: file }) }), stdout: 'ignore', stderr: 'pipe' })
  const log: string[] = []
  const drained = (async () => {
    for await (const chunk of child.stderr as ReadableStream<Uint8Array>) log.push(new TextDecoder().decode(chunk))
  })()
  return { process: child, url, log, drained }
}

async function cli(...argv: string[]) {
  const child = Bun.spawn(['bun', 'src/cli.ts', ...argv], { env: envFor({}), stdout: 'pipe', stderr: 'pipe' })
  const [out, err, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { out, err, status, json: () => JSON.parse(out) }
}

/** Issues a code as the page would, and exchanges it at one instance. */
async function exchangeAt(server: Server, code?: string) {
  code ??= (await issueCode(services.deps, { clientId: client.id, redirectUri: REDIRECT_URI, state: 's', ageOver: 18, methodClass: 'age_only' })).code
  const response = await fetch(`${server.url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic(client.id, client.secret) },
    body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 's' }),
  })
  return { code, status: response.status, body: (await response.json()) as Record<string, string> }
}

const validateAt = async (server: Server, token: string) => (await fetch(`${server.url}/api/verify/token/${token}`)).status
const jwksAt = async (server: Server) => (await (await fetch(`${server.url}/api/.well-known/jwks.json`)).json()) as { keys: { n: string; kid: string }[] }

/** A start that must be refused: its exit status and what it printed (one that serves is stopped after 20 s). */
async function refusedStart(file: string | undefined) {
  const server = await spawnServer(file)
  const timer = setTimeout(() => server.process.kill('SIGTERM'), 20_000)
  const status = await server.process.exited
  clearTimeout(timer)
  await server.drained
  return { status, stderr: server.log.join('') }
}

beforeAll(async () => {
  if (!onPostgres) return
  database = await freshDatabaseUrl()
  for (const file of files) {
    const server = await spawnServer(file)
    servers.push(server)
    await waitUntilReady(server.url, 30_000)
  }
  services = await startServices(testConfig({ DATABASE_URL: database.url }), { log: silentLogger, serve: false })
  const created = await createClient(services.deps, { name: 'Balanced shop', redirectUris: [REDIRECT_URI] })
  client = { id: created.client.id, secret: created.secret }
}, 90_000)

afterAll(async () => {
  for (const server of servers) server.process.kill('SIGTERM')
  await Promise.all(servers.map((server) => server.process.exited))
  await services?.close()
  await database?.drop()
  rmSync(dir, { recursive: true, force: true })
})

describe.skipIf(!onPostgres)('two instances, each with its own SIGNING_KEY_FILE', () => {
  test('another key file, or none, stops start-up with one line naming SIGNING_KEY_FILE; the two that run agree', async () => {
    const otherFile = join(dir, 'other.pem')
    writeFileSync(otherFile, pem())
    for (const [file, line] of [
      [otherFile, `ofage: configuration error: SIGNING_KEY_FILE (${otherFile}) holds the key `],
      [undefined, 'ofage: configuration error: SIGNING_KEY_FILE is not set, but this deployment signs with a key from a file ('],
    ] as const) {
      const refused = await refusedStart(file)
      expect(refused.status).toBe(1)
      expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(refused.stderr).toStartWith(line)
    }
    // Behind a load balancer: one key in both sets, and a token of either instance valid at both.
    const [a, b] = await Promise.all(servers.map(jwksAt))
    expect(a).toEqual(b!)
    expect(a!.keys.map((key) => key.n)).toEqual([modulusOf(k1)])
    for (const [from, to] of [[servers[0]!, servers[1]!], [servers[1]!, servers[0]!]] as const) {
      const { body } = await exchangeAt(from)
      expect(await validateAt(to, body.access_token!)).toBe(200)
    }
    const shown = await cli('keys', 'show', '--json')
    expect(shown.status).toBe(0)
    expect(shown.json()).toMatchObject({ source: `SIGNING_KEY_FILE=${files[0]}`, instances_agree: true })
    expect(shown.json().instances.map((i: { pid: number; signing: boolean }) => [i.pid, i.signing]).sort()).toEqual(servers.map((s) => [s.process.pid, true]).sort())
  }, 60_000)

  test('keys rotate --file switches both at once; an integrator through the load balancer fetches the set once more', async () => {
    let turn = 0
    const jwksRequests: string[] = []
    const balanced: typeof fetch = Object.assign(
      (input: RequestInfo | URL, init?: RequestInit) => {
        const url = new URL(String(input))
        const target = servers[turn++ % 2]!
        if (url.pathname.endsWith('/jwks.json')) jwksRequests.push(target.url)
        return fetch(`${target.url}${url.pathname}${url.search}`, init)
      },
      { preconnect: fetch.preconnect },
    )
    const site = new OfageClient({ baseUrl: servers[0]!.url, clientId: client.id, clientSecret: client.secret, fetch: balanced })
    const before = (await exchangeAt(servers[1]!)).body.access_token!
    expect((await site.verifyAgeToken(before, { minimumAge: 18 })).ok).toBe(true)

    // Step 1: the new key into every instance's file. They go on signing with the key they loaded.
    const k2 = pem()
    for (const file of files) writeFileSync(file, k2)
    expect((await jwksAt(servers[0]!)).keys[0]!.n).toBe(modulusOf(k1))

    // Step 2: keys rotate --file, from any shell that reaches the database. It returns once both answered.
    const started = performance.now()
    const rotated = await cli('keys', 'rotate', '--file', files[0]!, '--json')
    const rotateMs = performance.now() - started
    expect(rotated.status).toBe(0)
    const record = rotated.json()
    expect(record).toMatchObject({ instances_agree: true, previous: { thumbprint: expect.any(String) } })
    expect(record.instances.map((i: { signing: boolean; key: string }) => i.signing && i.key === record.thumbprint)).toEqual([true, true])
    for (const server of servers) expect((await jwksAt(server)).keys.map((key) => key.n)).toEqual([modulusOf(k2)])
    // When each instance switched, by its own log line, after the record's `since`.
    const switchedAfter = servers.map((server) => {
      const line = server.log.join('').split('\n').find((l) => l.includes('"event":"signing_key_switched"') && l.includes(record.thumbprint))!
      return Date.parse(JSON.parse(line).time) - Date.parse(record.in_force_since)
    })
    for (const ms of switchedAfter) expect(ms).toBeLessThan(1000)
    if (process.env.OFAGE_TIMINGS) console.error(`keys rotate --file: ${rotateMs.toFixed(0)} ms in all; instances switched ${switchedAfter.join(' and ')} ms after the record committed`)

    // New tokens verify with the new key at both; the token signed before still validates at our API.
    const after = (await exchangeAt(servers[0]!)).body.access_token!
    expect((await jwtVerify(after, createLocalJWKSet(await jwksAt(servers[1]!)), { issuer: ISSUER })).payload.aud).toBe(client.id)
    for (const server of servers) expect([await validateAt(server, after), await validateAt(server, before)]).toEqual([200, 200])
    const requestsBefore = jwksRequests.length
    expect((await site.verifyAgeToken(after, { minimumAge: 18 })).ok).toBe(true)
    expect(jwksRequests.length - requestsBefore).toBe(1)
  }, 60_000)

  test('an instance whose file was not updated stops signing at the rotation, and keys show names it; restarted, it is refused until its file is right', async () => {
    const k3 = pem()
    writeFileSync(files[0]!, k3)
    const rotated = await cli('keys', 'rotate', '--file', files[0]!, '--json')
    expect(rotated.status).toBe(0)
    expect(rotated.json().instances_agree).toBe(false)
    const stale = servers[1]!
    const staleReport = rotated.json().instances.find((i: { pid: number }) => i.pid === stale.process.pid)
    expect(staleReport).toMatchObject({ signing: false, source: 'file' })
    expect(rotated.out).toContain(`"thumbprint": "${rotated.json().thumbprint}"`)

    // Out of the load balancer's rotation, and no token from it; the code is still good elsewhere.
    const ready = await fetch(`${stale.url}/readyz`)
    expect(ready.status).toBe(503)
    expect(((await ready.json()) as { checks: Record<string, boolean> }).checks.signing_key).toBe(false)
    const refused = await exchangeAt(stale)
    expect(refused).toMatchObject({ status: 500, body: { error: 'server_error' } })
    const served = await exchangeAt(servers[0]!, refused.code)
    expect(served.status).toBe(200)
    expect(stale.log.join('')).toContain('"event":"signing_key_not_in_force"')
    const shown = await cli('keys', 'show')
    expect(shown.out).toContain('instances: 1 of 2 do not sign with this key')
    expect(shown.out).toContain(`pid ${stale.process.pid}: NOT SIGNING`)

    // Restarted with the old file it does not start; with the new key it does, and the two agree again.
    stale.process.kill('SIGTERM')
    await stale.process.exited
    const again = await refusedStart(files[1])
    expect(again.status).toBe(1)
    expect(again.stderr).toContain('ofage: configuration error: SIGNING_KEY_FILE')
    writeFileSync(files[1]!, k3)
    servers[1] = await spawnServer(files[1])
    await waitUntilReady(servers[1].url, 30_000)
    expect((await cli('keys', 'show', '--json')).json().instances_agree).toBe(true)
    expect(await validateAt(servers[1], served.body.access_token!)).toBe(200)
  }, 90_000)
})
