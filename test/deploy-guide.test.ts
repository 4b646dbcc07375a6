import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { randomToken } from '../src/lib/crypto.ts'
import { MAX_MULTIPART_BYTES } from '../src/lib/strict-request.ts'
import { makeCertificate, NGINX } from './gate/proxy-harness.ts'
import { awayFromWindowEdge, basic, freePort, freshDatabase, freshDataDir, REDIRECT_URI, waitUntilReady } from './helpers.ts'
import { callback, testBrowser } from './verification/browser.ts'

/**
 * docs/deploy.md, run as written (issue 32, item 5: an operator who followed it literally found no nginx
 * configuration for the service, a systemd example on 0.0.0.0 without TRUST_PROXY, and no backup section):
 * the environment file and the nginx site in front of a real server process, and both backup procedures.
 * Each snippet is the guide's own text with only what a test must change (ports, paths, database names,
 * `systemctl`), and a change fails loudly when the snippet no longer holds what it replaces.
 */
const guide = readFileSync(join(import.meta.dir, '..', 'docs', 'deploy.md'), 'utf8')
const workDir = mkdtempSync(join(tmpdir(), 'ofage-deploy-guide-'))
const hasCurl = Bun.which('curl') !== null
const hasNginx = existsSync(NGINX) && hasCurl
const hasPgTools = ['pg_dump', 'pg_restore', 'createdb'].every((tool) => Bun.which(tool) !== null)
/** The Postgres server of the suite's Postgres run, else the machine's own (trust auth, user postgres). */
const POSTGRES_SERVER = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres'
async function answers(url: string): Promise<boolean> {
  const probe = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} })
  try {
    await probe`select 1`
    return true
  } catch {
    return false
  } finally {
    await probe.end({ timeout: 1 })
  }
}
const postgresUp = hasPgTools && (await answers(POSTGRES_SERVER))
for (const [missing, what] of [
  [!hasNginx, `the nginx site (needs nginx at ${NGINX} and curl: apt-get install nginx curl)`],
  [!postgresUp, `the Postgres backup (needs pg_dump, pg_restore, createdb and a server at ${new URL(POSTGRES_SERVER).host}: apt-get install postgresql-client)`],
] as const) {
  if (!missing) continue
  if (process.env.CI) throw new Error(`docs/deploy.md: ${what}`)
  console.warn(`docs/deploy.md: skipped ${what}`)
}

afterAll(() => rmSync(workDir, { recursive: true, force: true }))

/** The code block after `<!-- snippet: name -->`. */
function snippet(name: string): string {
  const match = new RegExp(`<!-- snippet: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(guide)
  if (!match) throw new Error(`docs/deploy.md has no snippet "${name}"`)
  return match[1]!
}

/** Replaces each `from` with its `to`, and fails when the text no longer holds what a test replaces. */
function substitute(text: string, replacements: [from: string, to: string][]): string {
  let result = text
  for (const [from, to] of replacements) {
    if (!result.includes(from)) throw new Error(`the snippet no longer contains ${JSON.stringify(from)}:\n${text}`)
    result = result.replaceAll(from, to)
  }
  return result
}

/** Every process a test started, stopped if the test process ends without its cleanup. */
const children = new Set<ReturnType<typeof Bun.spawn>>()
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL')
})

async function stopChild(child: ReturnType<typeof Bun.spawn>): Promise<void> {
  child.kill('SIGTERM')
  if (!(await Promise.race([child.exited.then(() => true), Bun.sleep(15_000).then(() => false)]))) child.kill('SIGKILL')
  await child.exited
  children.delete(child)
}

type Service = { baseUrl: string; stop(): Promise<void>; log(): Record<string, unknown>[] }

/** The server as `ofage` runs it (`bun src/index.ts`), with this environment only, its log kept in a file. */
async function startService(env: Record<string, string>): Promise<Service> {
  const logFile = join(workDir, `service-${randomToken(6)}.log`)
  const child = Bun.spawn(['bun', 'src/index.ts'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? workDir, ...env }, stdout: 'ignore', stderr: Bun.file(logFile) })
  children.add(child)
  const baseUrl = `http://127.0.0.1:${env.PORT}`
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '').split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>)
  try {
    await waitUntilReady(baseUrl, 30_000)
  } catch (cause) {
    await stopChild(child)
    throw new Error(`${(cause as Error).message}: ${readFileSync(logFile, 'utf8')}`)
  }
  return { baseUrl, log, stop: () => stopChild(child) }
}

