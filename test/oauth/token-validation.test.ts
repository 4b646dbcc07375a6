import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { decodeJwt, decodeProtectedHeader, importPKCS8, SignJWT } from 'jose'
import { basic, createTestContext, ISSUER, json, type TestContext } from '../helpers.ts'

let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  ctx = await createTestContext()
  shop = await ctx.createClient()
})
afterAll(() => ctx.close())

const invalidBody = { success: false, valid: false, message: 'Invalid or expired token' }

async function expectInvalid(token: string) {
  const response = await ctx.request(`/api/verify/token/${encodeURIComponent(token)}`)
  expect(response.status).toBe(401)
  expect(await json(response)).toEqual(invalidBody)
}

/** Signs arbitrary claims with the service's own private key, to test every check after the signature. */
async function signWithOurKey(claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', ...header }).sign((await ctx.deps.keys.signing.signer()).privateKey)
}

describe('the access token (SPEC.md §2.2)', () => {
  test('header is RS256 without kid', async () => {
    const { access_token } = await ctx.tokenFor(shop)
    const header = decodeProtectedHeader(access_token)
    expect(header.alg).toBe('RS256')
    expect(header).not.toHaveProperty('kid')
  })

  test('carries exactly the listed claims, exp = iat + 600, iss = ISSUER_URL', async () => {
    const { access_token, transaction_id } = await ctx.tokenFor(shop, { ageOver: 21 })
    const claims = decodeJwt(access_token)
    expect(Object.keys(claims).sort()).toEqual(
      ['age_over', 'age_verified', 'aud', 'exp', 'iat', 'iss', 'reverification', 'sub', 'verification_id', 'verification_level'].sort(),
    )
    expect(claims.iss).toBe(ISSUER)
    expect(claims.aud).toBe(shop.id)
    expect(typeof claims.sub).toBe('string')
    expect(claims.age_verified).toBe(true)
    expect(claims.age_over).toBe(21)
    expect(claims.verification_level).toBe('first_verification')
    expect(claims.reverification).toBe(false)
    expect(claims.verification_id).toBe(transaction_id)
    expect(claims.iat).toBe(Math.floor(ctx.clock.now().getTime() / 1000))
    expect(claims.exp).toBe(claims.iat! + 600)
  })

  test('a re-verification says so in two claims', async () => {
    const { access_token } = await ctx.tokenFor(shop, { reverification: true })
    const claims = decodeJwt(access_token)
    expect(claims.verification_level).toBe('re_verification')
    expect(claims.reverification).toBe(true)
  })

  test('sub is pairwise: stable for one person at one client, different at another', async () => {
    const other = await ctx.createClient()
    const sub = async (client: typeof shop, personKey: string) => decodeJwt((await ctx.tokenFor(client, { personKey })).access_token).sub
    expect(await sub(shop, 'person-1')).toBe((await sub(shop, 'person-1'))!)
    expect(await sub(shop, 'person-1')).not.toBe((await sub(other, 'person-1'))!)
    expect(await sub(shop, 'person-1')).not.toBe((await sub(shop, 'person-2'))!)
  })
})

