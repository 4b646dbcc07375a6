import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { updateClient } from '../../src/clients/registry.ts'
import { basic, createTestContext, json, REDIRECT_URI, type TestContext } from '../helpers.ts'

let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  ctx = await createTestContext()
  shop = await ctx.createClient()
})
afterAll(() => ctx.close())

const exchangeBody = (code: string, extra: Record<string, unknown> = {}) => ({
  grant_type: 'authorization_code',
  code,
  redirect_uri: REDIRECT_URI,
  state: 'st',
  ...extra,
})

async function expectError(response: Response, status: number, error: string) {
  expect(response.status).toBe(status)
  const body = await json(response)
  expect(body.error).toBe(error)
  expect(typeof body.error_description).toBe('string')
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description'])
  expect(response.headers.get('cache-control')).toBe('no-store')
}

describe('POST /api/oauth/token: success', () => {
  test('exchanges a code for a Bearer token with transaction_id and no-store', async () => {
    const { code, transactionId } = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    const response = await ctx.exchange(shop.authorization, exchangeBody(code))
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const body = await json(response)
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type', 'transaction_id'])
    expect(body.token_type).toBe('Bearer')
    expect(body.expires_in).toBe(600)
    expect(body.transaction_id).toBe(transactionId)
    expect(body.transaction_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(body.access_token.split('.')).toHaveLength(3)
  })

  test('a code issued without state is exchanged without state', async () => {
    const { code } = await ctx.issueCode({ clientId: shop.id, state: null })
    const response = await ctx.exchange(shop.authorization, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI })
    expect(response.status).toBe(200)
  })

  test('extra body members are ignored', async () => {
    const { code } = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    const response = await ctx.exchange(shop.authorization, exchangeBody(code, { client_id: shop.id, scope: 'x' }))
    expect(response.status).toBe(200)
  })

  test('Content-Type with a charset parameter is accepted', async () => {
    const { code } = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    const response = await ctx.request('/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', authorization: shop.authorization },
      body: JSON.stringify(exchangeBody(code)),
    })
    expect(response.status).toBe(200)
  })
})

describe('client authentication (SPEC.md §5, RFC 6749 §2.3.1)', () => {
  test('missing Authorization is invalid_client 401 with WWW-Authenticate', async () => {
    const response = await ctx.request('/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(exchangeBody('x')),
    })
    await expectError(response, 401, 'invalid_client')
    expect(response.headers.get('www-authenticate')).toContain('Basic')
  })

  test.each([
    ['wrong secret', () => basic(shop.id, 'not-the-secret')],
    ['unknown client', () => basic('cl_unknown', shop.secret)],
    ['Bearer scheme', () => `Bearer ${shop.secret}`],
    ['not base64', () => 'Basic !!!'],
    ['no colon', () => `Basic ${Buffer.from(shop.id).toString('base64')}`],
    ['bad percent-encoding', () => `Basic ${Buffer.from(`${shop.id}:%zz`).toString('base64')}`],
    ['empty secret', () => `Basic ${Buffer.from(`${shop.id}:`).toString('base64')}`],
  ])('%s is invalid_client 401', async (_, authorization) => {
    await expectError(await ctx.exchange(authorization(), exchangeBody('x')), 401, 'invalid_client')
  })

  test('a secret with "+" and "%" works when form-encoded before Base64', async () => {
    const odd = await ctx.createClient({ secret: 'a+b%c d:e/f' })
    const { code } = await ctx.issueCode({ clientId: odd.id, state: 'st' })
    // The same secret sent raw: "+" decodes to a space and "%c " is not an escape, so it must fail.
    await expectError(await ctx.exchange(basic(odd.id, odd.secret, false), exchangeBody(code)), 401, 'invalid_client')
    const response = await ctx.exchange(basic(odd.id, odd.secret), exchangeBody(code))
    expect(response.status).toBe(200)
  })

  test('a suspended client with the right secret gets client_suspended 401', async () => {
    const paused = await ctx.createClient()
    const { code } = await ctx.issueCode({ clientId: paused.id, state: 'st' })
    await updateClient(ctx.deps.db, paused.id, { status: 'suspended' })
    await expectError(await ctx.exchange(paused.authorization, exchangeBody(code)), 401, 'client_suspended')
    await expectError(await ctx.exchange(basic(paused.id, 'wrong'), exchangeBody(code)), 401, 'invalid_client')
  })
})

