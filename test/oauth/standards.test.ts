import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { randomToken } from '../../src/lib/crypto.ts'
import { createTestContext, json, PUBLIC_URL, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { callback, testBrowser } from '../verification/browser.ts'

/**
 * Issue 11: what standard OAuth clients send, beside the spec's own JSON exchange: RFC 8414 metadata,
 * form-encoded exchanges and client_secret_post, PKCE (RFC 7636), response_type, the callback's `iss`
 * (RFC 9207), and pushed authorization requests (RFC 9126).
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  ctx = await createTestContext()
  shop = await ctx.createClient({ name: 'Standard shop', sandbox: true })
})
afterAll(() => ctx.close())

const pkcePair = () => {
  const verifier = randomToken(32)
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** The visitor's part: the page for `query`, the sandbox check passed, the callback's parameters. */
async function authorize(query: Record<string, string>, age = '30') {
  const browser = testBrowser(ctx)
  const { response, page } = await browser.open({ client_id: shop.id, ...query })
  if (response.status !== 200) return { status: response.status, html: page.html }
  const back = callback(await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age, method_class: 'age_only' }))!
  return { status: 200, back, html: page.html }
}

function formExchange(fields: Record<string, string>, headers: Record<string, string> = { authorization: shop.authorization }) {
  return ctx.request('/api/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  })
}

describe('authorization server metadata (RFC 8414)', () => {
  test.each(['/.well-known/oauth-authorization-server', '/api/.well-known/oauth-authorization-server'])('%s names the page, the token, key, pushed-request and validation endpoints', async (path) => {
    const response = await ctx.request(path)
    expect(response.status).toBe(200)
    const metadata = await json(response)
    expect(metadata).toMatchObject({
      issuer: ctx.config.issuerUrl,
      authorization_endpoint: `${ctx.config.appUrl}/`,
      token_endpoint: `${PUBLIC_URL}/api/oauth/token`,
      jwks_uri: `${PUBLIC_URL}/api/.well-known/jwks.json`,
      pushed_authorization_request_endpoint: `${PUBLIC_URL}/api/oauth/par`,
      introspection_endpoint: `${PUBLIC_URL}/api/oauth/validate`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    })
  })

  test('the documents it points at exist: service_documentation is the OpenAPI document (it named /api/openapi, a 404), jwks_uri the key set', async () => {
    const metadata = await json(await ctx.request('/.well-known/oauth-authorization-server'))
    const documentation = await ctx.request(new URL(metadata.service_documentation).pathname)
    expect(documentation.status).toBe(200)
    expect((await json(documentation)).openapi).toMatch(/^3\./)
    const keys = await ctx.request(new URL(metadata.jwks_uri).pathname)
    expect(keys.status).toBe(200)
    expect((await json(keys)).keys).toHaveLength(1)
  })
})

describe('the exchange as RFC 6749 §4.1.3 sends it', () => {
  test('form-encoded with HTTP Basic, and with client_secret_post; the callback carries iss', async () => {
    for (const headers of [{ authorization: shop.authorization }, {}] as Record<string, string>[]) {
      const { back } = await authorize({ state: 'form' })
      expect(back!.url.searchParams.get('iss')).toBe(ctx.config.issuerUrl)
      const credentials: Record<string, string> = 'authorization' in headers ? {} : { client_id: shop.id, client_secret: shop.secret }
      const response = await formExchange({ grant_type: 'authorization_code', code: back!.code, redirect_uri: REDIRECT_URI, state: 'form', ...credentials }, headers)
      expect(response.status).toBe(200)
      expect(await json(response)).toMatchObject({ token_type: 'Bearer', expires_in: 600 })
    }
  })

  test('two authentication methods at once, or a body client_id that is not the Basic one, is invalid_request; a wrong posted secret is invalid_client', async () => {
    const { back } = await authorize({ state: 's' })
    const fields = { grant_type: 'authorization_code', code: back!.code, redirect_uri: REDIRECT_URI, state: 's' }
    const both = await formExchange({ ...fields, client_id: shop.id, client_secret: shop.secret })
    expect(both.status).toBe(400)
    expect((await json(both)).error).toBe('invalid_request')
    const other = await formExchange({ ...fields, client_id: 'cl_someone_else' })
    expect((await json(other)).error).toBe('invalid_request')
    const wrong = await formExchange({ ...fields, client_id: shop.id, client_secret: 'wrong' }, {})
    expect(wrong.status).toBe(401)
    expect((await json(wrong)).error).toBe('invalid_client')
    // None of them used the code.
    expect((await formExchange(fields)).status).toBe(200)
  })
})

describe('PKCE (RFC 7636)', () => {
  test('the verifier redeems the code, without state at the exchange', async () => {
    const { verifier, challenge } = pkcePair()
    const { back } = await authorize({ state: 'pkce', code_challenge: challenge, code_challenge_method: 'S256' })
    const response = await formExchange({ grant_type: 'authorization_code', code: back!.code, redirect_uri: REDIRECT_URI, code_verifier: verifier })
    expect(response.status).toBe(200)
  })

  test('a wrong verifier, or none, fails; a verifier for a code issued without a challenge fails (no downgrade)', async () => {
    const { challenge } = pkcePair()
    const { back } = await authorize({ code_challenge: challenge, code_challenge_method: 'S256' })
    const fields = { grant_type: 'authorization_code', code: back!.code, redirect_uri: REDIRECT_URI }
    const wrong = await formExchange({ ...fields, code_verifier: pkcePair().verifier })
    expect(wrong.status).toBe(400)
    expect((await json(wrong)).error).toBe('invalid_grant')
    expect((await json(await formExchange(fields))).error).toBe('invalid_request')

    const plain = await authorize({ state: 'no-pkce' })
    const downgraded = await formExchange({ grant_type: 'authorization_code', code: plain.back!.code, redirect_uri: REDIRECT_URI, state: 'no-pkce', code_verifier: pkcePair().verifier })
    expect((await json(downgraded)).error).toBe('invalid_grant')
  })

  test('without PKCE, the spec keeps state required at the exchange', async () => {
    const { back } = await authorize({ state: 'kept' })
    const response = await formExchange({ grant_type: 'authorization_code', code: back!.code, redirect_uri: REDIRECT_URI })
    expect((await json(response)).error).toBe('invalid_request')
  })

  test.each([
    ['method plain', { code_challenge: pkcePair().challenge, code_challenge_method: 'plain' }],
    ['no method (plain by default)', { code_challenge: pkcePair().challenge }],
    ['a challenge of the wrong shape', { code_challenge: 'short', code_challenge_method: 'S256' }],
    ['a method without a challenge', { code_challenge_method: 'S256' }],
  ])('%s is refused on the page', async (_, query) => {
    const { status, html } = await authorize({ redirect_uri: REDIRECT_URI, ...query })
    expect(status).toBe(400)
    expect(html).toContain('invalid_request')
  })

  test('a client that requires PKCE gets no page without a challenge', async () => {
    const strict = await ctx.createClient({ name: 'Strict shop', sandbox: true, requirePkce: true })
    const browser = testBrowser(ctx)
    expect((await browser.open({ client_id: strict.id })).response.status).toBe(400)
    expect((await browser.open({ client_id: strict.id, code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })).response.status).toBe(200)
  })
})

describe('response_type and scope', () => {
  test('response_type=code and any scope open the page; another response_type is unsupported_response_type', async () => {
    expect((await authorize({ response_type: 'code', scope: 'openid age' })).status).toBe(200)
    const { status, html } = await authorize({ response_type: 'token' })
    expect(status).toBe(400)
    expect(html).toContain('unsupported_response_type')
  })
})

describe('pushed authorization requests (RFC 9126)', () => {
  const push = (fields: Record<string, string>, authorization = shop.authorization) =>
    ctx.request('/api/oauth/par', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization }, body: new URLSearchParams(fields).toString() })

  test('the page opens from client_id and request_uri alone, with the pushed threshold, whatever else the URL says', async () => {
    const { verifier, challenge } = pkcePair()
    const pushed = await push({ response_type: 'code', redirect_uri: REDIRECT_URI, state: 'par', age_required: '21', code_challenge: challenge, code_challenge_method: 'S256' })
    expect(pushed.status).toBe(201)
    const { request_uri, expires_in } = await json(pushed)
    expect(request_uri).toStartWith('urn:ietf:params:oauth:request_uri:')
    expect(expires_in).toBe(90)
    // The visitor edits the URL down to 18: ignored, the pushed 21 stands.
    const { back } = await authorize({ request_uri, age_required: '18', state: 'edited' })
    expect(back!.state).toBe('par')
    const exchanged = await formExchange({ grant_type: 'authorization_code', code: back!.code, redirect_uri: REDIRECT_URI, code_verifier: verifier })
    const { access_token } = await json(exchanged)
    const validated = await json(await ctx.request(`/api/verify/token/${access_token}`))
    expect(validated.age_over).toBe(21)
  })

  test('a client that requires pushed requests refuses the plain URL; another client cannot open a request_uri; it expires', async () => {
    const parOnly = await ctx.createClient({ name: 'PAR shop', sandbox: true, requirePushedRequests: true })
    const browser = testBrowser(ctx)
    const plain = await browser.open({ client_id: parOnly.id, age_required: '18' })
    expect(plain.response.status).toBe(400)
    const { request_uri } = await json(await push({ redirect_uri: REDIRECT_URI, age_required: '21' }, parOnly.authorization))
    expect((await browser.open({ client_id: parOnly.id, request_uri })).response.status).toBe(200)
    expect((await browser.open({ client_id: shop.id, request_uri })).response.status).toBe(400)
    ctx.clock.advance(91_000)
    expect((await browser.open({ client_id: parOnly.id, request_uri })).response.status).toBe(400)
  })

  test('a pushed request that itself carries request_uri is invalid_request (RFC 9126 §2.1)', async () => {
    const { request_uri } = await json(await push({ redirect_uri: REDIRECT_URI }))
    const pushes: Record<string, string>[] = [{ redirect_uri: REDIRECT_URI, request_uri }, { redirect_uri: REDIRECT_URI, request_uri: 'https://shop.example/req' }, { request_uri }]
    for (const fields of pushes) {
      const chained = await push(fields)
      expect(chained.status).toBe(400)
      expect(await json(chained)).toEqual({ error: 'invalid_request', error_description: 'A pushed request must not carry request_uri (RFC 9126 §2.1)' })
    }
    const asJson = await ctx.request('/api/oauth/par', { method: 'POST', headers: { 'content-type': 'application/json', authorization: shop.authorization }, body: JSON.stringify({ redirect_uri: REDIRECT_URI, request_uri }) })
    expect(asJson.status).toBe(400)
    expect((await json(asJson)).error).toBe('invalid_request')
  })

  test("a pushed-requests-only client's plain link says a pushed request is required, in English and German", async () => {
    const parOnly = await ctx.createClient({ name: 'PAR only shop', requirePushedRequests: true })
    const url = `/?client_id=${parOnly.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`
    const english = await ctx.request(url)
    expect(english.status).toBe(400)
    const text = await english.text()
    expect(text).toContain('prepare each age check with this service first (a pushed request)')
    expect(text).not.toContain('incomplete or not valid')
    expect(text).toContain('invalid_request')
    const german = await ctx.request(`${url}&lang=de`)
    expect(await german.text()).toContain('vorab übermittelte Anfrage')
    // Any other invalid link keeps the general sentence.
    expect(await (await ctx.request(`/?client_id=${parOnly.id}&age_required=x`)).text()).toContain('incomplete or not valid')
  })

  test('the push is checked as the page would be, and needs client credentials', async () => {
    const unregistered = await push({ redirect_uri: 'https://evil.example/cb' })
    expect(unregistered.status).toBe(400)
    expect((await json(unregistered)).error).toBe('invalid_redirect_uri')
    const plainPkce = await push({ redirect_uri: REDIRECT_URI, code_challenge: pkcePair().challenge, code_challenge_method: 'plain' })
    expect((await json(plainPkce)).error).toBe('invalid_request')
    const anonymous = await ctx.request('/api/oauth/par', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `redirect_uri=${encodeURIComponent(REDIRECT_URI)}` })
    expect(anonymous.status).toBe(401)
    expect((await json(anonymous)).error).toBe('invalid_client')
  })
})
