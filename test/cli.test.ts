import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importSPKI, jwtVerify } from 'jose'
import { sql } from 'drizzle-orm'
import pkg from '../package.json' with { type: 'json' }
import { createApp } from '../src/app.tsx'
import { startServices, type Services } from '../src/boot.ts'
import { runCli } from '../src/cli/run.ts'
import type { Config } from '../src/config.ts'
import { ConfigError } from '../src/errors.ts'
import { fixedClock, type Clock } from '../src/lib/clock.ts'
import { silentLogger } from '../src/lib/log.ts'
import { issueCode } from '../src/oauth/issue-code.ts'
import { recordServerAddresses } from '../src/ops/server-addresses.ts'
import type { Database } from '../src/db/client.ts'
import { migrationJournal } from '../src/db/migrations.ts'
import { basic, freshDatabase, freshDatabaseUrl, ISSUER, json, onPostgres, PUBLIC_URL, queryRows, REDIRECT_URI, testConfig } from './helpers.ts'

/**
 * The CLI opens the database itself, as an operator's shell would: on a fresh Postgres database, or on
 * an embedded store in a temporary DATA_DIR (one opener at a time, so services are opened per step).
 */
let config: Config
let dataDir: string
let dropDatabase: () => Promise<void>
/** A configuration whose database cannot be opened: its DATA_DIR is held by a live process (the runner's parent). */
let unopenable: Config
let lockedDir: string

beforeAll(async () => {
  // On PGlite a copy of the migrated template (tmpfs): each command opens it as an operator's shell would.
  const database = await freshDatabase()
  dataDir = database.env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'ofage-cli-'))
  dropDatabase = database.drop
  config = testConfig({ DATA_DIR: dataDir, ...database.env })
  lockedDir = mkdtempSync(join(tmpdir(), 'ofage-cli-locked-'))
  writeFileSync(join(lockedDir, 'ofage.lock'), JSON.stringify({ pid: process.ppid, holder: 'the ofage server' }))
  unopenable = testConfig({ DATA_DIR: lockedDir })
})
afterAll(async () => {
  await dropDatabase()
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(lockedDir, { recursive: true, force: true })
})

/**
 * Commands and services still running. A test that times out is abandoned, not stopped: its command goes
 * on holding the embedded store, and every later test would fail on the lock (issue 19, Found 8). Each
 * test therefore ends only when what it started has closed the store.
 */
const inFlight = new Set<Promise<unknown>>()
afterEach(async () => {
  await Promise.allSettled(inFlight)
}, 60_000)

function tracked<T>(work: Promise<T>): Promise<T> {
  inFlight.add(work)
  return work.finally(() => inFlight.delete(work))
}

async function cli(...argv: string[]) {
  return cliWith(config, ...argv)
}

async function cliWith(target: Config, ...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const status = await tracked(runCli(argv, target, { out: (text) => out.push(text), err: (text) => err.push(text) }))
  return { status, out: out.join('\n'), err: err.join('\n'), json: () => JSON.parse(out.join('\n')) }
}

function withServices<T>(use: (services: Services) => Promise<T>, options: { config?: Config; clock?: Clock } = {}): Promise<T> {
  return tracked(
    (async () => {
      const services = await startServices(options.config ?? config, { log: silentLogger, clock: options.clock })
      try {
        return await use(services)
      } finally {
        await services.close()
      }
    })(),
  )
}

