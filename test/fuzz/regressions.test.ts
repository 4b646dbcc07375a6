import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readStrictBody } from '../../src/lib/strict-request.ts'
import { createTestContext, json, PUBLIC_URL, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { testBrowser } from '../verification/browser.ts'

/**
 * What the route fuzzer (test/fuzz/routes.ts) found, each as the shrunk request that broke the property
 * and the rule it now keeps.
 */
let ctx: TestContext
let sandbox: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  ctx = await createTestContext({ env: { OFAGE_DEMO: '1' } })
  sandbox = await ctx.createClient({ name: 'Fuzz regressions', sandbox: true })
})
afterAll(() => ctx.close())

async function openSession() {
  const browser = testBrowser(ctx)
  const { page } = await browser.open({ client_id: sandbox.id, state: 'st' })
  return { browser, page, path: /\/s\/[A-Za-z0-9_-]+/.exec(page.html)![0] }
}

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)

describe('found by the route fuzzer', () => {
  test('the demo callback with a code the API refuses answers 400, not 502: the visitor sent a bad code, no upstream failed', async () => {
    const response = await ctx.request('/demo/callback?code=not-a-code&state=fuzz-demo-state', { headers: { cookie: 'ofage_demo_state=fuzz-demo-state' } })
    expect(response.status).toBe(400)
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(await response.text()).toContain('The code exchange failed: invalid_grant')
    // The code the fuzzer sent, a NUL byte, no longer reaches the demo: every query string is refused with it (issue 19).
    const nul = await ctx.request('/demo/callback?code=%00&state=fuzz-demo-state', { headers: { cookie: 'ofage_demo_state=fuzz-demo-state' } })
    expect(nul.status).toBe(400)
    expect(nul.headers.get('content-security-policy')).toContain("default-src 'none'")
  })

  test('a JSON body nested thousands deep is invalid_request, not a stack overflow (500), on the hosted page and the API', async () => {
    const { browser, path } = await openSession()
    const passkey = await browser.request(`${path}/passkey/options`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"__proto__":${nested(6844)},"csrf":"\\u0000"}`,
    })
    expect(passkey.status).toBe(400)
    expect(await json(passkey)).toMatchObject({ outcome: 'refused', error: 'invalid_request' })
    for (const [route, member] of [['/api/oauth/token', 'code'], ['/api/oauth/validate', 'token']]) {
      const response = await ctx.request(route!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"${member}":${nested(8000)}}` })
      expect(response.status).toBe(400)
      expect(await json(response)).toEqual({ error: 'invalid_request', error_description: 'The request body nests deeper than 32 levels' })
    }
  })

  test("the API's refusal of a body says why (a duplicate member), instead of the framework's generic \"could not be parsed\"", async () => {
    const response = await ctx.request('/api/oauth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"code":"a","code":"b"}' })
    expect(response.status).toBe(400)
    expect(await json(response)).toEqual({ error: 'invalid_request', error_description: 'The parameter "code" is given more than once' })
  })

  test('brackets inside JSON strings do not count as nesting', async () => {
    const response = await ctx.request('/api/oauth/validate', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: nested(100) }) })
    expect(response.status).toBe(401)
    expect((await json(response)).valid).toBe(false)
  })

  test('a NUL byte in the state at the token endpoint (valid Basic credentials, any code) is invalid_request, not a 500 (seed 777)', async () => {
    const shop = await ctx.createClient({ name: 'NUL shop' })
    const response = await ctx.exchange(shop.authorization, { grant_type: 'authorization_code', code: 'any', redirect_uri: REDIRECT_URI, state: 'a\u0000b' })
    expect(response.status).toBe(400)
    expect(await json(response)).toEqual({ error: 'invalid_request', error_description: 'The parameter "state" contains a NUL byte' })
  })

  test('no body field on any route reaches the database with a NUL byte or a lone surrogate: one check in the strict reader', async () => {
    const shop = await ctx.createClient({ name: 'NUL shop 2' })
    const { code } = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    const exchange = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 'st' }
    const posts: [string, Record<string, string>][] = [
      ...['code', 'redirect_uri', 'state', 'code_verifier', 'client_id', 'grant_type'].map((field): [string, Record<string, string>] => ['/api/oauth/token', { ...exchange, [field]: 'a\u0000b' }]),
      ['/api/oauth/token', { ...exchange, state: 'a\ud800' }],
      ['/api/oauth/validate', { token: 'a\u0000b' }],
      ...['redirect_uri', 'state', 'code_challenge', 'scope', 'response_type'].map((field): [string, Record<string, string>] => ['/api/oauth/par', { redirect_uri: REDIRECT_URI, [field]: 'x\u0000' }]),
    ]
    for (const [path, body] of posts) {
      for (const encoding of ['json', 'form'] as const) {
        // A form cannot carry a lone surrogate (percent-decoding makes it U+FFFD); JSON can.
        const payload = encoding === 'json' ? JSON.stringify(body) : new URLSearchParams(body).toString()
        const type = encoding === 'json' ? 'application/json' : 'application/x-www-form-urlencoded'
        if (encoding === 'form' && Object.values(body).some((value) => !value.isWellFormed())) continue
        const response = await ctx.request(path, { method: 'POST', headers: { 'content-type': type, authorization: shop.authorization }, body: payload })
        const answer = { path, encoding, body, status: response.status, error: (await json(response)).error }
        expect(answer).toEqual({ path, encoding, body, status: 400, error: 'invalid_request' })
      }
    }
    // The code was never burnt by any of them.
    expect((await ctx.exchange(shop.authorization, exchange)).status).toBe(200)
  })

  test('a NUL byte in any query string is invalid_request: usage dates, the page, the dashboard', async () => {
    const shop = await ctx.createClient({ name: 'NUL shop 3' })
    const usage = await ctx.request('/api/oauth/usage?start_date=2026-01-01%00', { headers: { authorization: shop.authorization } })
    expect(usage.status).toBe(400)
    expect(await json(usage)).toEqual({ error: 'invalid_request', error_description: 'The query string contains a NUL byte (%00)' })
    const page = await ctx.request(`/?client_id=${shop.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&state=a%00b`)
    expect(page.status).toBe(400)
    expect(await page.text()).toContain('invalid_request')
    // `%2500` is the text "%00", not a NUL.
    expect((await ctx.request(`/?client_id=${shop.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&state=a%2500b`)).status).toBe(200)
    expect((await ctx.request('/dashboard/sign-in?next=%00')).status).toBe(400)
  })

  test('a multipart field named after an Object.prototype member (constructor, valueOf) is a field, not "given more than once"', async () => {
    const { browser, page } = await openSession()
    const form = new FormData()
    for (const [name, value] of Object.entries({ csrf: page.csrf!, age: '30', method_class: 'age_only', constructor: 'x', valueOf: 'y' })) form.append(name, value)
    const response = await browser.request(page.action('/methods/sandbox'), { method: 'POST', body: form })
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toStartWith(REDIRECT_URI)
  })

  test('a part or form field named __proto__ is an own member of the body, never its prototype', async () => {
    const form = new FormData()
    form.append('__proto__', new File(['x'], 'frame.jpg', { type: 'image/jpeg' }))
    form.append('toString', 'a')
    const encoded = new Request(PUBLIC_URL, { method: 'POST', body: form })
    const type = encoded.headers.get('content-type')!
    const bytes = await encoded.arrayBuffer()
    const multipart = await readStrictBody(
      new Request(PUBLIC_URL, { method: 'POST', body: bytes, headers: { 'content-type': type, 'content-length': String(bytes.byteLength) } }),
      ['multipart'],
    )
    expect(Object.getPrototypeOf(multipart)).toBe(Object.prototype)
    expect(Object.keys(multipart).sort()).toEqual(['__proto__', 'toString'])
    expect(Object.hasOwn(multipart, '__proto__') && Array.isArray(multipart['__proto__'])).toBe(true)
    const urlencoded = await readStrictBody(
      new Request(PUBLIC_URL, { method: 'POST', body: '__proto__=a&csrf=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      ['form'],
    )
    expect(Object.getPrototypeOf(urlencoded)).toBe(Object.prototype)
    expect(Object.entries(urlencoded)).toEqual([['__proto__', 'a'], ['csrf', 'b']])
  })
})
