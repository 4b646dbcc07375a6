import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { calculateJwkThumbprint, createLocalJWKSet, jwtVerify } from 'jose'
import { eq } from 'drizzle-orm'
import postgres from 'postgres'
import { createApp } from '../../src/app.tsx'
import { startServices } from '../../src/boot.ts'
import { runCommand } from '../../src/cli/run.ts'
import { serverSecrets } from '../../src/db/schema.ts'
import { ConfigError } from '../../src/errors.ts'
import { silentLogger, type Logger } from '../../src/lib/log.ts'
import { createTestContext, freshDatabaseUrl, ISSUER, json, onPostgres, PUBLIC_URL, testConfig, type TestContext } from '../helpers.ts'

/**
 * Issue 32, item 1: one key, everywhere, always. Every instance signs with and publishes the deployment's
 * key in force: a start with another key is refused in one line naming SIGNING_KEY_FILE, and a running
 * instance whose key is no longer in force stops signing. Sequential starts on one database here (an
 * embedded store allows one opener at a time); test/keys/two-instances.test.ts runs two servers at once.
 */
const dir = mkdtempSync(join(tmpdir(), 'ofage-key-in-force-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const pems = new Map<string, string>()
/** A PKCS#8 key file; the same name twice is the same key. */
function keyFile(name: string, key = name): string {
  if (!pems.has(key)) pems.set(key, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())
  const file = join(dir, `${name}.pem`)
  writeFileSync(file, pems.get(key)!)
  return file
}

/** One database that several starts share: a fresh Postgres database, or an embedded store in a directory. */
async function deployment() {
  if (onPostgres) {
    const database = await freshDatabaseUrl()
    return { env: { DATABASE_URL: database.url }, drop: database.drop }
  }
  const dataDir = mkdtempSync(join(dir, 'store-'))
  return { env: { DATA_DIR: dataDir, DATABASE_URL: undefined }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) }
}

/** Starts services as a server does, closes them, and returns the thumbprint of the key its key set publishes. */
async function startAndStop(env: Record<string, string | undefined>): Promise<string> {
  const services = await startServices(testConfig(env), { log: silentLogger })
  try {
    const response = await createApp(services.deps).handle(new Request(`${PUBLIC_URL}/api/.well-known/jwks.json`))
    const [jwk] = (await json(response)).keys
    return calculateJwkThumbprint({ kty: 'RSA', n: jwk.n, e: jwk.e }, 'sha256')
  } finally {
    await services.close()
  }
}

function refusal(env: Record<string, string | undefined>): Promise<ConfigError> {
  return startServices(testConfig(env), { log: silentLogger }).then(
    async (services) => {
      await services.close()
      throw new Error('started, but should have been refused')
    },
    (error) => error,
  )
}

/** The public half of a key made by {@link keyFile}, computed here rather than by the code under test. */
const publicJwk = (key: string) => createPublicKey(pems.get(key)!).export({ format: 'jwk' }) as { n: string; e: string }
const thumbprintOf = (key: string) => calculateJwkThumbprint({ kty: 'RSA', ...publicJwk(key) }, 'sha256')

describe('a start with another key than the deployment\'s is refused, in one line naming SIGNING_KEY_FILE', () => {
  test('two different SIGNING_KEY_FILEs: the second is refused (both used to sign, each publishing key_2025_01)', async () => {
    const { env, drop } = await deployment()
    try {
      expect(await startAndStop({ ...env, SIGNING_KEY_FILE: keyFile('a') })).toBe(await thumbprintOf('a'))
      const refused = await refusal({ ...env, SIGNING_KEY_FILE: keyFile('b') })
      expect(refused).toBeInstanceOf(ConfigError)
      expect(refused.variable).toBe('SIGNING_KEY_FILE')
      expect(refused.message).not.toContain('\n')
      expect(refused.message).toContain(`SIGNING_KEY_FILE (${join(dir, 'b.pem')}) holds the key ${await thumbprintOf('b')}, but every instance of this deployment signs with ${await thumbprintOf('a')}`)
      expect(refused.message).toContain('ofage keys rotate --file')
      // The same key from another path is the same key.
      expect(await startAndStop({ ...env, SIGNING_KEY_FILE: keyFile('a-copy', 'a') })).toBe(await thumbprintOf('a'))
    } finally {
      await drop()
    }
  }, 30_000)

  test('a key file changed between two starts is refused, not published to integrators who cached the old one', async () => {
    const { env, drop } = await deployment()
    try {
      const file = keyFile('changing', 'c1')
      await startAndStop({ ...env, SIGNING_KEY_FILE: file })
      keyFile('changing', 'c2')
      const refused = await refusal({ ...env, SIGNING_KEY_FILE: file })
      expect(refused.variable).toBe('SIGNING_KEY_FILE')
      expect(refused.message).toContain(`but every instance of this deployment signs with ${await thumbprintOf('c1')}`)
    } finally {
      await drop()
    }
  }, 30_000)

  test('without SIGNING_KEY_FILE in a deployment whose key is a file\'s: refused, and no key is generated', async () => {
    const { env, drop } = await deployment()
    try {
      await startAndStop({ ...env, SIGNING_KEY_FILE: keyFile('f') })
      const refused = await refusal(env)
      expect(refused.variable).toBe('SIGNING_KEY_FILE')
      expect(refused.message).toStartWith(`SIGNING_KEY_FILE is not set, but this deployment signs with a key from a file (${await thumbprintOf('f')}, from SIGNING_KEY_FILE=${join(dir, 'f.pem')}`)
      const services = await startServices(testConfig({ ...env, SIGNING_KEY_FILE: keyFile('f') }), { log: silentLogger })
      try {
        expect(await services.deps.db.select().from(serverSecrets).where(eq(serverSecrets.name, 'signing_key'))).toEqual([])
      } finally {
        await services.close()
      }
    } finally {
      await drop()
    }
  }, 30_000)

  test('with SIGNING_KEY_FILE in a deployment whose key was generated: refused, unless the file holds that very key', async () => {
    const { env, drop } = await deployment()
    try {
      const generated = await startAndStop(env)
      const refused = await refusal({ ...env, SIGNING_KEY_FILE: keyFile('g') })
      expect(refused.variable).toBe('SIGNING_KEY_FILE')
      expect(refused.message).toContain(`signs with ${generated}, generated, kept in the database, since `)
      expect(refused.message).toContain('unset SIGNING_KEY_FILE to sign with that key')
      // The generated key itself, written to a file, is the deployment's key.
      const services = await startServices(testConfig(env), { log: silentLogger })
      const [row] = await services.deps.db.select().from(serverSecrets).where(eq(serverSecrets.name, 'signing_key'))
      await services.close()
      const exported = join(dir, 'exported.pem')
      writeFileSync(exported, row!.value)
      expect(await startAndStop({ ...env, SIGNING_KEY_FILE: exported })).toBe(generated)
    } finally {
      await drop()
    }
  }, 30_000)

  test.skipIf(!onPostgres)('four instances starting at once with two different files: one key is put in force, the others are refused', async () => {
    const database = await freshDatabaseUrl()
    try {
      const files = [keyFile('race-1'), keyFile('race-2')]
      const starts = await Promise.allSettled(files.flatMap((file) => [file, file]).map((file) => startServices(testConfig({ DATABASE_URL: database.url, SIGNING_KEY_FILE: file }), { log: silentLogger })))
      const started = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
      const refused = starts.flatMap((s) => (s.status === 'rejected' ? [s.reason] : []))
      expect(started).toHaveLength(2)
      expect(new Set(await Promise.all(started.map(async (s) => (await s.deps.keys.signing.signer()).thumbprint))).size).toBe(1)
      expect(refused.map((r) => r.variable)).toEqual(['SIGNING_KEY_FILE', 'SIGNING_KEY_FILE'])
      await Promise.all(started.map((s) => s.close()))
    } finally {
      await database.drop()
    }
  }, 30_000)
})

describe('a running instance never signs with a key the deployment no longer uses', () => {
  let ctx: TestContext
  let file: string
  const logged: { event: string; fields: Record<string, unknown> }[] = []
  const log: Logger = { info: (event, fields = {}) => logged.push({ event, fields }), error: (event, fields = {}) => logged.push({ event, fields }) }
  const services = () => ({ deps: ctx.deps, close: async () => {} })
  const keys = async (...argv: string[]) => {
    const out: string[] = []
    const err: string[] = []
    const status = await runCommand(services(), ['keys', ...argv, '--json'], { out: (t) => out.push(t), err: (t) => err.push(t) })
    return { status, err: err.join('\n'), json: () => JSON.parse(out.join('\n')) }
  }

  beforeAll(async () => {
    file = keyFile('running', 'r1')
    ctx = await createTestContext({ env: { SIGNING_KEY_FILE: file }, log })
    await ctx.deps.keys.signing.reportAs({ id: 'this-instance', host: 'test-host', pid: 1 })
  })
  afterAll(() => ctx.close())

  async function exchange() {
    const client = await ctx.createClient()
    const { code } = await ctx.issueCode({ clientId: client.id, state: 'st' })
    const response = await ctx.exchange(client.authorization, { grant_type: 'authorization_code', code, redirect_uri: 'https://shop.example/callback', state: 'st' })
    return { client, code, response }
  }

  test('keys show says which key is in force and that the instance signs with it', async () => {
    const shown = await keys('show')
    expect(shown.json()).toMatchObject({ thumbprint: await thumbprintOf('r1'), source: `SIGNING_KEY_FILE=${file}`, previous: null, instances_agree: true })
    expect(shown.json().instances).toEqual([{ host: 'test-host', pid: 1, source: 'file', key: await thumbprintOf('r1'), signing: true, seen_at: ctx.clock.now().toISOString() }])
  })

  test('a rotation to a file this instance does not hold: it stops signing at once, says so once, /readyz is 503, and a code is not used up', async () => {
    const other = keyFile('rotated-elsewhere', 'r2')
    const rotated = await keys('rotate', '--file', other)
    expect(rotated.status).toBe(0)
    // keys rotate waited for the instance's answer: it cannot follow, and keys show says so.
    expect(rotated.json()).toMatchObject({ thumbprint: await thumbprintOf('r2'), instances_agree: false })
    expect(rotated.json().instances).toEqual([expect.objectContaining({ key: await thumbprintOf('r1'), signing: false })])
    expect(ctx.deps.keys.signing.canSign).toBe(false)

    const ready = await ctx.request('/readyz')
    expect(ready.status).toBe(503)
    expect((await json(ready)).checks.signing_key).toBe(false)
    const { client, code, response } = await exchange()
    expect(response.status).toBe(500)
    expect((await json(response)).error).toBe('server_error')
    // The key set is the deployment's, whichever instance answers.
    expect((await json(await ctx.request('/api/.well-known/jwks.json'))).keys[0].n).toBe(publicJwk('r2').n)
    const complaints = logged.filter((l) => l.event === 'signing_key_not_in_force')
    expect(complaints).toHaveLength(1)
    expect(complaints[0]!.fields).toMatchObject({ key_in_force: await thumbprintOf('r2'), this_key: await thumbprintOf('r1') })
    expect(String(complaints[0]!.fields.message)).toStartWith(`SIGNING_KEY_FILE (${file}) holds the key`)

    // Fixing the file heals the instance at its next read (30 s at the latest), without a restart; the code still works.
    writeFileSync(file, pems.get('r2')!)
    ctx.clock.advance(30_000)
    const retried = await ctx.exchange(client.authorization, { grant_type: 'authorization_code', code, redirect_uri: 'https://shop.example/callback', state: 'st' })
    expect(retried.status).toBe(200)
    const { access_token } = await json(retried)
    const published = createLocalJWKSet(await json(await ctx.request('/api/.well-known/jwks.json')))
    expect((await jwtVerify(access_token, published, { issuer: ISSUER, currentDate: ctx.clock.now() })).payload.aud).toBe(client.id)
    expect(ctx.deps.keys.signing.canSign).toBe(true)
    expect((await ctx.request('/readyz')).status).toBe(200)
  })

  test('a key put in force behind its back, with no notice heard: it stops signing within 30 s', async () => {
    // As if the NOTIFY were lost (a dropped listening connection): the record changes, nobody is told.
    keyFile('unannounced', 'r3')
    const [row] = await ctx.deps.db.select().from(serverSecrets).where(eq(serverSecrets.name, 'signing_key_in_force'))
    const record = { ...JSON.parse(row!.value), ...publicJwk('r3'), thumbprint: await thumbprintOf('r3') }
    await ctx.deps.db.update(serverSecrets).set({ value: JSON.stringify(record) }).where(eq(serverSecrets.name, 'signing_key_in_force'))
    ctx.clock.advance(29_000)
    expect((await exchange()).response.status).toBe(200)
    ctx.clock.advance(1_000)
    expect((await exchange()).response.status).toBe(500)
    expect(ctx.deps.keys.signing.canSign).toBe(false)
    expect((await json(await ctx.request('/api/.well-known/jwks.json'))).keys[0].n).toBe(publicJwk('r3').n)
  })
})

/**
 * CI (stop 42, on Postgres, two files at a time) failed the heal above once: a read of the key in force was
 * still under way (its notice heard late) when the file was fixed; it had read the file before the fix, and
 * the exchange due to read again 30 s later waited for that read instead of making its own. Here the read is
 * held by a lock on the instance's report row, so the race happens every time.
 */
describe.skipIf(!onPostgres)('a read of the key in force under way when the file is fixed', () => {
  test('the exchange that is due to read again does not take that read\'s answer: it heals, and signs', async () => {
    const file = keyFile('held-read', 'h1')
    const ctx = await createTestContext({ env: { SIGNING_KEY_FILE: file } })
    const url = (ctx.config.database as { url: string }).url
    const other = postgres(url, { max: 2, onnotice: () => {} })
    try {
      await ctx.deps.keys.signing.reportAs({ id: 'held', host: 'test-host', pid: 2 })
      const status = await runCommand({ deps: ctx.deps, close: async () => {} }, ['keys', 'rotate', '--file', keyFile('held-elsewhere', 'h2'), '--json'], { out: () => {}, err: () => {} })
      expect(status).toBe(0)
      expect(ctx.deps.keys.signing.canSign).toBe(false)
      const client = await ctx.createClient()
      const { code } = await ctx.issueCode({ clientId: client.id, state: 'st' })

      // A read starts, reads the old file, and waits to write its report.
      let release!: () => void
      const held = other.begin(async (tx) => {
        await tx`select 1 from server_secrets where name = 'signing_key_instance:held' for update`
        await new Promise<void>((resolve) => (release = resolve))
      })
      while (!release) await Bun.sleep(5)
      const reading = ctx.deps.keys.signing.refresh()
      const waiting = async () => (await other`select count(*)::int as n from pg_locks where not granted`)[0]!.n as number
      for (let i = 0; (await waiting()) === 0; i++) {
        if (i > 400) throw new Error('the read never waited on the report row')
        await Bun.sleep(5)
      }

      writeFileSync(file, pems.get('h2')!)
      ctx.clock.advance(30_000)
      const exchanged = ctx.exchange(client.authorization, { grant_type: 'authorization_code', code, redirect_uri: 'https://shop.example/callback', state: 'st' })
      await Bun.sleep(50)
      release()
      await held
      await reading
      const response = await exchanged
      expect(response.status).toBe(200)
      expect(ctx.deps.keys.signing.canSign).toBe(true)
    } finally {
      await other.end()
      await ctx.close()
    }
  })
})