/** Issues a code as the page would, exchanges it over HTTP, and returns the exchange's response. */
async function exchangeFor(clientId: string, secret: string, check: { ageOver?: number } = {}) {
  return withServices(async ({ deps }) => {
    const app = createApp(deps)
    const { code } = await issueCode(deps, { clientId, redirectUri: REDIRECT_URI, state: 's', ageOver: check.ageOver ?? 18, methodClass: 'age_only' })
    const response = await app.handle(
      new Request(`${PUBLIC_URL}/api/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: basic(clientId, secret) },
        body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 's' }),
      }),
    )
    const body = await json(response)
    let validation: unknown
    if (response.status === 200) {
      validation = await json(await app.handle(new Request(`${PUBLIC_URL}/api/verify/token/${body.access_token}`)))
    }
    return { status: response.status, body, validation }
  })
}

/** Authenticates over HTTP (GET /api/oauth/usage) and returns the error code, or 'ok'. */
async function authenticate(clientId: string, secret: string) {
  return withServices(async ({ deps }) => {
    const response = await createApp(deps).handle(
      new Request(`${PUBLIC_URL}/api/oauth/usage`, { headers: { authorization: basic(clientId, secret) } }),
    )
    return response.status === 200 ? 'ok' : (await json(response)).error
  })
}

describe('ofage clients create → issueCode → exchange → validation', () => {
  test('a client created with the CLI exchanges a code and its token validates by endpoint and locally', async () => {
    const created = await cli('clients', 'create', '--name', 'Wine shop', '--redirect-uri', REDIRECT_URI, '--min-age', '18', '--limit', '100', '--json')
    expect(created.status).toBe(0)
    const client = created.json()
    expect(client).toMatchObject({
      name: 'Wine shop',
      redirect_uris: [REDIRECT_URI],
      min_age: 18,
      verification_limit: 100,
      sandbox: false,
      status: 'active',
    })
    expect(client.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/)

    const { status, body, validation } = await exchangeFor(client.client_id, client.client_secret)
    expect(status).toBe(200)
    expect(validation).toMatchObject({ valid: true, client_id: client.client_id, age_over: 18, transaction_id: body.transaction_id })

    const keys = await cli('keys', 'show', '--json')
    const key = await importSPKI(keys.json().public_key, 'RS256')
    const { payload } = await jwtVerify(body.access_token, key, { algorithms: ['RS256'], issuer: ISSUER, currentDate: new Date() })
    expect(payload.aud).toBe(client.client_id)

    const audit = await cli('audit', 'show', body.transaction_id, '--json')
    expect(audit.json()).toMatchObject({ transaction_id: body.transaction_id, client_id: client.client_id, method_class: 'age_only', age_over: 18, revoked_at: null })
    expect(audit.json().sub).toBe(payload.sub!)

    const usage = await cli('usage', client.client_id, '--period', 'all', '--json')
    expect(usage.json().usage).toEqual({ total_verifications: 1, age_only_count: 1, biometric_count: 0, reverification_count: 0 })
    // Five database openings in one test: about 5 s on a 2-core machine, the runner's default limit.
  }, 30_000)
})

describe('client management', () => {
  test('list, show, suspend, activate, rotate-secret and update', async () => {
    const { client_id: id, client_secret: secret } = (await cli('clients', 'create', '--name', 'Bar', '--redirect-uri', REDIRECT_URI, '--sandbox', '--json')).json()
    expect((await cli('clients', 'list', '--json')).json().map((c: { client_id: string }) => c.client_id)).toContain(id)
    expect((await cli('clients', 'list')).out).toContain(id)
    expect((await cli('clients', 'show', id, '--json')).json()).toMatchObject({ client_id: id, sandbox: true })
    expect((await cli('clients', 'show', id)).out).not.toContain('secret')

    expect((await cli('clients', 'suspend', id, '--json')).json().status).toBe('suspended')
    expect(await authenticate(id, secret)).toBe('client_suspended')
    expect((await cli('clients', 'activate', id, '--json')).json().status).toBe('active')

    const rotated = (await cli('clients', 'rotate-secret', id, '--json')).json()
    expect(rotated.client_secret).not.toBe(secret)
    expect(await authenticate(id, secret)).toBe('invalid_client')
    expect((await exchangeFor(id, rotated.client_secret)).status).toBe(200)

    const updated = await cli('clients', 'update', id, '--limit', '5', '--min-age', '21', '--add-redirect-uri', 'https://bar.example/cb', '--json')
    expect(updated.json()).toMatchObject({ verification_limit: 5, min_age: 21, redirect_uris: [REDIRECT_URI, 'https://bar.example/cb'] })
    expect((await exchangeFor(id, rotated.client_secret, { ageOver: 18 })).body.error).toBe('age_requirement_not_met')
    const cleared = await cli('clients', 'update', id, '--limit', 'none', '--min-age', 'none', '--remove-redirect-uri', 'https://bar.example/cb', '--json')
    expect(cleared.json()).toMatchObject({ verification_limit: null, min_age: null, redirect_uris: [REDIRECT_URI] })
    // Fourteen openings of the embedded store: past the runner's 5 s default on a loaded machine.
  }, 30_000)

  test('rotate-secret --overlap keeps the old secret working for the duration given, and says until when', async () => {
    const { client_id: id, client_secret: old } = (await cli('clients', 'create', '--name', 'Overlap', '--redirect-uri', REDIRECT_URI, '--json')).json()
    const started = Date.now()
    const rotated = await cli('clients', 'rotate-secret', id, '--overlap', '24h', '--json')
    expect(rotated.status).toBe(0)
    const until = Date.parse(rotated.json().rotation_overlap_until)
    expect(until - started).toBeGreaterThanOrEqual(24 * 3_600_000 - 1_000)
    expect(until - started).toBeLessThan(24 * 3_600_000 + 60_000)
    expect(await authenticate(id, old)).toBe('ok')
    expect(await authenticate(id, rotated.json().client_secret)).toBe('ok')
    const text = await cli('clients', 'rotate-secret', id)
    expect(text.out).toContain('The previous secret no longer works.')
    expect(await authenticate(id, old)).toBe('invalid_client')
    const bad = await cli('clients', 'rotate-secret', id, '--overlap', 'soon')
    expect(bad.status).toBe(2)
    expect(bad.err).toContain('--overlap must be a duration')
  }, 30_000)

  test('--home-url sets, replaces and clears the address the page links back to', async () => {
    const created = await cli('clients', 'create', '--name', 'Home', '--redirect-uri', REDIRECT_URI, '--home-url', 'https://shop.example/age', '--json')
    const { client_id: id } = created.json()
    expect(created.json().home_url).toBe('https://shop.example/age')
    expect((await cli('clients', 'show', id)).out).toContain('home_url: https://shop.example/age')
    expect((await cli('clients', 'update', id, '--home-url', 'https://www.shop.example', '--json')).json().home_url).toBe('https://www.shop.example/')
    expect((await cli('clients', 'update', id, '--limit', '3', '--json')).json().home_url).toBe('https://www.shop.example/')
    expect((await cli('clients', 'update', id, '--home-url', 'none', '--json')).json().home_url).toBeNull()
    expect((await cli('clients', 'show', id)).out).toContain('home_url: none')
    const invalid = await cli('clients', 'update', id, '--home-url', 'javascript:alert(1)')
    expect(invalid.status).toBe(1)
    expect(invalid.err).toContain('home URL must be an absolute http(s) URL')
    expect((await cli('clients', 'show', id, '--json')).json().home_url).toBeNull()
    expect((await cli('clients', 'list', '--json')).json().find((c: { client_id: string }) => c.client_id === id)).toHaveProperty('home_url', null)
  })

  test('a live client needs https redirect URIs and home URL, except loopback; a sandbox client may use http (RFC 9700 §2.6)', async () => {
    const why = 'must use https for a live client'
    for (const argv of [
      ['clients', 'create', '--name', 'Plain', '--redirect-uri', 'http://site.example/cb'],
      ['clients', 'create', '--name', 'Plain', '--redirect-uri', REDIRECT_URI, '--home-url', 'http://site.example/'],
      ['clients', 'create', '--name', 'Plain', '--redirect-uri', 'http://127.0.0.2/cb'],
      ['clients', 'create', '--name', 'Plain', '--redirect-uri', 'http://localhost.site.example/cb'],
    ]) {
      const refused = await cli(...argv)
      expect({ argv, status: refused.status }).toEqual({ argv, status: 1 })
      expect(refused.err).toContain(why)
      expect(refused.err).toContain('RFC 9700 §2.6')
    }
    const loopback = ['http://127.0.0.1:8080/cb', 'http://[::1]/cb', 'http://localhost:3001/cb', 'http://localhost/cb']
    const local = await cli('clients', 'create', '--name', 'Local', ...loopback.flatMap((uri) => ['--redirect-uri', uri]), '--home-url', 'http://localhost:3001/', '--json')
    expect(local.status).toBe(0)
    expect(local.json()).toMatchObject({ redirect_uris: loopback, needs_https: [] })
    const sandbox = await cli('clients', 'create', '--name', 'Test', '--sandbox', '--redirect-uri', 'http://site.example/cb', '--home-url', 'http://site.example/', '--json')
    expect(sandbox.status).toBe(0)
    expect(sandbox.json().needs_https).toEqual([])
    const live = (await cli('clients', 'create', '--name', 'Live', '--redirect-uri', REDIRECT_URI, '--json')).json().client_id
    const added = await cli('clients', 'update', live, '--add-redirect-uri', 'http://site.example/cb')
    expect(added.status).toBe(1)
    expect(added.err).toContain(why)
    expect((await cli('clients', 'update', live, '--home-url', 'http://site.example/')).err).toContain(why)
    expect((await cli('clients', 'update', sandbox.json().client_id, '--add-redirect-uri', 'http://site.example/cb2')).status).toBe(0)
  })

  test('a live client registered with http before the rule keeps working and is listed as needing https', async () => {
    const { client_id: id, client_secret: secret } = (await cli('clients', 'create', '--name', 'Old http', '--redirect-uri', REDIRECT_URI, '--json')).json()
    await withServices(({ deps }) =>
      deps.db.execute(sql`update clients set redirect_uris = array[${REDIRECT_URI}, 'http://old.example/cb'], home_url = 'http://old.example/' where id = ${id}`),
    )
    const shown = await cli('clients', 'show', id)
    expect(shown.out).toContain('needs_https: http://old.example/cb, http://old.example/')
    expect(shown.out).toContain('RFC 9700 §2.6')
    expect((await cli('clients', 'show', id, '--json')).json().needs_https).toEqual(['http://old.example/cb', 'http://old.example/'])
    const listed = await cli('clients', 'list')
    expect(listed.out).toContain(`${id}: http://old.example/cb, http://old.example/`)
    expect((await cli('clients', 'list', '--json')).json().find((c: { client_id: string }) => c.client_id === id).needs_https).toHaveLength(2)
    // Another setting saved with the old home URL unchanged is not refused; the codes of the old row still redeem.
    expect((await cli('clients', 'update', id, '--limit', '5', '--home-url', 'http://old.example/')).status).toBe(0)
    expect((await exchangeFor(id, secret)).status).toBe(200)
    // The table of later tests holds only table rows.
    expect((await cli('clients', 'delete', id, '--force')).status).toBe(0)
  })

  test.each([
    [['clients', 'create', '--redirect-uri', REDIRECT_URI], 2, 'needs --name'],
    [['clients', 'create', '--name', 'X'], 1, 'at least one redirect URI'],
    [['clients', 'create', '--name', 'X', '--redirect-uri', 'javascript:alert(1)'], 1, 'absolute http(s) URL'],
    [['clients', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb#frag'], 1, 'fragment'],
    [['clients', 'create', '--name', 'X', '--redirect-uri', REDIRECT_URI, '--min-age', '120'], 1, 'min_age'],
    [['clients', 'create', '--name', 'X', '--redirect-uri', REDIRECT_URI, '--limit', '-1'], 2, '--limit'],
    [['clients', 'create', '--name', 'X', '--redirect-uri', REDIRECT_URI, '--home-url', 'shop.example'], 1, 'home URL must be an absolute http(s) URL'],
    [['clients', 'create', '--name', 'X', '--redirect-uri', REDIRECT_URI, '--home-url', 'ftp://shop.example/'], 1, 'home URL must be an absolute http(s) URL'],
    [['clients', 'create', '--name', 'X', '--redirect-uri', REDIRECT_URI, '--home-url', 'https://shop.example/#top'], 1, 'home URL must not contain a fragment'],
    [['clients', 'create', '--name', 'X', '--redirect-uri', REDIRECT_URI, '--home-url', 'https://user:pw@shop.example/'], 1, 'home URL must not contain credentials'],
    [['clients', 'create', '--name', 'X', '--redirect-uri', REDIRECT_URI, '--home-url', 'none'], 1, 'home URL must be an absolute http(s) URL'],
    [['clients', 'show', 'cl_nope'], 1, 'no client cl_nope'],
    [['clients', 'update', 'cl_nope', '--limit', '3'], 1, 'no client'],
    [['audit', 'show', 'not-a-uuid'], 1, 'no audit log'],
    [['usage', 'cl_nope'], 1, 'no client'],
    [['usage'], 2, 'usage CLIENT_ID'],
    [['frobnicate'], 2, 'unknown command'],
    [['clients', 'create', '--bogus'], 2, 'bogus'],
  ])('%j fails with status %d and says "%s"', async (argv, status, message) => {
    const result = await cli(...(argv as string[]))
    expect(result.status).toBe(status)
    expect(result.err).toContain(message)
    expect(result.out).toBe('')
  })

  test('help lists every command', async () => {
    const help = await cli('help')
    expect(help.status).toBe(0)
    for (const command of ['migrate', 'clients create', 'rotate-secret', 'audit show', 'usage', 'keys show']) expect(help.out).toContain(command)
  })

  test('migrate is idempotent, and says there was nothing to apply', async () => {
    const total = migrationJournal.entries.length
    expect(await cli('migrate')).toMatchObject({ status: 0, out: `The database is up to date (${total} migrations).`, err: '' })
    expect((await cli('migrate', '--json')).json()).toEqual({ migrated: true, applied: [], total })
  })

  test('migrate on a new database says how many it applied, and the first and last (it said "Migrations applied." whether 0 or 13 ran)', async () => {
    const tags = migrationJournal.entries.map((entry) => entry.tag)
    const fresh = await cliWith(testConfig({ DATABASE_URL: 'memory:' }), 'migrate')
    expect(fresh).toMatchObject({ status: 0, out: `Applied ${tags.length} migrations (0000_init … ${tags.at(-1)}).`, err: '' })
  }, 30_000)
})

describe('--version and --help answer without opening a database or starting a server', () => {
  const versions = [['--version'], ['-v'], ['version'], ['serve', '--version'], ['clients', 'list', '-v']]
  // From a checkout, the commit is the checkout's own (the binary's is written in by the build: test/binary.test.ts).
  const commit = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD']).stdout.toString().trim() || 'unknown'
  test.each(versions.map((argv) => [argv]))('%j prints "ofage", the version of package.json and the commit', async (argv) => {
    expect(await cliWith(unopenable, ...argv)).toMatchObject({ status: 0, out: `ofage ${pkg.version} (commit ${commit})`, err: '' })
  })

  const helps = [['--help'], ['-h'], ['help'], ['serve', '--help'], ['clients', '--help'], ['clients', 'delete', 'cl_x', '-h'], ['keys', 'show', '--help'], ['estimator', '--help'], ['dev', '--help']]
  test.each(helps.map((argv) => [argv]))('%j prints the help', async (argv) => {
    const help = await cliWith(unopenable, ...argv)
    expect(help).toMatchObject({ status: 0, err: '' })
    expect(help.out).toStartWith(`ofage ${pkg.version} — self-hosted age verification\n\nUsage: ofage`)
  })
})

describe('a mistake in the command line is refused with a hint, before a database is opened', () => {
  test.each([
    [['clinets', 'list'], 'unknown command "clinets" (did you mean "clients"?)'],
    [['clients', 'lst'], 'unknown clients command "lst" (did you mean "list"?)'],
    [['clients', 'list', '--jsn'], 'unknown option --jsn (did you mean "--json"?)'],
    [['clients', 'delete', 'cl_x', '--forse'], 'unknown option --forse (did you mean "--force"?)'],
    [['serve', '--bogus'], 'unknown option --bogus'],
    [['--prot', '8080'], 'unknown option --prot'],
    [['clients', 'show', 'cl_x', '-x'], 'unknown option -x'],
    [['clients', 'create', '--name'], "Option '--name <value>' argument missing"],
    [['keys'], 'keys needs a command: show, rotate'],
    [['keys', 'list'], 'unknown keys command "list"'],
    [['audit', 'lst', '--client', 'cl_x'], 'unknown audit command "lst" (did you mean "list"?)'],
    [['webhooks', 'ad', 'cl_x'], 'unknown webhooks command "ad" (did you mean "add"?)'],
    [['migrate', 'now'], 'migrate takes no arguments, got "now"'],
  ])('%j: status 2 and "%s"', async (argv, message) => {
    const result = await cliWith(unopenable, ...argv)
    expect(result).toMatchObject({ status: 2, out: '' })
    expect(result.err).toBe(`ofage: ${message}\nSee "ofage --help".`)
  })

  test('a word far from every command gets no guess', async () => {
    expect((await cliWith(unopenable, 'zzzz')).err).toBe('ofage: unknown command "zzzz"\nSee "ofage --help".')
  })

  test('estimator and dev parse their own options, and refuse unknown ones too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ofage-dev-'))
    const estimator = await cliWith(unopenable, 'estimator', 'eval', '--dataset', dir, '--bogus')
    expect(estimator.status).toBe(2)
    expect(estimator.err).toStartWith('ofage: unknown option --bogus\nusage: ofage estimator eval')
    const mistyped = await cliWith(unopenable, 'estimator', 'evl')
    expect(mistyped.status).toBe(2)
    expect(mistyped.err).toStartWith('ofage: unknown estimator command "evl" (did you mean "eval"?)')
    const dev = await cliWith(unopenable, 'dev', 'issuer', 'init', '--dir', dir, '--bogus')
    expect(dev).toMatchObject({ status: 2, out: '' })
    expect(dev.err).toStartWith('ofage: unknown option --bogus\nusage: ofage dev issuer init')
    expect(await Bun.file(join(dir, 'issuer.json')).exists()).toBe(false)
  })
})

