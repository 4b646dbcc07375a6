import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeJwt, errors, importJWK, jwtVerify, SignJWT, type JWK } from 'jose'
import type { Services } from '../../src/boot.ts'
import { runCommand } from '../../src/cli/run.ts'
import { createTestContext, ISSUER, json, type TestContext } from '../helpers.ts'

/**
 * Issue 32, item 2: a key rotation that an integrator following SPEC.md §8 survives. The integrator is
 * written here from the spec alone (§4.8: the set's single key, never chosen by `kid`; §8: cached 24
 * hours, at most 10 key-set requests a minute, a failed request tried up to 3 times), and on a signature
 * that fails with its cached key it fetches the set once more. Time is the test context's frozen clock.
 */
class Section8Integrator {
  /** When (by the clock) each key-set request was sent. */
  readonly requests: number[] = []
  private cached: { key: CryptoKey | Uint8Array; fetchedAt: number } | undefined

  constructor(
    private readonly ctx: TestContext,
    private readonly audience: string,
  ) {}

  private now(): number {
    return this.ctx.clock.now().getTime()
  }

  /** Fetches the set if this minute allows another request; true when a key came back. */
  private async fetchKeySet(): Promise<boolean> {
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (this.requests.filter((at) => this.now() - at < 60_000).length >= 10) return false
      this.requests.push(this.now())
      const response = await this.ctx.request('/api/.well-known/jwks.json')
      if (!response.ok) continue
      const { keys } = (await response.json()) as { keys: JWK[] }
      if (keys.length !== 1) continue
      this.cached = { key: await importJWK(keys[0]!, 'RS256'), fetchedAt: this.now() }
      return true
    }
    return false
  }

  /** `valid`, or why not: the jose error's code. */
  async validate(token: string): Promise<string> {
    if (!this.cached || this.now() - this.cached.fetchedAt >= 24 * 3600_000) await this.fetchKeySet()
    for (const again of [false, true]) {
      try {
        await jwtVerify(token, this.cached!.key, { issuer: ISSUER, audience: this.audience, algorithms: ['RS256'], currentDate: this.ctx.clock.now() })
        return 'valid'
      } catch (cause) {
        if (cause instanceof errors.JWSSignatureVerificationFailed && !again && (await this.fetchKeySet())) continue
        return (cause as errors.JOSEError).code
      }
    }
    throw new Error('unreachable')
  }
}

async function keysCommand(ctx: TestContext, ...argv: string[]) {
  const services: Services = { deps: ctx.deps, close: async () => {} }
  const out: string[] = []
  const err: string[] = []
  const status = await runCommand(services, ['keys', ...argv, '--json'], { out: (text) => out.push(text), err: (text) => err.push(text) })
  if (status !== 0) throw new Error(`keys ${argv.join(' ')}: ${err.join('\n')}`)
  return JSON.parse(out.join('\n'))
}

const validateViaApi = async (ctx: TestContext, token: string) => (await ctx.request(`/api/verify/token/${token}`)).status
const introspect = async (ctx: TestContext, token: string) =>
  (await ctx.request('/api/oauth/validate', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) })).status
const jwksModulus = async (ctx: TestContext) => (await json(await ctx.request('/api/.well-known/jwks.json'))).keys[0].n as string

