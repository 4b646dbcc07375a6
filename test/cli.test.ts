import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importSPKI, jwtVerify } from 'jose'
import { createApp } from '../src/app.tsx'
import { startServices, type Services } from '../src/boot.ts'
import { runCli } from '../src/cli.ts'
import { ConfigError, type Config } from '../src/config.ts'
import { fixedClock } from '../src/lib/clock.ts'
import { silentLogger } from '../src/lib/log.ts'
import { issueCode } from '../src/oauth/codes.ts'
import { basic, freshDatabaseUrl, ISSUER, json, onPostgres, PUBLIC_URL, REDIRECT_URI, testConfig } from './helpers.ts'

/**
 * The CLI opens the database itself, as an operator's shell would: on a fresh Postgres database, or on
 * an embedded store in a temporary DATA_DIR (one opener at a time, so services are opened per step).
 */
let config: Config
let dataDir: string
let dropDatabase: () => Promise<void>

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'ofage-cli-'))
  const database = await freshDatabaseUrl()
  dropDatabase = database.drop
  config = testConfig({ DATA_DIR: dataDir, DATABASE_URL: onPostgres ? database.url : undefined })
})
afterAll(async () => {
  await dropDatabase()
  rmSync(dataDir, { recursive: true, force: true })
})

async function cli(...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const status = await runCli(argv, config, { out: (text) => out.push(text), err: (text) => err.push(text) })
  return { status, out: out.join('\n'), err: err.join('\n'), json: () => JSON.parse(out.join('\n')) }
}

async function withServices<T>(use: (services: Services) => Promise<T>): Promise<T> {
  const services = await startServices(config, { log: silentLogger })
  try {
    return await use(services)
  } finally {
    await services.close()
  }
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
  })

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

  test('migrate is idempotent', async () => {
    expect((await cli('migrate')).status).toBe(0)
    expect((await cli('migrate', '--json')).json()).toEqual({ migrated: true })
  })
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
      const { createClient } = await import('../src/oauth/clients.ts')
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