describe('clients: rename, list, delete', () => {
  test('update --name renames a client; an empty name is refused and changes nothing', async () => {
    const { client_id: id } = (await cli('clients', 'create', '--name', 'Old name', '--redirect-uri', REDIRECT_URI, '--json')).json()
    expect((await cli('clients', 'update', id, '--name', ' New name ', '--json')).json()).toMatchObject({ client_id: id, name: 'New name' })
    const empty = await cli('clients', 'update', id, '--name', ' ', '--limit', '7')
    expect(empty).toMatchObject({ status: 1, out: '' })
    expect(empty.err).toContain('name must not be empty')
    expect((await cli('clients', 'show', id, '--json')).json()).toMatchObject({ name: 'New name', verification_limit: null })
  }, 30_000)

  test('create and update --methods choose the ways a client accepts; an empty or unknown list, or a buffer under the default, is refused', async () => {
    const created = (await cli('clients', 'create', '--name', 'ID shop', '--redirect-uri', REDIRECT_URI, '--methods', 'credential,age_pass', '--json')).json()
    expect(created.methods).toEqual(['credential', 'age_pass'])
    expect((await cli('clients', 'show', created.client_id)).out).toContain('credential')
    expect((await cli('clients', 'update', created.client_id, '--methods', 'age_pass, face', '--json')).json().methods).toEqual(['face', 'age_pass'])
    for (const methods of ['', 'face,selfie']) {
      const refused = await cli('clients', 'update', created.client_id, '--methods', methods)
      expect(refused).toMatchObject({ status: 1, out: '' })
      expect(refused.err).toContain('methods must')
    }
    const lowered = await cli('clients', 'update', created.client_id, '--face-buffer', '2')
    expect(lowered.status).toBe(1)
    expect(lowered.err).toContain('a client may only raise it')
    expect((await cli('clients', 'show', created.client_id, '--json')).json()).toMatchObject({ methods: ['face', 'age_pass'], face_buffer: null })
    expect((await cli('clients', 'create', '--name', 'Every way', '--redirect-uri', REDIRECT_URI, '--json')).json().methods).toEqual(['face', 'credential', 'passkey', 'age_pass'])
  }, 30_000)

  test('create --gate-host gates a site with no redirect URI of its own; update adds, removes and sets the age and lifetime (docs/gate.md)', async () => {
    const created = (await cli('clients', 'create', '--name', 'Gated shop', '--gate-host', 'gated.example', '--gate-age', '21', '--gate-ttl', '12h', '--json')).json()
    expect(created).toMatchObject({ redirect_uris: ['https://gated.example/.ofage/callback'], gate_hosts: ['https://gated.example'], gate_age: 21, gate_ttl: '12h' })
    expect(created.client_secret).toBeString()
    const id = created.client_id
    const updated = (await cli('clients', 'update', id, '--gate-host', 'https://forum.example:8443', '--remove-gate-host', 'gated.example', '--gate-age', 'none', '--gate-ttl', '30d', '--json')).json()
    expect(updated).toMatchObject({ redirect_uris: ['https://forum.example:8443/.ofage/callback'], gate_hosts: ['https://forum.example:8443'], gate_age: 18, gate_ttl: '30d' })
    expect((await cli('clients', 'show', id)).out).toContain('gate_hosts: https://forum.example:8443')
    // A gate the service refuses (plain http for a live client): the new client is not left half-made.
    const refusedGate = await cli('clients', 'create', '--name', 'Half made', '--gate-host', 'http://plain.example')
    expect(refusedGate).toMatchObject({ status: 1, out: '' })
    expect(refusedGate.err).toContain('https')
    expect((await cli('clients', 'list', '--json')).json().some((c: { name: string }) => c.name === 'Half made')).toBe(false)
    // Another client may list the same host: the proxy's configuration names the one that answers.
    const second = (await cli('clients', 'create', '--name', 'Same host', '--gate-host', 'forum.example:8443', '--json')).json()
    expect(second.gate_hosts).toEqual(['https://forum.example:8443'])
    // A flag that is not one is a usage error (2); a value the service refuses is 1.
    for (const [flag, value, status, message] of [
      ['--gate-ttl', 'forever', 2, '--gate-ttl must be a duration'],
      ['--gate-ttl', '30s', 1, 'lifetime'],
      ['--gate-age', '0', 1, 'gate age'],
      ['--gate-host', 'http://plain.example', 1, 'https'],
    ] as const) {
      const refused = await cli('clients', 'update', id, flag, value)
      expect(refused.status, `${flag} ${value}`).toBe(status)
      expect(refused.err).toContain(message)
    }
  }, 60_000)

  test('list prints a header over aligned columns; --json is the clients as show prints them', async () => {
    const shop = (await cli('clients', 'create', '--name', 'A shop with a long name', '--redirect-uri', REDIRECT_URI, '--sandbox', '--limit', '12345', '--json')).json()
    await cli('clients', 'suspend', shop.client_id)
    const [header, ...rows] = (await cli('clients', 'list')).out.split('\n')
    expect(header).toMatch(/^CLIENT_ID +STATUS +SANDBOX +LIMIT +CREATED +NAME$/)
    const columns = ['STATUS', 'SANDBOX', 'LIMIT', 'CREATED', 'NAME'].map((title) => header!.indexOf(title))
    for (const row of rows) for (const column of columns) expect([row[column - 1], row[column] === ' ']).toEqual([' ', false])
    const row = rows.find((line) => line.startsWith(`${shop.client_id} `))!
    expect(columns.map((column, i) => (i === columns.length - 1 ? row.slice(column) : row.slice(column).split(' ')[0]))).toEqual([
      'suspended',
      'yes',
      '12345',
      shop.created_at.slice(0, 10),
      'A shop with a long name',
    ])
    const listed = (await cli('clients', 'list', '--json')).json()
    expect(listed.find((c: { client_id: string }) => c.client_id === shop.client_id)).toEqual((await cli('clients', 'show', shop.client_id, '--json')).json())
  }, 30_000)

  /** Rows that point at a client, table by table (deliveries by the client id in their payload). */
  async function rowsOf(db: Database, id: string) {
    const [counts] = await queryRows<Record<string, number>>(
      db,
      sql`select
        (select count(*)::int from audit_logs where client_id = ${id}) as audit_logs,
        (select count(*)::int from auth_codes where client_id = ${id}) as auth_codes,
        (select count(*)::int from usage_daily where client_id = ${id}) as usage_daily,
        (select count(*)::int from verification_sessions where client_id = ${id}) as verification_sessions,
        (select count(*)::int from pushed_requests where client_id = ${id}) as pushed_requests,
        (select count(*)::int from webhook_endpoints where client_id = ${id}) as webhook_endpoints,
        (select count(*)::int from webhook_deliveries where payload like ${`%"client_id":"${id}"%`}) as webhook_deliveries`,
    )
    return counts
  }

  test('delete is refused while the client has verifications this month; --force deletes it and every row that points at it', async () => {
    const { client_id: id, client_secret: secret } = (await cli('clients', 'create', '--name', 'Closing shop', '--redirect-uri', REDIRECT_URI, '--json')).json()
    expect((await cli('webhooks', 'add', id, '--url', 'https://shop.example/hooks')).status).toBe(0)
    const { body, validation } = await exchangeFor(id, secret)
    expect(validation).toMatchObject({ valid: true })
    const before = await withServices(async ({ deps }) => {
      const app = createApp(deps)
      // An open page and a pushed request: a session and a pushed_requests row of this client.
      expect((await app.handle(new Request(`${PUBLIC_URL}/?${new URLSearchParams({ client_id: id, redirect_uri: REDIRECT_URI, state: 's' })}`))).status).toBe(200)
      const pushed = await app.handle(
        new Request(`${PUBLIC_URL}/api/oauth/par`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(id, secret) },
          body: new URLSearchParams({ redirect_uri: REDIRECT_URI, state: 'p' }).toString(),
        }),
      )
      expect(pushed.status).toBe(201)
      return rowsOf(deps.db, id)
    })
    expect(before).toEqual({ audit_logs: 1, auth_codes: 1, usage_daily: 1, verification_sessions: 1, pushed_requests: 1, webhook_endpoints: 1, webhook_deliveries: 1 })

    const refused = await cli('clients', 'delete', id)
    expect(refused).toMatchObject({ status: 1, out: '' })
    expect(refused.err).toContain(`client ${id} has 1 verification this month`)
    expect(refused.err).toContain('--force')
    expect((await cli('clients', 'show', id)).status).toBe(0)

    expect((await cli('clients', 'delete', id, '--force', '--json')).json()).toEqual({ deleted: id, audit_rows_deleted: 1 })
    const after = await withServices(async ({ deps }) => ({
      rows: await rowsOf(deps.db, id),
      validation: (await createApp(deps).handle(new Request(`${PUBLIC_URL}/api/verify/token/${body.access_token}`))).status,
    }))
    expect(after).toEqual({
      rows: { audit_logs: 0, auth_codes: 0, usage_daily: 0, verification_sessions: 0, pushed_requests: 0, webhook_endpoints: 0, webhook_deliveries: 0 },
      // Its token stops validating: validation looks its audit row up.
      validation: 401,
    })
    expect((await cli('clients', 'show', id)).err).toContain(`no client ${id}`)
    expect((await cli('audit', 'show', body.transaction_id)).err).toContain('no audit log')
  }, 60_000)

  test('a client whose verifications are all from past months is deleted without --force; a second delete finds no client', async () => {
    const { client_id: id } = (await cli('clients', 'create', '--name', 'Old shop', '--redirect-uri', REDIRECT_URI, '--json')).json()
    const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 15))
    await withServices(
      ({ deps }) => issueCode(deps, { clientId: id, redirectUri: REDIRECT_URI, state: 's', ageOver: 18, methodClass: 'age_only' }),
      { clock: fixedClock(lastMonth) },
    )
    expect(await cli('clients', 'delete', id)).toMatchObject({ status: 0, out: `Deleted client ${id}, its 1 audit row, usage counters and webhook endpoints.`, err: '' })
    const again = await cli('clients', 'delete', id, '--force')
    expect(again).toMatchObject({ status: 1, out: '' })
    expect(again.err).toContain(`no client ${id}`)
  }, 30_000)
})