describe('GET /api/verify/token/{access_token} (SPEC.md §2.3, §4.3)', () => {
  test('a valid token answers the validation body field by field', async () => {
    const { access_token, transaction_id } = await ctx.tokenFor(shop, { ageOver: 16, methodClass: 'biometric' })
    const claims = decodeJwt(access_token)
    const response = await ctx.request(`/api/verify/token/${access_token}`)
    expect(response.status).toBe(200)
    expect(await json(response)).toEqual({
      success: true,
      valid: true,
      age_verified: true,
      age_over: 16,
      verification_level: 'first_verification',
      expires_at: new Date(claims.exp! * 1000).toISOString(),
      issued_at: new Date(claims.iat! * 1000).toISOString(),
      session_id: claims.sub,
      client_id: shop.id,
      nonce: null,
      transaction_id,
    })
  })

  test('a token validated again gets the same answer, typed as JSON, and the invalid one too', async () => {
    // The second answer is the text remembered from the first (src/oauth/routes.ts).
    const { access_token } = await ctx.tokenFor(shop)
    const [first, second] = [await ctx.request(`/api/verify/token/${access_token}`), await ctx.request(`/api/verify/token/${access_token}`)]
    for (const response of [first, second]) expect(response.headers.get('content-type')).toBe('application/json;charset=utf-8')
    expect(await second.text()).toBe(await first.text())
    const invalid = await ctx.request('/api/verify/token/not.a.token')
    expect(invalid.headers.get('content-type')).toBe('application/json;charset=utf-8')
    expect(await invalid.text()).toBe(JSON.stringify(invalidBody))
  })

  test('timestamps are ISO 8601 UTC with milliseconds', async () => {
    const { access_token } = await ctx.tokenFor(shop)
    const body = await json(await ctx.request(`/api/verify/token/${access_token}`))
    expect(body.issued_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(body.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  })

  test('a URL-encoded token is accepted', async () => {
    const { access_token } = await ctx.tokenFor(shop)
    const response = await ctx.request(`/api/verify/token/${access_token.replaceAll('.', '%2E')}`)
    expect(response.status).toBe(200)
  })

  test('valid until exp: 599 s after issue it validates, at 600 s it is 401', async () => {
    const { access_token } = await ctx.tokenFor(shop)
    ctx.clock.advance(599_000)
    expect((await ctx.request(`/api/verify/token/${access_token}`)).status).toBe(200)
    ctx.clock.advance(1_000)
    await expectInvalid(access_token)
  })

  test('a tampered payload (bad signature) is 401', async () => {
    const { access_token } = await ctx.tokenFor(shop, { ageOver: 18 })
    const [header, , signature] = access_token.split('.')
    const claims = { ...decodeJwt(access_token), age_over: 21 }
    await expectInvalid(`${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`)
  })

  test('alg "none" is 401', async () => {
    const claims = decodeJwt((await ctx.tokenFor(shop)).access_token)
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`
    await expectInvalid(unsigned)
  })

  test('HS256 keyed with our public key (algorithm confusion) is 401', async () => {
    const claims = decodeJwt((await ctx.tokenFor(shop)).access_token)
    const pemAsSecret = new TextEncoder().encode((await ctx.deps.keys.signing.published()).publicPem)
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(pemAsSecret)
    await expectInvalid(forged)
  })

  test('a token signed by another RSA key is 401', async () => {
    const claims = decodeJwt((await ctx.tokenFor(shop)).access_token)
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const otherKey = await importPKCS8(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256')
    await expectInvalid(await new SignJWT(claims).setProtectedHeader({ alg: 'RS256' }).sign(otherKey))
  })

  test('our key but another issuer is 401', async () => {
    const claims = decodeJwt((await ctx.tokenFor(shop)).access_token)
    await expectInvalid(await signWithOurKey({ ...claims, iss: 'https://evil.example' }))
  })

  test('our key but a verification that does not exist is 401', async () => {
    const claims = decodeJwt((await ctx.tokenFor(shop)).access_token)
    await expectInvalid(await signWithOurKey({ ...claims, verification_id: crypto.randomUUID() }))
  })

  test('our key but claims of the wrong shape are 401', async () => {
    const claims = decodeJwt((await ctx.tokenFor(shop)).access_token)
    await expectInvalid(await signWithOurKey({ ...claims, age_over: '18' }))
    await expectInvalid(await signWithOurKey({ ...claims, verification_id: "x' or '1'='1" }))
    const { exp: _exp, ...noExp } = claims
    await expectInvalid(await signWithOurKey(noExp))
  })

  test('a token whose code was replayed is revoked: 401', async () => {
    const { code } = await ctx.issueCode({ clientId: shop.id, state: 'st' })
    const body = { grant_type: 'authorization_code', code, redirect_uri: 'https://shop.example/callback', state: 'st' }
    const { access_token } = await json(await ctx.exchange(shop.authorization, body))
    await ctx.exchange(shop.authorization, body)
    await expectInvalid(access_token)
  })

  test.each(['', 'x', 'a.b.c', 'eyJhbGciOiJSUzI1NiJ9..', '%', '%E0%A4%A', 'a'.repeat(10_000)])('malformed token %#', async (token) => {
    const response = await ctx.request(`/api/verify/token/${token}`)
    expect(response.status).toBe(401)
    expect(await json(response)).toEqual(invalidBody)
  })
})

describe('POST /api/oauth/validate (DESIGN.md)', () => {
  const validate = (body: string, contentType: string, authorization?: string) =>
    ctx.request('/api/oauth/validate', {
      method: 'POST',
      headers: { 'content-type': contentType, ...(authorization && { authorization }) },
      body,
    })

  test('answers like GET /api/verify/token plus active: true, JSON or form-encoded', async () => {
    const { access_token } = await ctx.tokenFor(shop)
    const expected = await json(await ctx.request(`/api/verify/token/${access_token}`))
    const fromJson = await validate(JSON.stringify({ token: access_token }), 'application/json')
    expect(fromJson.status).toBe(200)
    expect(fromJson.headers.get('cache-control')).toBe('no-store')
    expect(await json(fromJson)).toEqual({ ...expected, active: true })
    const fromForm = await validate(new URLSearchParams({ token: access_token }).toString(), 'application/x-www-form-urlencoded')
    expect(await json(fromForm)).toEqual({ ...expected, active: true })
  })

  test('an invalid token is 401 with active: false', async () => {
    const response = await validate(JSON.stringify({ token: 'nope' }), 'application/json')
    expect(response.status).toBe(401)
    expect(await json(response)).toEqual({ ...invalidBody, active: false })
  })

  test("with client credentials, another client's token is invalid", async () => {
    const other = await ctx.createClient()
    const { access_token } = await ctx.tokenFor(shop)
    expect((await validate(JSON.stringify({ token: access_token }), 'application/json', shop.authorization)).status).toBe(200)
    const response = await validate(JSON.stringify({ token: access_token }), 'application/json', other.authorization)
    expect(response.status).toBe(401)
    expect((await json(response)).active).toBe(false)
  })

  test('bad client credentials are invalid_client', async () => {
    const response = await validate(JSON.stringify({ token: 'x' }), 'application/json', basic(shop.id, 'wrong'))
    expect(response.status).toBe(401)
    expect((await json(response)).error).toBe('invalid_client')
  })

  test.each([
    ['missing token', '{}', 'application/json'],
    ['duplicate token', '{"token":"a","token":"b"}', 'application/json'],
    ['duplicate form token', 'token=a&token=b', 'application/x-www-form-urlencoded'],
    ['text/plain', 'token=a', 'text/plain'],
  ])('%s is invalid_request', async (_, body, type) => {
    const response = await validate(body, type)
    expect(response.status).toBe(400)
    expect((await json(response)).error).toBe('invalid_request')
  })
})
