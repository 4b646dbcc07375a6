import { describe, expect, test } from 'bun:test'
import { startServices } from '../../src/boot.ts'
import { silentLogger } from '../../src/lib/log.ts'
import { createClient } from '../../src/clients/registry.ts'
import { redeemCode } from '../../src/oauth/codes.ts'
import { issueCode } from '../../src/oauth/issue-code.ts'
import { RevocationCache } from '../../src/oauth/revocations.ts'
import { signAgeToken, verifyAgeToken } from '../../src/oauth/tokens.ts'
import { freshDatabaseUrl, onPostgres, REDIRECT_URI, testConfig } from '../helpers.ts'

/**
 * Issue 12: token validation remembers verifications it found live instead of asking the database each
 * time, and never trusts that memory past a revocation, its tokens' expiry, or a gap in listening.
 */
describe('the revocation cache', () => {
  /** A cache whose database only calls back: `start()` (re)starts listening, `notice(id)` announces. */
  async function listeningCache() {
    let notify: (payload: string) => void = () => {}
    let restart: () => void = () => {}
    const cache = new RevocationCache()
    await cache.listen({
      listen: async (_channel, onNotify, onListen) => {
        notify = onNotify
        restart = onListen
      },
    })
    return { cache, notice: (id: string) => notify(id), start: () => restart() }
  }

  test('nothing is known before listening starts, and everything is forgotten when it starts again', async () => {
    const { cache, start } = await listeningCache()
    cache.remember('v1', 10_000, cache.current, 0)
    expect(cache.isKnownLive('v1', 1)).toBe(false)
    start()
    cache.remember('v1', 10_000, cache.current, 0)
    expect(cache.isKnownLive('v1', 1)).toBe(true)
    start()
    expect(cache.isKnownLive('v1', 1)).toBe(false)
  })

  test("a notice forgets a verification; a lookup a notice overtook is not remembered; nothing outlives its tokens or 30 s", async () => {
    const { cache, notice, start } = await listeningCache()
    start()
    cache.remember('v1', 10_000, cache.current, 0)
    notice('v1')
    expect(cache.isKnownLive('v1', 1)).toBe(false)
    const before = cache.current
    notice('v2')
    cache.remember('v3', 10_000, before, 0)
    expect(cache.isKnownLive('v3', 1)).toBe(false)
    cache.remember('v4', 5_000, cache.current, 0)
    expect(cache.isKnownLive('v4', 4_999)).toBe(true)
    expect(cache.isKnownLive('v4', 5_000)).toBe(false)
    cache.remember('v5', 600_000, cache.current, 0)
    expect(cache.isKnownLive('v5', 29_999)).toBe(true)
    expect(cache.isKnownLive('v5', 30_000)).toBe(false)
  })
})

test.skipIf(!onPostgres)('a replay on one instance revokes the token on another that had it cached, within a second', async () => {
  const database = await freshDatabaseUrl()
  const config = testConfig({ DATABASE_URL: database.url })
  const [a, b] = [await startServices(config, { log: silentLogger }), await startServices(config, { log: silentLogger })]
  try {
    const { client } = await createClient(a!.deps, { name: 'Two instances', redirectUris: [REDIRECT_URI] })
    const { code } = await issueCode(a!.deps, { clientId: client.id, redirectUri: REDIRECT_URI, ageOver: 18, methodClass: 'age_only' })
    const verification = await redeemCode(a!.deps, client, { code, redirectUri: REDIRECT_URI })
    const token = await signAgeToken({ ...a!.deps, issuerUrl: config.issuerUrl }, verification, client)
    const onB = { ...b!.deps, issuerUrl: config.issuerUrl }
    expect(await verifyAgeToken(onB, token)).toBeDefined()
    expect(b!.deps.revocations!.isKnownLive(verification.transactionId, Date.now())).toBe(true)

    await expect(redeemCode(a!.deps, client, { code, redirectUri: REDIRECT_URI })).rejects.toThrow('already been used')
    const revoked = performance.now()
    while (b!.deps.revocations!.isKnownLive(verification.transactionId, Date.now())) {
      if (performance.now() - revoked > 1_000) throw new Error('instance B still trusts a revoked verification after 1 s')
      await Bun.sleep(2)
    }
    expect(await verifyAgeToken(onB, token)).toBeUndefined()
    console.log(`revocation reached the other instance's cache in ${(performance.now() - revoked).toFixed(1)} ms`)
  } finally {
    await a!.close()
    await b!.close()
    await database.drop()
  }
})