describe('audit list', () => {
  test('a client\'s audit rows newest first, from --since, at most --limit; a header over the text', async () => {
    const { client_id: id } = (await cli('clients', 'create', '--name', 'Audited shop', '--redirect-uri', REDIRECT_URI, '--json')).json()
    const clock = fixedClock('2026-03-01T10:00:00.000Z')
    const issued: string[] = []
    await withServices(
      async ({ deps }) => {
        for (const methodClass of ['age_only', 'biometric', 'age_only'] as const) {
          issued.push((await issueCode(deps, { clientId: id, redirectUri: REDIRECT_URI, state: 's', ageOver: 18, methodClass })).transactionId)
          clock.advance(60 * 60_000)
        }
      },
      { clock },
    )
    const newestFirst = [...issued].reverse()
    const ids = (result: { json(): { transaction_id: string }[] }) => result.json().map((row) => row.transaction_id)
    expect(ids(await cli('audit', 'list', '--client', id, '--json'))).toEqual(newestFirst)
    expect(ids(await cli('audit', 'list', '--client', id, '--limit', '2', '--json'))).toEqual(newestFirst.slice(0, 2))
    expect(ids(await cli('audit', 'list', '--client', id, '--since', '2026-03-01T11:00:00Z', '--json'))).toEqual(newestFirst.slice(0, 2))
    expect((await cli('audit', 'list', '--client', id, '--json')).json()[0]).toEqual((await cli('audit', 'show', newestFirst[0]!, '--json')).json())

    const [header, ...rows] = (await cli('audit', 'list', '--client', id)).out.split('\n')
    expect(header).toMatch(/^CREATED_AT +TRANSACTION_ID +CLASS +LEVEL +AGE_OVER +METHOD +REVOKED$/)
    expect(rows.map((row) => row.split(/ +/).slice(0, 3))).toEqual([
      ['2026-03-01T12:00:00.000Z', newestFirst[0]!, 'age_only'],
      ['2026-03-01T11:00:00.000Z', newestFirst[1]!, 'biometric'],
      ['2026-03-01T10:00:00.000Z', newestFirst[2]!, 'age_only'],
    ])
    expect((await cli('audit', 'list', '--client', id, '--since', '2026-03-02')).out).toBe(`No audit rows for ${id} since 2026-03-02T00:00:00.000Z.`)
  }, 30_000)

  test.each([
    [['audit', 'list', '--client', 'cl_nope'], 1, 'no client cl_nope'],
    [['audit', 'list'], 2, 'audit list --client CLIENT_ID'],
    [['audit', 'list', '--client', 'cl_nope', '--limit', '0'], 2, '--limit must be a whole number from 1'],
    [['audit', 'list', '--client', 'cl_nope', '--since', 'yesterday'], 1, '--since must be YYYY-MM-DD or an ISO 8601 timestamp'],
  ])('%j fails with status %d and says "%s"', async (argv, status, message) => {
    const result = await cli(...(argv as string[]))
    expect(result).toMatchObject({ status, out: '' })
    expect(result.err).toContain(message)
  })
})