describe('request validation: invalid_request 400', () => {
  const raw = (body: string, contentType = 'application/json') =>
    ctx.request('/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': contentType, authorization: shop.authorization },
      body,
    })

  test.each([
    ['missing code', { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI }],
    ['missing redirect_uri', { grant_type: 'authorization_code', code: 'abc' }],
    ['missing grant_type', { code: 'abc', redirect_uri: REDIRECT_URI }],
    ['code not a string', { grant_type: 'authorization_code', code: 42, redirect_uri: REDIRECT_URI }],
    ['empty code', { grant_type: 'authorization_code', code: '', redirect_uri: REDIRECT_URI }],
    ['state not a string', { grant_type: 'authorization_code', code: 'abc', redirect_uri: REDIRECT_URI, state: ['a'] }],
  ])('%s', async (_, body) => {
    await expectError(await raw(JSON.stringify(body)), 400, 'invalid_request')
  })

  test('a duplicate key in the JSON body', async () => {
    const body = `{"grant_type":"authorization_code","code":"a","code":"b","redirect_uri":"${REDIRECT_URI}"}`
    const response = await raw(body)
    await expectError(response, 400, 'invalid_request')
  })

  test('a duplicate key is found however the key is escaped', async () => {
    const body = `{"grant_type":"authorization_code","code":"a","c\\u006fde":"b","redirect_uri":"${REDIRECT_URI}"}`
    await expectError(await raw(body), 400, 'invalid_request')
  })

  test.each([
    ['not JSON', '{grant_type: authorization_code'],
    ['empty body', ''],
    ['a JSON array', '[]'],
    ['a JSON string', '"authorization_code"'],
    ['trailing garbage', '{"a":1} x'],
  ])('%s', async (_, body) => {
    await expectError(await raw(body), 400, 'invalid_request')
  })

  test.each(['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x', ''])(
    'Content-Type "%s"',
    async (contentType) => {
      const response = await raw(JSON.stringify(exchangeBody('abc')), contentType)
      await expectError(response, 400, 'invalid_request')
    },
  )

  test('a body over 16 KiB', async () => {
    await expectError(await raw(JSON.stringify(exchangeBody('abc', { pad: 'x'.repeat(20_000) }))), 400, 'invalid_request')
  })

  test('a __proto__ member cannot change what the body validates as', async () => {
    const body = `{"__proto__":{"code":"x"},"grant_type":"authorization_code","redirect_uri":"${REDIRECT_URI}"}`
    await expectError(await raw(body), 400, 'invalid_request')
  })

  test('unsupported_grant_type is 400', async () => {
    await expectError(await raw(JSON.stringify(exchangeBody('abc', { grant_type: 'client_credentials' }))), 400, 'unsupported_grant_type')
  })
})

