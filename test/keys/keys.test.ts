import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLocalJWKSet, importJWK, importSPKI, jwtVerify } from 'jose'
import { createApp } from '../../src/app.tsx'
import { startServices } from '../../src/boot.ts'
import { ConfigError } from '../../src/errors.ts'
import { silentLogger } from '../../src/lib/log.ts'
import { createTestContext, freshDatabaseUrl, ISSUER, json, PUBLIC_URL, testConfig, type TestContext } from '../helpers.ts'

let ctx: TestContext

beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

describe('GET /api/verify/public-key and GET /api/.well-known/jwks.json', () => {
  test('the PEM and the single JWK are the same RSA key, with the spec key fields', async () => {
    const pemBody = await json(await ctx.request('/api/verify/public-key'))
    const jwks = await json(await ctx.request('/api/.well-known/jwks.json'))
    expect(pemBody).toEqual({ public_key: expect.stringContaining('-----BEGIN PUBLIC KEY-----'), kid: 'key_2025_01', alg: 'RS256' })
    expect(jwks.keys).toHaveLength(1)
    const [jwk] = jwks.keys
    expect(Object.keys(jwk).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use'])
    expect(jwk).toMatchObject({ kty: 'RSA', kid: 'key_2025_01', use: 'sig', alg: 'RS256' })
    expect(jwk.n).toMatch(/^[A-Za-z0-9_-]+$/)
    const fromPem = createPublicKey(pemBody.public_key).export({ format: 'jwk' })
    expect(fromPem.n).toBe(jwk.n)
    expect(fromPem.e).toBe(jwk.e)
    expect(createPublicKey(pemBody.public_key).asymmetricKeyDetails?.modulusLength).toBeGreaterThanOrEqual(2048)
  })

  test.each(['/api/verify/public-key', '/api/.well-known/jwks.json'])('%s is cacheable with an ETag and answers 304', async (path) => {
    const first = await ctx.request(path)
    expect(first.headers.get('cache-control')).toMatch(/max-age=\d+/)
    const etag = first.headers.get('etag')
    expect(etag).toMatch(/^"[0-9a-f]+"$/)
    const again = await ctx.request(path, { headers: { 'if-none-match': etag! } })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe('')
    const stale = await ctx.request(path, { headers: { 'if-none-match': '"other"' } })
    expect(stale.status).toBe(200)
  })

  test('a key that cannot be read is a 500 server_error body, never the cause', async () => {
    const broken = createApp({
      ...ctx.deps,
      log: silentLogger,
      keys: {
        ...ctx.deps.keys,
        get signing(): never {
          throw new Error('key store unreachable: secret detail')
        },
      },
    })
    for (const path of ['/api/.well-known/jwks.json', '/api/verify/public-key']) {
      const response = await broken.handle(new Request(`${PUBLIC_URL}${path}`))
      expect(response.status).toBe(500)
      const body = await json(response)
      expect(body.error).toBe('server_error')
      expect(JSON.stringify(body)).not.toContain('secret detail')
    }
  })
})

describe('local validation with jose (SPEC.md §4.8)', () => {
  test('with the PEM: RS256, issuer required, no kid needed', async () => {
    const client = await ctx.createClient()
    const { access_token } = await ctx.tokenFor(client, { ageOver: 21 })
    const { public_key } = await json(await ctx.request('/api/verify/public-key'))
    const key = await importSPKI(public_key, 'RS256')
    const { payload, protectedHeader } = await jwtVerify(access_token, key, {
      algorithms: ['RS256'],
      issuer: ISSUER,
      currentDate: ctx.clock.now(),
    })
    expect(protectedHeader.kid).toBeUndefined()
    expect(payload.age_verified).toBe(true)
    expect(payload.age_over).toBe(21)
    expect(payload.aud).toBe(client.id)
    await expect(jwtVerify(access_token, key, { issuer: 'https://other.example', currentDate: ctx.clock.now() })).rejects.toThrow()
  })

  test('with the key set: the single key verifies tokens that carry no kid', async () => {
    const client = await ctx.createClient()
    const { access_token } = await ctx.tokenFor(client)
    const jwks = createLocalJWKSet(await json(await ctx.request('/api/.well-known/jwks.json')))
    const { payload } = await jwtVerify(access_token, jwks, { algorithms: ['RS256'], issuer: ISSUER, currentDate: ctx.clock.now() })
    expect(payload.verification_level).toBe('first_verification')
    const [jwk] = (await json(await ctx.request('/api/.well-known/jwks.json'))).keys
    expect((await jwtVerify(access_token, await importJWK(jwk, 'RS256'), { issuer: ISSUER, currentDate: ctx.clock.now() })).payload.sub).toBe(payload.sub!)
  })
})

describe('the signing key source', () => {
  const pemFile = (pem: string) => {
    const file = join(mkdtempSync(join(tmpdir(), 'ofage-key-')), 'key.pem')
    writeFileSync(file, pem)
    return file
  }

  test('SIGNING_KEY_FILE is used as is: the published key is its public half', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 3072 })
    const file = pemFile(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())
    const withFile = await createTestContext({ env: { SIGNING_KEY_FILE: file } })
    try {
      const [jwk] = (await json(await withFile.request('/api/.well-known/jwks.json'))).keys
      expect(jwk.n).toBe(publicKey.export({ format: 'jwk' }).n)
    } finally {
      await withFile.close()
    }
  })

  test.each([
    ['an RSA key under 2048 bits', () => generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()],
    ['an EC key', () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()],
    ['not a key', () => 'hello'],
  ])('%s stops start-up with an error naming SIGNING_KEY_FILE', async (_, makePem) => {
    const database = await freshDatabaseUrl()
    try {
      const config = testConfig({ DATABASE_URL: database.url, SIGNING_KEY_FILE: pemFile(makePem()) })
      const failure = await startServices(config, { log: silentLogger }).catch((error) => error)
      expect(failure).toBeInstanceOf(ConfigError)
      expect(failure.variable).toBe('SIGNING_KEY_FILE')
    } finally {
      await database.drop()
    }
  })

  test('an unreadable SIGNING_KEY_FILE stops start-up with an error naming it', async () => {
    const database = await freshDatabaseUrl()
    try {
      const config = testConfig({ DATABASE_URL: database.url, SIGNING_KEY_FILE: '/nonexistent/key.pem' })
      const failure = await startServices(config, { log: silentLogger }).catch((error) => error)
      expect(failure).toBeInstanceOf(ConfigError)
      expect(failure.variable).toBe('SIGNING_KEY_FILE')
    } finally {
      await database.drop()
    }
  })
})