describe('users create prints a link to the server, not to this shell', () => {
  test("before any server started it says which address it assumed; after, the link uses the server's recorded APP_URL", async () => {
    const { client_id: id } = (await cli('clients', 'create', '--name', 'Dash shop', '--redirect-uri', REDIRECT_URI, '--json')).json()
    const before = await cli('users', 'create', '--client', id, '--email', 'first@dash.example')
    expect(before.status).toBe(0)
    expect(before.out).toContain(`set_password_url: ${PUBLIC_URL}/dashboard/set-password?token=`)
    expect(before.err).toContain(`no server has started on this database yet, so links use this shell's address (APP_URL=${PUBLIC_URL})`)
    // A server started with another port and address than this shell's (issue 19: PORT=3200, the link said 3000).
    const services = await startServices({ ...config, appUrl: 'http://127.0.0.1:3200', publicUrl: 'http://127.0.0.1:3200' }, { log: silentLogger })
    try {
      await recordServerAddresses(services.deps)
    } finally {
      await services.close()
    }
    const after = await cli('users', 'create', '--client', id, '--email', 'second@dash.example', '--json')
    expect(after.err).toBe('')
    expect(after.json().set_password_url).toStartWith('http://127.0.0.1:3200/dashboard/set-password?token=')
    expect((await cli('users', 'reset-password', 'first@dash.example', '--json')).json().set_password_url).toStartWith('http://127.0.0.1:3200/dashboard/set-password?token=')
  })
})