describe('a generated key rotated (ofage keys rotate), as a §8 integrator sees it', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestContext()
  })
  afterAll(() => ctx.close())

  test('new tokens: one extra key-set request; tokens signed before the switch: still valid at our API for their 600 s', async () => {
    const client = await ctx.createClient()
    const site = new Section8Integrator(ctx, client.id)
    expect(await site.validate((await ctx.tokenFor(client)).access_token)).toBe('valid')
    ctx.clock.advance(3600_000)
    // A token exchanged just before the switch, which the site keeps to check again later.
    const before = (await ctx.tokenFor(client)).access_token
    const oldKey = await ctx.deps.keys.signing.signer()
    const oldModulus = await jwksModulus(ctx)
    const oldEtag = (await ctx.request('/api/.well-known/jwks.json')).headers.get('etag')

    const rotated = await keysCommand(ctx, 'rotate')
    const since = ctx.clock.now().getTime()
    expect(rotated).toMatchObject({ kid: 'key_2025_01', in_force_since: new Date(since).toISOString(), previous: { thumbprint: oldKey.thumbprint } })
    expect(Date.parse(rotated.previous.accepted_until) - since).toBe(630_000)

    // Still one key, still key_2025_01, now the new one: in the set and the PEM, with a new ETag.
    const set = await json(await ctx.request('/api/.well-known/jwks.json'))
    expect(set.keys).toHaveLength(1)
    expect(set.keys[0]).toMatchObject({ kid: 'key_2025_01', alg: 'RS256', use: 'sig', kty: 'RSA' })
    expect(set.keys[0].n).not.toBe(oldModulus)
    expect(createPublicKey((await json(await ctx.request('/api/verify/public-key'))).public_key).export({ format: 'jwk' }).n).toBe(set.keys[0].n)
    expect((await ctx.request('/api/.well-known/jwks.json')).headers.get('etag')).not.toBe(oldEtag)

    // The first token after the switch fails with the cached key: the site fetches the set once more.
    ctx.clock.advance(1_000)
    const after = (await ctx.tokenFor(client)).access_token
    expect(decodeJwt(after).iat).toBeGreaterThan(decodeJwt(before).iat!)
    expect(await site.validate(after)).toBe('valid')
    expect(site.requests).toHaveLength(2)

    // What it costs: the token signed before the switch, checked locally after that fetch, fails there
    // (the set holds one key), though the service still vouches for it until it expires.
    expect(await site.validate(before)).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED')
    expect(await validateViaApi(ctx, before)).toBe(200)
    expect(await introspect(ctx, before)).toBe(200)
    expect(await validateViaApi(ctx, after)).toBe(200)
    // Never more than §8 allows, and never more than one request per failed signature.
    expect(site.requests).toHaveLength(3)
    expect(site.requests.filter((at) => at >= since && at < since + 60_000).length).toBeLessThanOrEqual(10)

    // The old key is accepted for 630 s after the switch (600 s of a token's life, 30 s for an instance
    // that missed the notice), and not a second longer.
    const signedWithOld = async () => {
      const iat = Math.floor(ctx.clock.now().getTime() / 1000)
      const claims = { ...decodeJwt(before), iat, exp: iat + 600 }
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).sign(oldKey.privateKey)
    }
    ctx.clock.set(new Date(since + 629_000))
    expect(await validateViaApi(ctx, await signedWithOld())).toBe(200)
    expect(await validateViaApi(ctx, before)).toBe(401) // expired: 600 s after it was issued
    ctx.clock.set(new Date(since + 630_000))
    expect(await validateViaApi(ctx, await signedWithOld())).toBe(401)
    expect((await keysCommand(ctx, 'show')).previous).toBeNull()
    // A day on, the site's cache expires: one request, the same key.
    ctx.clock.advance(24 * 3600_000)
    expect(await site.validate((await ctx.tokenFor(client)).access_token)).toBe('valid')
    expect(site.requests).toHaveLength(4)
  })

  test('after a leak (--leaked): the old key is refused at once; a site that cached it trusts it until its first new token', async () => {
    const client = await ctx.createClient()
    const site = new Section8Integrator(ctx, client.id)
    const before = (await ctx.tokenFor(client)).access_token
    expect(await site.validate(before)).toBe('valid')
    const leaked = await ctx.deps.keys.signing.signer()
    // A token the thief signs: well formed, for a real verification.
    const forged = await new SignJWT({ ...decodeJwt(before), age_over: 21 }).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).sign(leaked.privateKey)
    // Both validated once before the rotation: the service remembers verified signatures (src/oauth/tokens.ts),
    // and what it remembers of a key must go with the key.
    expect(await validateViaApi(ctx, before)).toBe(200)
    expect(await validateViaApi(ctx, forged)).toBe(200)

    const rotated = await keysCommand(ctx, 'rotate', '--leaked')
    expect(rotated.previous).toBeNull()
    // The service refuses the leaked key at once: the thief's token and honest ones signed before alike.
    expect(await validateViaApi(ctx, forged)).toBe(401)
    expect(await validateViaApi(ctx, before)).toBe(401)
    expect(await introspect(ctx, before)).toBe(401)
    // The cost no server can remove: a site holding the leaked key in its cache verifies the thief's token,
    // until a token signed with the new key makes it fetch the set (or its 24 hours run out).
    expect(await site.validate(forged)).toBe('valid')
    expect(await site.validate((await ctx.tokenFor(client)).access_token)).toBe('valid')
    expect(await site.validate(forged)).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED')
    expect(site.requests).toHaveLength(3)
  })
})

describe('a key file rotated (ofage keys rotate --file)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ofage-rotation-'))
  const file = join(dir, 'signing-key.pem')
  const newPem = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  let ctx: TestContext
  beforeAll(async () => {
    writeFileSync(file, newPem())
    ctx = await createTestContext({ env: { SIGNING_KEY_FILE: file } })
    await ctx.deps.keys.signing.reportAs({ id: 'file-instance', host: 'test-host', pid: 2 })
  })
  afterAll(async () => {
    await ctx.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('the file is replaced first (the running instance keeps its key), then keys rotate --file switches it', async () => {
    const client = await ctx.createClient()
    const oldModulus = await jwksModulus(ctx)
    const pem = newPem()
    writeFileSync(file, pem)
    // Read at start and at a rotation only: until then, the instance signs and publishes the old key.
    expect(await jwksModulus(ctx)).toBe(oldModulus)
    const signedBefore = (await ctx.tokenFor(client)).access_token
    expect(await validateViaApi(ctx, signedBefore)).toBe(200)

    const rotated = await keysCommand(ctx, 'rotate', '--file', file)
    expect(rotated).toMatchObject({ source: `SIGNING_KEY_FILE=${file}`, instances_agree: true })
    expect(rotated.instances).toEqual([expect.objectContaining({ source: 'file', signing: true, key: rotated.thumbprint })])
    const newModulus = createPublicKey(pem).export({ format: 'jwk' }).n!
    expect(await jwksModulus(ctx)).toBe(newModulus)
    const signedAfter = (await ctx.tokenFor(client)).access_token
    expect((await jwtVerify(signedAfter, createPublicKey(pem), { issuer: ISSUER, currentDate: ctx.clock.now() })).payload.aud).toBe(client.id)
    expect(await validateViaApi(ctx, signedBefore)).toBe(200)
  })

  test('refused: a file that still holds the key in force, a generated key while instances read files, a file that is no key', async () => {
    const fails = (...argv: string[]) => keysCommand(ctx, ...argv).then(() => 'rotated', (error: Error) => error.message)
    expect(await fails('rotate', '--file', file)).toContain('holds the key already in force')
    expect(await fails('rotate')).toContain('1 running instance(s) read SIGNING_KEY_FILE and could not follow')
    writeFileSync(join(dir, 'garbage.pem'), 'hello')
    expect(await fails('rotate', '--file', join(dir, 'garbage.pem'))).toContain('is not a PEM private key')
    expect(await fails('rotate', '--file', join(dir, 'missing.pem'))).toContain('--file cannot be read')
    expect(ctx.deps.keys.signing.canSign).toBe(true)
  })
})