describe('code rules (SPEC.md §3)', () => {
  test('an unknown code is invalid_grant', async () => {
    await expectError(await ctx.exchange(shop.authorization, exchangeBody('no-such-code')), 400, 'invalid_grant')
  })

  test('a code issued to another client is invalid_grant and stays usable by its client', async () => {
    const other = await ctx.createClient()
    const { code } = await ctx.issueCode({ clientId: other.id, state: 'st' })
    await expectError(await ctx.exchange(shop.authorization, exchangeBody(code)), 400, 'invalid_grant')
    expect((await ctx.exchange(other.authorization, exchangeBody(code))).status).toBe(200)
  })

  test('a code is valid for 60 seconds: at 59.999 s it works, at 60 s it is expired_code', async () => {
    const fresh = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    const stale = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    ctx.clock.advance(59_999)
    expect((await ctx.exchange(shop.authorization, exchangeBody(fresh.code))).status).toBe(200)
    ctx.clock.advance(1)
    await expectError(await ctx.exchange(shop.authorization, exchangeBody(stale.code)), 400, 'expired_code')
  })

  test('a second exchange is code_already_used and revokes the first token', async () => {
    const { code } = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    const first = await json(await ctx.exchange(shop.authorization, exchangeBody(code)))
    expect((await ctx.request(`/api/verify/token/${first.access_token}`)).status).toBe(200)
    await expectError(await ctx.exchange(shop.authorization, exchangeBody(code)), 400, 'code_already_used')
    expect((await ctx.request(`/api/verify/token/${first.access_token}`)).status).toBe(401)
  })

  test('a replay after expiry is still code_already_used', async () => {
    const { code } = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    expect((await ctx.exchange(shop.authorization, exchangeBody(code))).status).toBe(200)
    ctx.clock.advance(120_000)
    await expectError(await ctx.exchange(shop.authorization, exchangeBody(code)), 400, 'code_already_used')
  })

  test('a different redirect_uri is invalid_redirect_uri and does not use up the code', async () => {
    const { code } = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    for (const uri of [`${REDIRECT_URI}/`, REDIRECT_URI.replace('https', 'http'), `${REDIRECT_URI}?x=1`, 'https://shop.example:443/callback']) {
      await expectError(await ctx.exchange(shop.authorization, exchangeBody(code, { redirect_uri: uri })), 400, 'invalid_redirect_uri')
    }
    expect((await ctx.exchange(shop.authorization, exchangeBody(code))).status).toBe(200)
  })

  test('a redirect_uri removed from the allow list since authorization is invalid_redirect_uri', async () => {
    const moving = await ctx.createClient({ redirectUris: [REDIRECT_URI, 'https://shop.example/new'] })
    const { code } = await ctx.issueCode({ clientId: moving.id, state: 'st' })
    await updateClient(ctx.deps.db, moving.id, { removeRedirectUris: [REDIRECT_URI] })
    await expectError(await ctx.exchange(moving.authorization, exchangeBody(code)), 400, 'invalid_redirect_uri')
  })

  test('state must equal the stored state', async () => {
    const { code } = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    await expectError(await ctx.exchange(shop.authorization, exchangeBody(code, { state: 'other' })), 400, 'invalid_state')
    await expectError(await ctx.exchange(shop.authorization, exchangeBody(code, { state: 'ST' })), 400, 'invalid_state')
    expect((await ctx.exchange(shop.authorization, exchangeBody(code))).status).toBe(200)
  })

  test('state is required when one was sent at authorization', async () => {
    const { code } = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    await expectError(await ctx.exchange(shop.authorization, exchangeBody(code, { state: undefined })), 400, 'invalid_request')
  })

  test('a state sent at exchange for a code issued without one is invalid_state', async () => {
    const { code } = await ctx.issueCode({ clientId: shop.id, state: null })
    await expectError(await ctx.exchange(shop.authorization, exchangeBody(code, { state: 'st' })), 400, 'invalid_state')
  })

  test("a threshold below the client's min_age is age_requirement_not_met 403", async () => {
    const strict = await ctx.createClient({ minAge: 21 })
    const low = await ctx.issueCode({ clientId: strict.id, state: 'st', ageOver: 18 })
    await expectError(await ctx.exchange(strict.authorization, exchangeBody(low.code)), 403, 'age_requirement_not_met')
    const enough = await ctx.issueCode({ clientId: strict.id, state: 'st', ageOver: 21 })
    expect((await ctx.exchange(strict.authorization, exchangeBody(enough.code))).status).toBe(200)
  })

  test('a client over its plan limit gets payment_required 402', async () => {
    const plan = await ctx.createClient({ verificationLimit: 2 })
    const first = await ctx.issueCode({ clientId: plan.id, state: 'st' })
    const second = await ctx.issueCode({ clientId: plan.id, state: 'st' })
    // At the limit, exchanges still work; lowered below it, the client is over and is refused.
    expect((await ctx.exchange(plan.authorization, exchangeBody(first.code))).status).toBe(200)
    await updateClient(ctx.deps.db, plan.id, { verificationLimit: 1 })
    await expectError(await ctx.exchange(plan.authorization, exchangeBody(second.code)), 402, 'payment_required')
  })
})

describe('single use under concurrency', () => {
  test('50 concurrent exchanges of one code: one 200 and 49 code_already_used', async () => {
    const { code } = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    const responses = await Promise.all(Array.from({ length: 50 }, () => ctx.exchange(shop.authorization, exchangeBody(code))))
    const statuses = responses.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    const errors = await Promise.all(responses.filter((r) => r.status !== 200).map((r) => json(r)))
    expect(errors.map((e) => e.error)).toEqual(Array(49).fill('code_already_used'))
  })
})