describe('keys show', () => {
  /** A database of its own, kept between openings: a DATA_DIR, or a fresh Postgres database. */
  let keysConfig: Config
  let keysDir: string
  let dropKeysDatabase: () => Promise<void>
  let keyFile: string
  beforeAll(async () => {
    keysDir = mkdtempSync(join(tmpdir(), 'ofage-keys-'))
    const database = onPostgres ? await freshDatabaseUrl() : undefined
    dropKeysDatabase = database?.drop ?? (async () => {})
    keysConfig = testConfig({ DATA_DIR: keysDir, DATABASE_URL: database?.url })
    keyFile = join(keysDir, 'signing-key.pem')
    writeFileSync(keyFile, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }))
  })
  afterAll(async () => {
    await dropKeysDatabase()
    rmSync(keysDir, { recursive: true, force: true })
  })
  const withFile = () => ({ ...keysConfig, signingKeyFile: keyFile })

  test('before any key exists it says that no key exists yet (not a configuration error) and generates none; then it says where the key comes from', async () => {
    for (let i = 0; i < 2; i++) {
      const failure = await cliWith(keysConfig, 'keys', 'show')
      expect(failure).toMatchObject({ status: 1, out: '' })
      expect(failure.err).toStartWith('ofage: no signing key exists yet: SIGNING_KEY_FILE is not set and the database holds none. The server generates one at its first start')
      expect(failure.err).not.toContain('configuration error')
    }
    // Any other opening generates it, as the server's first start does.
    expect((await cliWith(keysConfig, 'migrate')).status).toBe(0)
    const fromDatabase = await cliWith(keysConfig, 'keys', 'show', '--json')
    expect(fromDatabase.json().source).toMatch(
      onPostgres ? /^generated \d{4}-\d\d-\d\dT[\d:.]+Z, kept in the database \(DATABASE_URL=postgres:\/\/[^@]+\/ofage_test_\w+\)$/ : /^generated \d{4}-\d\d-\d\dT[\d:.]+Z, kept in the embedded database \(DATA_DIR=.+\)$/,
    )
    const fromFile = await cliWith(withFile(), 'keys', 'show')
    expect(fromFile.out).toContain(`\nsource: SIGNING_KEY_FILE=${keyFile}\nin force since: not yet: no server has started on this database`)
    expect(fromFile.out).toContain('\n-----BEGIN PUBLIC KEY-----')
    expect(fromFile.out).not.toContain(fromDatabase.json().thumbprint)
  }, 30_000)

  test('shows the key in force, whatever key this shell would load (it compared only with the last server started)', async () => {
    // A key in the database (generated by a command), then a server that starts with the file: the file's key is put in force.
    await cliWith(keysConfig, 'migrate')
    await withServices(async () => {}, { config: withFile() })
    const fileKey = (await cliWith(withFile(), 'keys', 'show', '--json')).json()
    // This shell lacks the server's SIGNING_KEY_FILE: it is shown the key in force all the same.
    const shown = await cliWith(keysConfig, 'keys', 'show', '--json')
    expect(shown.status).toBe(0)
    expect(shown.json()).toMatchObject({ source: `SIGNING_KEY_FILE=${keyFile}`, thumbprint: fileKey.thumbprint, in_force_since: expect.any(String), previous: null })
    // No server runs now: none is listed, and none disagrees.
    expect(shown.json()).toMatchObject({ instances: [], instances_agree: true })
  }, 30_000)
})

