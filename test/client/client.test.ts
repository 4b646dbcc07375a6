import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { exportJWK, generateKeyPair } from 'jose'
import { KeySet } from 'ofage/client/key-set'
import { OfageClient } from 'ofage/client'
import { fixedClock } from '../../src/lib/clock.ts'
import { createClient } from '../../src/clients/registry.ts'
import { issueCode } from '../../src/oauth/issue-code.ts'
import { signAgeToken } from '../../src/oauth/tokens.ts'
import { startTestServer, type RunningServer } from '../browser/chromium.ts'
import { callback, testBrowser } from '../verification/browser.ts'

/**
 * The client library (`ofage/client`, issue 11) against a real listening server: the whole flow as a site
 * writes it, typed failures, local validation by the spec's rules, and the key-set fetching rules.
 */
const CALLBACK = 'https://shop.example/callback'
let running: RunningServer
let sandboxShop: { id: string; secret: string }
let liveShop: { id: string; secret: string }

beforeAll(async () => {
  running = await startTestServer()
  const create = async (sandbox: boolean) => {
    const { client, secret } = await createClient(running.services.deps, { name: sandbox ? 'Test shop' : 'Live shop', redirectUris: [CALLBACK], sandbox })
    return { id: client.id, secret }
  }
  sandboxShop = await create(true)
  liveShop = await create(false)
}, 30_000)
afterAll(() => running.stop())

const ofageFor = (shop: { id: string; secret: string }) => new OfageClient({ baseUrl: running.baseUrl, clientId: shop.id, clientSecret: shop.secret })

