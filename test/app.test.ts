import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestContext, json, REDIRECT_URI, type TestContext } from './helpers.ts'

let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
const logged: string[] = []

beforeAll(async () => {
  ctx = await createTestContext({ log: { info() {}, error: (event, fields) => logged.push(JSON.stringify({ event, ...fields })) } })
  shop = await ctx.createClient()
})
afterAll(() => ctx.close())

describe('unknown paths and methods', () => {
  test.each([
    ['GET', '/api/nope'],
    ['GET', '/api/oauth/token'],
    ['DELETE', '/api/verify/public-key'],
    ['GET', '/api/oauth'],
    ['POST', '/api/.well-known/jwks.json'],
  ])('%s %s is a 404 JSON body', async (method, path) => {
    const response = await ctx.request(path, { method })
    expect(response.status).toBe(404)
    expect(await json(response)).toEqual({ error: 'not_found', error_description: expect.any(String) })
  })

  test.each(['/nothing-here', '/verify'])('GET %s (not an API path) is a 404 error page', async (path) => {
    const response = await ctx.request(path)
    expect(response.status).toBe(404)
    expect(response.headers.get('content-type')).toContain('text/html')
    const page = await response.text()
    expect(page).toStartWith('<!doctype html>')
    expect(page).toContain('not_found')
  })

  test('/api/verify/token without a token is the 401 invalid-token body', async () => {
    for (const path of ['/api/verify/token', '/api/verify/token/']) {
      const response = await ctx.request(path)
      expect(response.status).toBe(401)
      expect(await json(response)).toEqual({ success: false, valid: false, message: 'Invalid or expired token' })
    }
  })
})

describe('no input makes an API route answer 500 or HTML', () => {
  const awkward = [
    '',
    'null',
    '{}',
    '[]',
    '{"grant_type":null}',
    '{"grant_type":"authorization_code","code":"\u0000","redirect_uri":"\ud800"}',
    '{"token":{"$ne":1}}',
    '{"a":' + '['.repeat(5000) + ']'.repeat(5000) + '}',
    '\uFEFF{"grant_type":"authorization_code"}',
    'grant_type=authorization_code&code=x',
    '%%%',
  ]
  const contentTypes = ['application/json', 'application/x-www-form-urlencoded', 'text/plain', 'application/xml']
  const routes: [string, string][] = [
    ['POST', '/api/oauth/token'],
    ['POST', '/api/oauth/validate'],
  ]

  for (const [method, path] of routes) {
    test(`${method} ${path} with awkward bodies and content types`, async () => {
      for (const body of awkward) {
        for (const contentType of contentTypes) {
          for (const authorization of [undefined, shop.authorization, 'Basic', 'Basic Og==', `Basic ${'A'.repeat(10_000)}`]) {
            const response = await ctx.request(path, {
              method,
              headers: { 'content-type': contentType, ...(authorization && { authorization }) },
              body,
            })
            expect(response.status).toBeLessThan(500)
            expect(response.headers.get('content-type')).toContain('application/json')
            await response.json()
          }
        }
      }
    })
  }

  test('GET routes with awkward paths and query strings', async () => {
    const paths = [
      '/api/verify/token/%00',
      '/api/verify/token/%FF%FE',
      `/api/verify/token/${'a.'.repeat(3000)}`,
      '/api/verify/token/..%2F..%2Fetc',
      '/api/oauth/usage?period[]=day',
      '/api/oauth/usage?start_date=%',
      '/api/oauth/usage?start_date=9999-12-31T23:59:59Z&end_date=10000-01-01',
      '/api/oauth/usage?start_date=0000-01-01',
      '/api/.well-known/jwks.json?x=%',
    ]
    for (const path of paths) {
      for (const authorization of [undefined, shop.authorization]) {
        const response = await ctx.request(path, { headers: authorization ? { authorization } : {} })
        expect(response.status).toBeLessThan(500)
        expect(response.headers.get('content-type')).toContain('application/json')
      }
    }
  })

  test('nothing above was logged as an internal error', () => {
    expect(logged).toEqual([])
  })
})

describe('GET /api/openapi.json', () => {
  test('is generated from the route schemas and lists every API operation', async () => {
    const response = await ctx.request('/api/openapi.json')
    expect(response.status).toBe(200)
    const document = await json(response)
    expect(document.openapi).toMatch(/^3\./)
    expect(Object.keys(document.paths).sort()).toEqual(
      [
        '/',
        '/.well-known/oauth-authorization-server',
        '/api/.well-known/jwks.json',
        '/api/.well-known/oauth-authorization-server',
        '/api/oauth/par',
        '/api/oauth/token',
        '/api/oauth/usage',
        '/api/oauth/validate',
        '/api/verify/public-key',
        '/api/verify/token/{access_token}',
        '/gate/auth',
        '/healthz',
        '/metrics',
        '/readyz',
      ].sort(),
    )
    const token = document.paths['/api/oauth/token'].post
    expect(Object.keys(token.requestBody.content)).toEqual(['application/json', 'application/x-www-form-urlencoded'])
    expect(token.requestBody.content['application/json'].schema.required.sort()).toEqual(['code', 'grant_type', 'redirect_uri'])
    const validate = document.paths['/api/oauth/validate'].post
    expect(Object.keys(validate.requestBody.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded'])
  })

  test('every operation says its credentials; integers are integers; the hosted page lists its parameters (issue 11)', async () => {
    const document = await json(await ctx.request('/api/openapi.json'))
    for (const [path, operations] of Object.entries<Record<string, { security?: unknown }>>(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) expect({ [`${method} ${path}`]: Array.isArray(operation.security) }).toEqual({ [`${method} ${path}`]: true })
    }
    expect(document.paths['/api/oauth/token'].post.security).toEqual([{ clientBasic: [] }])
    expect(document.paths['/api/oauth/usage'].get.security).toEqual([{ clientBasic: [] }])
    expect(document.paths['/api/oauth/par'].post.security).toEqual([{ clientBasic: [] }])
    expect(document.paths['/api/verify/token/{access_token}'].get.security).toEqual([])
    const validation = document.paths['/api/verify/token/{access_token}'].get.responses['200'].content['application/json'].schema
    expect(validation.properties.age_over).toEqual({ type: 'integer' })
    const page = document.paths['/'].get.parameters.map((parameter: { name: string }) => parameter.name)
    expect(page).toEqual(expect.arrayContaining(['client_id', 'redirect_uri', 'state', 'age_required', 'code_challenge', 'code_challenge_method', 'request_uri', 'response_type']))
  })
})

describe('the code exchange logs nothing secret', () => {
  test('no code, secret or token appears in any log line', async () => {
    const lines: string[] = []
    const logging = await createTestContext({ log: { info: (e, f) => lines.push(JSON.stringify({ e, ...f })), error: (e, f) => lines.push(JSON.stringify({ e, ...f })) } })
    try {
      const client = await logging.createClient()
      const { code } = await logging.issueCode({ clientId: client.id, state: 'st' })
      const body = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 'st' }
      const { access_token } = await json(await logging.exchange(client.authorization, body))
      await logging.exchange(client.authorization, body)
      const all = lines.join('\n')
      for (const secret of [code, client.secret, access_token]) expect(all).not.toContain(secret)
    } finally {
      await logging.close()
    }
  })
})