describe('the embedded store has one opener', () => {
  test.skipIf(onPostgres)('a command refuses while another live process holds DATA_DIR, naming it', async () => {
    writeFileSync(join(dataDir, 'ofage.lock'), JSON.stringify({ pid: process.ppid, holder: 'the ofage server' }))
    try {
      const failure = await runCli(['clients', 'list'], config).catch((error) => error)
      expect(failure).toBeInstanceOf(ConfigError)
      expect(failure.variable).toBe('DATA_DIR')
      expect(failure.message).toContain(`pid ${process.ppid}`)
    } finally {
      rmSync(join(dataDir, 'ofage.lock'))
    }
  })

  test.skipIf(onPostgres)('a lock left by a process that is gone is taken over', async () => {
    writeFileSync(join(dataDir, 'ofage.lock'), JSON.stringify({ pid: 2 ** 22 + 7, holder: 'a crashed server' }))
    expect((await cli('clients', 'list', '--json')).status).toBe(0)
  })

  test.skipIf(onPostgres)('a second opener in the same process is refused while the first is open', async () => {
    await withServices(async () => {
      const failure = await startServices(config, { log: silentLogger, clock: fixedClock() }).catch((error) => error)
      expect(failure).toBeInstanceOf(ConfigError)
    })
  })
})