/** The visitor: opens the URL, passes the sandbox check, comes back with the callback's parameters. */
async function visit(url: string) {
  const browser = testBrowser({ baseUrl: running.baseUrl })
  const target = new URL(url)
  const { page } = await browser.open(Object.fromEntries(target.searchParams))
  return callback(await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' }))!
}

describe('the flow through the library', () => {
  test('pushed by default: the URL carries client_id and request_uri only; exchange and local validation succeed', async () => {
    const ofage = ofageFor(sandboxShop)
    const start = await ofage.authorizationUrl({ redirectUri: CALLBACK, ageRequired: 21 })
    expect([...new URL(start.url).searchParams.keys()].sort()).toEqual(['client_id', 'request_uri'])
    const back = await visit(start.url)
    expect(back.state).toBe(start.state)
    const exchanged = await ofage.exchangeCode({ code: back.code, redirectUri: CALLBACK, codeVerifier: start.codeVerifier })
    if (!exchanged.ok) throw new Error(exchanged.error)
    // A sandbox client's token is a test token: refused unless the site asks for it.
    expect(await ofage.verifyAgeToken(exchanged.accessToken, { minimumAge: 21 })).toEqual({ ok: false, reason: 'sandbox_token' })
    const check = await ofage.verifyAgeToken(exchanged.accessToken, { minimumAge: 21, allowSandbox: true })
    expect(check.ok && check.claims).toMatchObject({ age_verified: true, age_over: 21, aud: sandboxShop.id, sandbox: true })
    expect((await ofage.verifyAgeToken(exchanged.accessToken, { minimumAge: 25, allowSandbox: true })).ok).toBe(false)
  })

  test('without pushing: PKCE and the parameters in the URL; a live token passes without allowSandbox', async () => {
    const ofage = ofageFor(liveShop)
    const start = await ofage.authorizationUrl({ redirectUri: CALLBACK, ageRequired: 18, pushed: false, state: 'mine' })
    const query = new URL(start.url).searchParams
    expect(query.get('code_challenge_method')).toBe('S256')
    expect(query.get('state')).toBe('mine')
    // A live client's page has no sandbox form: the code comes from the service directly, as a check would.
    const { code } = await issueCode(running.services.deps, { clientId: liveShop.id, redirectUri: CALLBACK, state: 'mine', ageOver: 18, methodClass: 'age_only', codeChallenge: query.get('code_challenge') })
    const exchanged = await ofage.exchangeCode({ code, redirectUri: CALLBACK, codeVerifier: start.codeVerifier })
    if (!exchanged.ok) throw new Error(exchanged.error)
    const check = await ofage.verifyAgeToken(exchanged.accessToken, { minimumAge: 18 })
    expect(check).toMatchObject({ ok: true, claims: { age_over: 18 } })
    expect(check.ok && check.claims.sandbox).toBeUndefined()
  })
})

describe('typed failures', () => {
  test("exchange refusals carry the service's code: a reused code, a wrong verifier", async () => {
    const ofage = ofageFor(sandboxShop)
    const start = await ofage.authorizationUrl({ redirectUri: CALLBACK })
    const back = await visit(start.url)
    expect(await ofage.exchangeCode({ code: back.code, redirectUri: CALLBACK, codeVerifier: 'x'.repeat(43) })).toMatchObject({ ok: false, status: 400, error: 'invalid_grant' })
    expect((await ofage.exchangeCode({ code: back.code, redirectUri: CALLBACK, codeVerifier: start.codeVerifier })).ok).toBe(true)
    expect(await ofage.exchangeCode({ code: back.code, redirectUri: CALLBACK, codeVerifier: start.codeVerifier })).toMatchObject({ ok: false, status: 400, error: 'code_already_used' })
  })

  test('tokens: another site\'s, expired, tampered, garbage', async () => {
    const ofage = ofageFor(sandboxShop)
    const start = await ofage.authorizationUrl({ redirectUri: CALLBACK })
    const back = await visit(start.url)
    const exchanged = await ofage.exchangeCode({ code: back.code, redirectUri: CALLBACK, codeVerifier: start.codeVerifier })
    if (!exchanged.ok) throw new Error(exchanged.error)
    const token = exchanged.accessToken
    expect(await ofageFor(liveShop).verifyAgeToken(token, { minimumAge: 18, allowSandbox: true })).toEqual({ ok: false, reason: 'wrong_audience' })
    const [head, body, signature] = token.split('.')
    const tampered = `${head}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), age_over: 99 })).toString('base64url')}.${signature}`
    expect(await ofage.verifyAgeToken(tampered, { minimumAge: 18, allowSandbox: true })).toEqual({ ok: false, reason: 'invalid_signature' })
    expect(await ofage.verifyAgeToken('not a token', { minimumAge: 18 })).toEqual({ ok: false, reason: 'malformed' })
    const deps = { ...running.services.deps, clock: fixedClock(new Date(Date.now() - 3_600_000)), issuerUrl: running.services.deps.config.issuerUrl }
    const verification = { transactionId: crypto.randomUUID(), clientId: sandboxShop.id, subject: 's', ageOver: 18, methodClass: 'age_only' as const, verificationLevel: 'first_verification' as const }
    const expired = await signAgeToken(deps, verification, { sandbox: true })
    expect(await ofage.verifyAgeToken(expired, { minimumAge: 18, allowSandbox: true })).toEqual({ ok: false, reason: 'expired' })
  })
})

describe('the key set as SPEC.md §8 asks', () => {
  async function keySetServer(failFirst = 0) {
    const { publicKey } = await generateKeyPair('RS256')
    const jwk = { ...(await exportJWK(publicKey)), alg: 'RS256' }
    let calls = 0
    const fetcher = (async () => {
      calls++
      if (calls <= failFirst) return new Response('busy', { status: 503 })
      return Response.json({ keys: [jwk] })
    }) as unknown as typeof fetch
    let now = 1_000_000
    const keys = new KeySet(async () => 'https://age.example/jwks.json', fetcher, () => now)
    return { keys, calls: () => calls, advance: (ms: number) => (now += ms) }
  }

  test('cached 24 hours, then fetched again', async () => {
    const server = await keySetServer()
    await server.keys.current()
    await server.keys.current()
    expect(server.calls()).toBe(1)
    server.advance(24 * 60 * 60_000)
    await server.keys.current()
    expect(server.calls()).toBe(2)
  })

  test('at most 10 fetches a minute, however often a refresh is asked for', async () => {
    const server = await keySetServer()
    for (let i = 0; i < 15; i++) expect(await server.keys.current(true)).toBeDefined()
    expect(server.calls()).toBe(10)
    server.advance(60_000)
    await server.keys.current(true)
    expect(server.calls()).toBe(11)
  })

  test('a failed fetch is tried up to 3 times', async () => {
    const twice = await keySetServer(2)
    expect(await twice.keys.current()).toBeDefined()
    expect(twice.calls()).toBe(3)
    const always = await keySetServer(10)
    expect(await always.keys.current()).toBeUndefined()
    expect(always.calls()).toBe(3)
  })
})

describe('from Node', () => {
  test('`bun run build:client` gives Node the same library through the package\'s exports', async () => {
    const build = Bun.spawnSync(['bun', 'run', 'build:client'], { stdout: 'pipe', stderr: 'pipe' })
    expect(build.exitCode).toBe(0)
    const script = `const { OfageClient } = await import('ofage/client')
const ofage = new OfageClient({ baseUrl: process.argv[1], clientId: 'cl_x' })
console.log(JSON.stringify([(await ofage.discover()).issuer, await ofage.verifyAgeToken('a.b.c', { minimumAge: 18 })]))`
    const node = Bun.spawn(['node', '--input-type=module', '-e', script, running.baseUrl], { stdout: 'pipe', stderr: 'pipe' })
    try {
      const [out, err] = [await new Response(node.stdout).text(), await new Response(node.stderr).text()]
      expect(err).toBe('')
      expect(JSON.parse(out)).toEqual([running.services.deps.config.issuerUrl, { ok: false, reason: 'malformed' }])
    } finally {
      node.kill()
    }
  }, 30_000)
})