async function cli(env: Record<string, string>, ...argv: string[]): Promise<{ status: number; out: string; err: string }> {
  const child = Bun.spawn(['bun', 'src/cli.ts', ...argv], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? workDir, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { status, out, err }
}

async function sh(script: string, env: Record<string, string> = {}): Promise<string> {
  const child = Bun.spawn(['sh', '-ec', script], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (status !== 0) throw new Error(`${script}\nexited ${status}: ${err}`)
  return out
}

/** The environment the service gets besides its database: quick to start, no demo, no face models. */
const quick = { OFAGE_DEMO: '0', FACE_CHECK: '0' }

/**
 * What a backup must carry: a client, made with the CLI, and one approved verification on the hosted page,
 * exchanged for a token; and the key set the service published.
 */
async function makeRecords(service: Service, env: Record<string, string>) {
  const created = await cli(env, 'clients', 'create', '--name', 'Backed-up shop', '--redirect-uri', REDIRECT_URI, '--sandbox', '--json')
  expect(created).toMatchObject({ status: 0, err: '' })
  const client = JSON.parse(created.out) as { client_id: string; client_secret: string }
  const browser = testBrowser({ baseUrl: service.baseUrl })
  const { page } = await browser.open({ client_id: client.client_id, state: 'backup' })
  const back = callback(await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' }))!
  const exchange = await fetch(`${service.baseUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic(client.client_id, client.client_secret) },
    body: JSON.stringify({ grant_type: 'authorization_code', code: back.code, redirect_uri: REDIRECT_URI, state: 'backup' }),
  })
  expect(exchange.status).toBe(200)
  const token = (await exchange.json()) as { access_token: string; transaction_id: string }
  const keySet = await (await fetch(`${service.baseUrl}/api/.well-known/jwks.json`)).json()
  return { client, token, keySet }
}

/** The service on the restored database has all of it: the client, its secret, the audit row, the token, the key. */
async function expectRestored(service: Service, env: Record<string, string>, records: Awaited<ReturnType<typeof makeRecords>>) {
  const { client, token, keySet } = records
  expect(service.log().find((line) => line.event === 'migrations')).toMatchObject({ applied: 0 })
  expect(await (await fetch(`${service.baseUrl}/api/.well-known/jwks.json`)).json()).toEqual(keySet)
  // The secret authenticates (its HMAC key came back too): a made-up code is then invalid_grant, not invalid_client.
  const authenticated = await fetch(`${service.baseUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic(client.client_id, client.client_secret) },
    body: JSON.stringify({ grant_type: 'authorization_code', code: 'made-up', redirect_uri: REDIRECT_URI, state: 'backup' }),
  })
  expect((await authenticated.json()) as unknown).toMatchObject({ error: 'invalid_grant' })
  const validated = (await (await fetch(`${service.baseUrl}/api/verify/token/${token.access_token}`)).json()) as Record<string, unknown>
  expect(validated).toMatchObject({ valid: true, transaction_id: token.transaction_id, client_id: client.client_id })
  const audit = await cli(env, 'audit', 'show', token.transaction_id, '--json')
  expect(audit.status).toBe(0)
  expect(JSON.parse(audit.out)).toMatchObject({ transaction_id: token.transaction_id, client_id: client.client_id })
}

const today = (await sh('date +%F')).trim()

describe('docs/deploy.md: the environment file and the nginx site', () => {
  test.skipIf(!hasNginx)('behind nginx over TLS: each visitor counted by their own address, ofage on loopback only, bodies passed on unbuffered', async () => {
    const documented = Object.fromEntries(
      snippet('env-file')
        .split('\n')
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    )
    expect({ HOST: documented.HOST, TRUST_PROXY: documented.TRUST_PROXY }).toEqual({ HOST: '127.0.0.1', TRUST_PROXY: '1' })

    const dir = mkdtempSync(join(workDir, 'nginx-'))
    const [port, port80, ofagePort] = [await freePort(), await freePort(), await freePort()]
    const certificate = await makeCertificate(dir, ['age.example.com'])
    const site = substitute(snippet('nginx-service'), [
      ['listen 443 ssl;', `listen 127.0.0.1:${port} ssl;`],
      ['listen 80;', `listen 127.0.0.1:${port80};`],
      ['/etc/letsencrypt/live/age.example.com/fullchain.pem', certificate.cert],
      ['/etc/letsencrypt/live/age.example.com/privkey.pem', certificate.key],
      ['127.0.0.1:3000', `127.0.0.1:${ofagePort}`],
    ])
    const temp = (name: string) => `${name}_temp_path ${join(dir, name)};`
    // One process, unprivileged, in a folder of its own (the gate's harness does the same).
    const conf = ['master_process off;', `pid ${join(dir, 'nginx.pid')};`, `error_log ${join(dir, 'error.log')} info;`, 'events { worker_connections 64; }', 'http {', `access_log ${join(dir, 'access.log')};`, ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp), site, '}'].join('\n')
    writeFileSync(join(dir, 'nginx.conf'), conf)
    const nginx = Bun.spawn([NGINX, '-p', `${dir}/`, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdout: 'ignore', stderr: Bun.file(join(dir, 'stderr.log')) })
    children.add(nginx)

    const database = await freshDatabase()
    const env = {
      ...quick,
      ...database.env,
      HOST: documented.HOST!,
      TRUST_PROXY: documented.TRUST_PROXY!,
      NODE_ENV: documented.NODE_ENV!,
      PORT: String(ofagePort),
      PUBLIC_URL: `https://age.example.com:${port}`,
      // One new session a minute per address: a second visit from one address is refused, another address is not.
      RATE_LIMIT_SESSIONS: '1',
    }
    const service = await startService(env)
    try {
      const created = await cli(env, 'clients', 'create', '--name', 'Proxied shop', '--redirect-uri', REDIRECT_URI, '--sandbox', '--json')
      const clientId = (JSON.parse(created.out) as { client_id: string }).client_id
      const page = `/?${new URLSearchParams({ client_id: clientId, redirect_uri: REDIRECT_URI, state: 'proxied' })}`
      /** A visitor at `from` (a loopback address of its own) through nginx: the status and ofage's request id. */
      const visit = async (from: string, path: string, extra: string[] = []) => {
        const out = await sh(
          `curl -s -o /dev/null -w '%{http_code} %header{x-request-id}' --interface ${from} --cacert ${certificate.cert} --resolve age.example.com:${port}:127.0.0.1 ${extra.join(' ')} 'https://age.example.com:${port}${path}'`,
        )
        const [status, requestId] = out.trim().split(' ')
        return { status: Number(status), requestId }
      }
      for (let tries = 0; (await visit('127.0.0.5', '/healthz').catch(() => ({ status: 0 }))).status !== 200; tries++) {
        if (tries > 100) throw new Error(`nginx did not answer: ${readFileSync(join(dir, 'error.log'), 'utf8')}`)
        await Bun.sleep(100)
      }

      await awayFromWindowEdge()
      const first = await visit('127.0.0.2', page)
      expect(first.status).toBe(200)
      // nginx's $request_id (32 hex digits) reached ofage, which answered with it.
      expect(first.requestId).toMatch(/^[0-9a-f]{32}$/)
      expect((await visit('127.0.0.2', page)).status).toBe(429)
      // What the visitor writes in X-Forwarded-For comes before nginx's own entry, which ofage takes.
      expect((await visit('127.0.0.2', page, ["-H 'X-Forwarded-For: 198.51.100.7'"])).status).toBe(429)
      // Another visitor is another address: not refused with the first (without TRUST_PROXY both were 127.0.0.1).
      expect((await visit('127.0.0.3', page)).status).toBe(200)

      // HOST=127.0.0.1: no answer on any other address of this machine.
      expect(await fetch(`http://127.0.0.2:${ofagePort}/healthz`).then(() => 'answered', () => 'refused')).toBe('refused')

      // A body as large as the face check's frames reaches ofage as it arrives, never written to nginx's
      // temporary files (nginx says so in its log when it does); one over client_max_body_size never reaches it.
      const documentedLimit = Number(/client_max_body_size (\d+)m;/.exec(snippet('nginx-service'))![1]) * 1024 * 1024
      expect(documentedLimit).toBeGreaterThanOrEqual(MAX_MULTIPART_BYTES + 64 * 1024)
      // The post is the sandbox form of a session of its own, with 2 MiB of "frames" beside its fields: ofage
      // reads the whole body, as a face check's, and approves (303 to the callback).
      writeFileSync(join(dir, 'frames.bin'), Buffer.alloc(2 * 1024 * 1024, 7))
      const jar = join(dir, 'cookies.txt')
      const html = await sh(`curl -s --interface 127.0.0.4 -c ${jar} --cacert ${certificate.cert} --resolve age.example.com:${port}:127.0.0.1 'https://age.example.com:${port}${page}'`)
      const action = /<form[^>]*action="([^"]*\/methods\/sandbox[^"]*)"/.exec(html)![1]!.replaceAll('&amp;', '&')
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!
      const form = ['-b', jar, '-H', `'Origin: https://age.example.com:${port}'`, '-F', `'csrf=${csrf}'`, '-F', 'age=30', '-F', 'method_class=age_only', '-F', `frames=@${join(dir, 'frames.bin')}`]
      const posted = await visit('127.0.0.4', action, form)
      expect(posted.status).toBe(303)
      expect(posted.requestId).toMatch(/^[0-9a-f]{32}$/)
      writeFileSync(join(dir, 'too-large.bin'), Buffer.alloc(documentedLimit + 1024, 7))
      expect((await visit('127.0.0.4', '/healthz', ['-X POST', `--data-binary @${join(dir, 'too-large.bin')}`])).status).toBe(413)
      expect(readFileSync(join(dir, 'error.log'), 'utf8')).not.toContain('buffered to a temporary file')
    } finally {
      await service.stop()
      await stopChild(nginx)
      await database.drop()
    }
  }, 90_000)
})

describe('docs/deploy.md: backup and restore', () => {
  test.skipIf(!postgresUp)('Postgres: pg_dump while it serves, pg_restore into a new database, and the service there has the client, the audit row and the same key', async () => {
    const server = new URL(POSTGRES_SERVER)
    const names = { source: `ofage_backup_${randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, '')}`, restored: `ofage_restored_${randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, '')}` }
    const urlOf = (name: string) => Object.assign(new URL(POSTGRES_SERVER), { pathname: `/${name}` }).toString()
    const admin = postgres(POSTGRES_SERVER, { max: 1, onnotice: () => {} })
    await admin.unsafe(`create database ${names.source}`)
    const port = await freePort()
    const env = { ...quick, DATABASE_URL: urlOf(names.source), PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` }
    let service = await startService(env)
    try {
      const records = await makeRecords(service, env)
      const [dump, restore] = snippet('backup-postgres').split('# restore\n') as [string, string]
      const backups = mkdtempSync(join(workDir, 'backups-'))
      // While it serves: pg_dump reads one snapshot.
      await sh(substitute(dump, [['/var/backups/', `${backups}/`]]), { DATABASE_URL: env.DATABASE_URL })
      await service.stop()
      const restored = { ...env, DATABASE_URL: urlOf(names.restored) }
      await sh(
        substitute(restore, [
          ['--host=db.internal --username=postgres --owner=ofage ofage_restored', `--host=${server.hostname} --port=${server.port || 5432} --username=${server.username || 'postgres'} ${names.restored}`],
          ['postgres://ofage:…@db.internal:5432/ofage_restored', restored.DATABASE_URL],
          ['/var/backups/ofage-2026-11-22.dump', `${backups}/ofage-${today}.dump`],
        ]),
        server.password ? { PGPASSWORD: decodeURIComponent(server.password) } : {},
      )
      service = await startService(restored)
      await expectRestored(service, restored, records)
    } finally {
      await service.stop()
      for (const name of Object.values(names)) await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    }
  }, 90_000)

  test('the embedded database: stop, copy pgdata, start; a later change is undone by the restore, and the service has the client, the audit row and the same key', async () => {
    const dataDir = await freshDataDir()
    const port = await freePort()
    const env = { ...quick, DATABASE_URL: '', DATA_DIR: dataDir.path, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` }
    let service: Service | undefined = await startService(env)
    const backups = mkdtempSync(join(workDir, 'backups-'))
    /** The guide's lines in order: `systemctl` stops and starts this service, the rest runs in sh. */
    const runLines = async (lines: string) => {
      for (const line of lines.split('\n').filter((text) => text && !text.startsWith('#'))) {
        if (line === 'sudo systemctl stop ofage') {
          await service?.stop()
          service = undefined
        } else if (line === 'sudo systemctl start ofage') {
          service = await startService(env)
        } else {
          const user = `${process.getuid?.()}:${process.getgid?.()}`
          await sh(
            line
              .replace(/^sudo /, '')
              .replaceAll('/var/lib/ofage', dataDir.path)
              .replaceAll('/var/backups/ofage-2026-11-22.tar.gz', `${backups}/ofage-${today}.tar.gz`)
              .replaceAll('/var/backups/', `${backups}/`)
              .replace('chown -R ofage:ofage', `chown -R ${user}`),
          )
        }
      }
    }
    try {
      const records = await makeRecords(service, env)
      const [backup, restore] = snippet('backup-embedded').split('# restore\n') as [string, string]
      for (const expected of ['sudo systemctl stop ofage', 'sudo systemctl start ofage', '/var/lib/ofage', '/var/backups/ofage-2026-11-22.tar.gz', 'chown -R ofage:ofage']) {
        expect(snippet('backup-embedded')).toContain(expected)
      }
      await runLines(backup)
      expect(existsSync(`${backups}/ofage-${today}.tar.gz`)).toBe(true)
      // A change after the backup: the restore undoes it.
      const later = JSON.parse((await cli(env, 'clients', 'create', '--name', 'Made after the backup', '--redirect-uri', REDIRECT_URI, '--json')).out) as { client_id: string }
      await runLines(restore)
      expect(existsSync(join(dataDir.path, 'pgdata.before-restore'))).toBe(true)
      await expectRestored(service!, env, records)
      expect(await cli(env, 'clients', 'show', later.client_id)).toMatchObject({ status: 1, err: expect.stringContaining(`no client ${later.client_id}`) })
    } finally {
      await (service as Service | undefined)?.stop()
      dataDir.remove()
    }
  }, 90_000)
})