describe('ofage dev: the test issuer and wallet', () => {
  test('issuer init, issue into a wallet, and present to a running server: the page is answered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ofage-dev-'))
    expect((await cli('dev', 'issuer', 'init', '--dir', dir)).out).toContain(`CREDENTIAL_TRUST_LIST=${join(dir, 'trust-list.pem')}`)
    const wallet = join(dir, 'wallet.json')
    expect((await cli('dev', 'issuer', 'issue', '--dir', dir, '--age', '30', '--wallet', wallet, '--format', 'mdl')).status).toBe(0)
    expect((await cli('dev', 'issuer', 'issue', '--dir', dir, '--age', 'old', '--wallet', wallet)).status).toBe(2)
    const { startTestServer } = await import('./browser/chromium.ts')
    const running = await startTestServer({ CREDENTIAL_TRUST_LIST: join(dir, 'trust-list.pem') })
    try {
      const { createClient } = await import('../src/clients/registry.ts')
      const { testBrowser } = await import('./verification/browser.ts')
      const { client } = await createClient(running.services.deps, { name: 'Shop', redirectUris: [REDIRECT_URI] })
      const browser = testBrowser({ baseUrl: running.baseUrl })
      const { page } = await browser.open({ client_id: client.id })
      const started = await json(await browser.post(`${page.action('/methods/credential').split('?')[0]}/start`, { csrf: page.csrf! }))
      const presented = await cli('dev', 'wallet', 'present', '--wallet', wallet, started.wallet_url)
      expect(presented).toMatchObject({ status: 0, out: '200 {}' })
      // The same link again: the request was answered, so the wallet is turned away.
      expect(cli('dev', 'wallet', 'present', '--wallet', wallet, started.wallet_url)).rejects.toThrow('HTTP 404')
    } finally {
      await running.stop()
    }
  }, 30_000)

  test('is refused in production (NODE_ENV=production)', async () => {
    const err: string[] = []
    const status = await runCli(['dev', 'issuer', 'init', '--dir', tmpdir()], { ...config, production: true }, { out: () => {}, err: (text) => err.push(text) })
    expect(status).toBe(2)
    expect(err.join('')).toContain('development and tests only')
  })
})
