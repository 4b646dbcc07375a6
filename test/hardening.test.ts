import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { decodeJwt } from 'jose'
import { describeError } from '../src/lib/log.ts'
import { issueCode } from '../src/oauth/issue-code.ts'
import { claimSession, findSession } from '../src/verification/sessions.ts'
import postgres from 'postgres'
import { createTestContext, freePort, freshDataDir, json, onPostgres, queryRows, REDIRECT_URI, type TestContext, waitUntilReady } from './helpers.ts'
import { testBrowser } from './verification/browser.ts'

/**
 * Issue 10's reproductions, each one request that used to answer 500 (or worse) and now answers as the
 * spec says: a clean 4xx, JSON under /api, the error page elsewhere.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  ctx = await createTestContext()
  shop = await ctx.createClient()
})
afterAll(() => ctx.close())

const nulBasic = `Basic ${Buffer.from('cl_a\u0000b:secret').toString('base64')}`

describe('inputs that reached the prototype or the database raw', () => {
  test.each(['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty'])('lang=%s picks a real language, in the query and in Accept-Language', async (name) => {
    const page = `/?client_id=${shop.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`
    // A `lang` longer than any language tag fails the query's schema (400); a shorter one is ignored.
    expect([200, 400]).toContain((await ctx.request(`${page}&lang=${name}`)).status)
    const negotiated = await ctx.request(page, { headers: { 'accept-language': `${name},de;q=0.1` } })
    expect(negotiated.status).toBe(200)
    expect(await negotiated.text()).toContain('lang="de"')
    expect((await ctx.request(`/?lang=${name}`)).status).toBe(400)
    expect((await ctx.request(`/assets/${name}`)).status).toBe(404)
  })

  test('a malformed percent-escape in a session path is a 400, with or without a browser cookie', async () => {
    for (const path of ['/s/%', '/s/%/continue', '/s/%25%', '/api/verify/token/%']) {
      for (const method of ['GET', 'POST']) {
        const response = await ctx.request(path, { method, headers: { cookie: 'ofage_browser=abc', 'content-type': 'application/x-www-form-urlencoded' }, body: method === 'POST' ? 'csrf=x' : undefined })
        expect(response.status).toBeGreaterThanOrEqual(400)
        expect(response.status).toBeLessThan(500)
      }
    }
  })

  test('a NUL byte in the Basic client id is an unknown client (401), not a database error', async () => {
    const token = await ctx.request('/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: nulBasic },
      body: JSON.stringify({ grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT_URI, state: 's' }),
    })
    expect(token.status).toBe(401)
    expect((await json(token)).error).toBe('invalid_client')
    const usage = await ctx.request('/api/oauth/usage', { headers: { authorization: nulBasic } })
    expect(usage.status).toBe(401)
  })

  test('a NUL byte in client_id or state on the page is an error on the page, not a 500', async () => {
    // invalid_request since issue 19: a NUL in any query string is refused before a route reads it.
    expect((await ctx.request(`/?client_id=cl_a%00b&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`)).status).toBe(400)
    const withState = await ctx.request(`/?client_id=${shop.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&state=a%00b`)
    expect(withState.status).toBe(400)
    expect(await withState.text()).toContain('invalid_request')
  })

  test('usage up to 9999-12-31 is answered; the period ends at the last representable instant', async () => {
    const response = await ctx.request('/api/oauth/usage?end_date=9999-12-31', { headers: { authorization: shop.authorization } })
    expect(response.status).toBe(200)
    expect((await json(response)).period.end).toBe('9999-12-31T23:59:59.999Z')
  })
})

describe('a long URL', () => {
  test('over 8 KiB: invalid_request as JSON under /api, the error page elsewhere', async () => {
    const long = 'a'.repeat(9 * 1024)
    const api = await ctx.request(`/api/oauth/usage?start_date=${long}`, { headers: { authorization: shop.authorization } })
    expect(api.status).toBe(400)
    expect(await json(api)).toEqual({ error: 'invalid_request', error_description: 'The request URL is longer than 8192 characters' })
    // A token in the path is an invalid token however long, as the spec answers any: 401.
    expect((await ctx.request(`/api/verify/token/${long}`)).status).toBe(401)
    const page = await ctx.request(`/?client_id=${shop.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&state=${long}`)
    expect(page.status).toBe(400)
    expect(page.headers.get('content-type')).toContain('text/html')
    expect(await page.text()).toContain('invalid_request')
  })

  test('a 32 KB path through the server as `npm start` runs it is answered by the app; past 64 KiB the HTTP layer refuses it', async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const dataDir = await freshDataDir()
    const env = { ...process.env, DATABASE_URL: undefined, DATA_DIR: dataDir.path, PORT: String(port), PUBLIC_URL: url, APP_URL: url, FACE_CHECK: '0', OFAGE_DEMO: '0' }
    const server = Bun.spawn(['bun', 'run', 'start'], { env, stdout: 'ignore', stderr: 'ignore' })
    try {
      await waitUntilReady(url, 30_000)
      const answered = await fetch(`${url}/api/oauth/usage?start_date=${'a'.repeat(32 * 1024)}`)
      expect(answered.status).toBe(400)
      expect((await answered.json()).error).toBe('invalid_request')
      expect((await fetch(`${url}/api/verify/token/${'a'.repeat(32 * 1024)}`)).status).toBe(401)
      expect((await fetch(`${url}/${'a'.repeat(80 * 1024)}`)).status).toBe(431)
    } finally {
      server.kill('SIGTERM')
      await server.exited
      dataDir.remove()
    }
  }, 40_000)
})

describe('a token validates in one spelling only', () => {
  test('trailing whitespace, padding, or a space inside the signature: invalid, by GET and by POST', async () => {
    const { access_token } = await ctx.tokenFor(shop)
    expect((await ctx.request(`/api/verify/token/${access_token}`)).status).toBe(200)
    const [head, body, signature] = access_token.split('.')
    const variants = [`${access_token} `, `${access_token}%20`, `${access_token}==`, `${head}.${body}.${signature!.slice(0, 10)} ${signature!.slice(10)}`, `${access_token}%0A`]
    for (const variant of variants) {
      expect((await ctx.request(`/api/verify/token/${variant.replaceAll(' ', '%20')}`)).status).toBe(401)
      const posted = await ctx.request('/api/oauth/validate', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: decodeURIComponent(variant) }) })
      expect((await json(posted)).valid).toBe(false)
    }
  })
})

describe('what a refused completion leaves behind', () => {
  test('a plan limit reached during the check sets no age pass cookie', async () => {
    const capped = await ctx.createClient({ name: 'Capped', sandbox: true, verificationLimit: 1 })
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: capped.id, state: 's' })
    // Another browser uses up the month's one verification while this visitor is on the page.
    await ctx.issueCode({ clientId: capped.id, state: 's' })
    const refused = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
    expect(refused.status).toBe(402)
    expect(refused.headers.getSetCookie().some((line) => line.startsWith('ofage_pass='))).toBe(false)
  })
})

describe('secrets at rest', () => {
  test("the session row holds a hash of the CSRF token, never the token the page carries", async () => {
    const sandbox = await ctx.createClient({ name: 'Test form shop', sandbox: true })
    const { csrf } = (await testBrowser(ctx).open({ client_id: sandbox.id, state: 'csrf-at-rest' })).page
    const rows = await queryRows<{ csrf_token: string }>(ctx.deps.db, sql`select csrf_token from verification_sessions where state = 'csrf-at-rest'`)
    expect(rows).toHaveLength(1)
    expect(csrf).toBeDefined()
    expect(rows[0]!.csrf_token).not.toBe(csrf!)
    expect(rows[0]!.csrf_token).not.toContain(csrf!)
  })
})

describe('test mode cannot be mistaken for live', () => {
  test('a sandbox client id says so; its tokens carry sandbox: true and validation says so; production tokens keep the spec claims', async () => {
    const sandbox = await ctx.createClient({ name: 'Test shop', sandbox: true })
    expect(sandbox.id).toStartWith('cl_test_')
    expect(shop.id).not.toStartWith('cl_test_')
    const test = await ctx.tokenFor(sandbox, { ageOver: 99 })
    expect(decodeJwt(test.access_token).sandbox).toBe(true)
    expect(await json(await ctx.request(`/api/verify/token/${test.access_token}`))).toMatchObject({ valid: true, sandbox: true })
    const live = await ctx.tokenFor(shop)
    expect(Object.keys(decodeJwt(live.access_token)).sort()).toEqual(
      ['age_over', 'age_verified', 'aud', 'exp', 'iat', 'iss', 'reverification', 'sub', 'verification_id', 'verification_level'].sort(),
    )
    expect(await json(await ctx.request(`/api/verify/token/${live.access_token}`))).not.toHaveProperty('sandbox')
  })

  test("the README's local-validation snippet refuses a sandbox token, another site's token, and a lower age", async () => {
    const readme = await Bun.file('README.md').text()
    const snippet = /```ts\n(import \{ importSPKI[\s\S]+?)```/.exec(readme)![1]!
    const { importSPKI, jwtVerify } = await import('jose')
    const { public_key } = await json(await ctx.request('/api/verify/public-key'))
    const check = async (token: string, clientId: string, ageRequired: number) => {
      // The snippet's body, run with our values in place of its placeholders.
      const body = snippet
        .replace(/^import .*\n/m, '')
        .replace(/^const \{ public_key \}.*\n/m, '')
        .replaceAll("'http://localhost:3000'", JSON.stringify(ctx.config.issuerUrl))
        .replaceAll('CLIENT_ID', JSON.stringify(clientId))
        .replaceAll('AGE_REQUIRED', String(ageRequired))
      const run = new Function('importSPKI', 'jwtVerify', 'public_key', 'token', `return (async () => { ${body}; return payload })()`)
      // The snippet's jwtVerify, on the test's frozen clock: tokens here are issued at a fixed time.
      const atTestTime = (jwt: string, key: CryptoKey, options: Record<string, unknown>) => jwtVerify(jwt, key, { ...options, currentDate: ctx.clock.now() })
      return run(importSPKI, atTestTime, public_key, token).then(() => 'accepted', (error: Error) => error.message)
    }
    const sandbox = await ctx.createClient({ name: 'Test shop 2', sandbox: true })
    expect(await check((await ctx.tokenFor(shop, { ageOver: 21 })).access_token, shop.id, 21)).toBe('accepted')
    expect(await check((await ctx.tokenFor(sandbox, { ageOver: 99 })).access_token, sandbox.id, 18)).not.toBe('accepted')
    expect(await check((await ctx.tokenFor(shop, { ageOver: 18 })).access_token, shop.id, 21)).not.toBe('accepted')
    const other = await ctx.createClient({ name: 'Rival' })
    expect(await check((await ctx.tokenFor(other, { ageOver: 21 })).access_token, shop.id, 21)).not.toBe('accepted')
  })
})

describe('what a crash writes to the log', () => {
  test("a failed query's parameters and a URL's query string never reach the log", () => {
    const failed = new Error('Failed query: select * from verification_sessions where state = $1\nparams: my-state-secret,csrf-value')
    failed.cause = new Error('fetch https://shop.example/callback?code=abc&state=xyz failed')
    const logged = JSON.stringify(describeError(failed))
    expect(logged).toContain('Failed query')
    for (const secret of ['my-state-secret', 'csrf-value', 'code=abc', 'state=xyz']) expect(logged).not.toContain(secret)
  })
})

describe('the five attempts of a session hold under concurrency', () => {
  test('a burst of 25 failing checks runs at most five; a passing post after it finds the session locked', async () => {
    const sandbox = await ctx.createClient({ name: 'Burst shop', sandbox: true })
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id, state: 'burst' })
    const post = (age: string) => browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age, method_class: 'age_only' })
    const answers = await Promise.all(Array.from({ length: 25 }, () => post('12').then((r) => r.text())))
    expect(answers.filter((html) => html.includes('did not confirm')).length).toBeLessThanOrEqual(5)
    const [row] = await queryRows<{ failed_attempts: number }>(ctx.deps.db, sql`select failed_attempts from verification_sessions where state = 'burst'`)
    expect(row!.failed_attempts).toBe(5)
    const late = await post('30')
    expect(late.status).toBe(200)
    expect(late.headers.get('location')).toBeNull()
    expect(await late.text()).toContain('Too many attempts')
  })
})

describe.skipIf(!onPostgres)('a lock held outside the service', () => {
  test("an outside row lock on one client's row does not starve another client's exchange; the blocked ones fail in seconds", async () => {
    const locked = await ctx.createClient({ name: 'Locked shop' })
    const other = await ctx.createClient({ name: 'Other shop' })
    const lockedCodes = await Promise.all(Array.from({ length: 12 }, () => ctx.issueCode({ clientId: locked.id, state: 's' })))
    const { code } = await ctx.issueCode({ clientId: other.id, state: 's' })
    const outside = postgres(ctx.config.database.kind === 'postgres' ? ctx.config.database.url : '', { max: 1, onnotice: () => {} })
    const reserved = await outside.reserve()
    try {
      await reserved`begin`
      await reserved`select 1 from auth_codes where client_id = ${locked.id} for update`
      const started = performance.now()
      const blocked = lockedCodes.map(({ code }) =>
        ctx.exchange(locked.authorization, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 's' }).then((r) => r.status),
      )
      const free = await ctx.exchange(other.authorization, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 's' })
      expect(free.status).toBe(200)
      const statuses = await Promise.all(blocked)
      // Ten pooled connections wait out one lock_timeout (3 s) each, the last two a second one: never the 10 s deadline.
      expect(performance.now() - started).toBeLessThan(8_000)
      expect(statuses.every((status) => status === 500)).toBe(true)
    } finally {
      await reserved`rollback`
      reserved.release()
      await outside.end()
    }
    // Nothing was used up by the failures: each code still exchanges once.
    const retried = await ctx.exchange(locked.authorization, { grant_type: 'authorization_code', code: lockedCodes[0]!.code, redirect_uri: REDIRECT_URI, state: 's' })
    expect(retried.status).toBe(200)
  }, 20_000)
})

describe('completion is one statement', () => {
  test('the session is marked complete only together with its code: a failure half-way leaves it open', async () => {
    const sandbox = await ctx.createClient({ name: 'Half-way shop', sandbox: true })
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id, state: 'half-way' })
    const { session } = (await findSession(ctx.deps, /\/s\/([A-Za-z0-9_-]+)/.exec(page.html)![1]!, browser.jar.get('ofage_browser')))!
    // Fails after the claim, inside the statement: as a write that the database refuses, or a connection cut, would.
    const dying = issueCode(ctx.deps, { clientId: sandbox.id, redirectUri: REDIRECT_URI, ageOver: 18, methodClass: 'age_only' }, {
      claim: claimSession(session, ctx.clock.now()),
      alongside: { kind: 'dying', insert: (issued) => sql`insert into age_passes (id) select (1 / ${sql.placeholder('zero')}::integer)::text::uuid from ${issued}`, values: { zero: 0 } },
    })
    await expect(dying).rejects.toThrow()
    const [row] = await queryRows<{ completed_at: Date | null }>(ctx.deps.db, sql`select completed_at from verification_sessions where state = 'half-way'`)
    expect(row!.completed_at).toBeNull()
    const [audit] = await queryRows<{ rows: number }>(ctx.deps.db, sql`select count(*)::integer as rows from audit_logs where client_id = ${sandbox.id}`)
    expect(audit!.rows).toBe(0)
    // The visitor is not stuck: the same page completes.
    const done = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
    expect(done.status).toBe(303)
  })
})
