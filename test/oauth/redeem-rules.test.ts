import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { auditLogs, authCodes } from '../../src/db/schema.ts'
import { OAuthError } from '../../src/errors.ts'
import { sha256Hex } from '../../src/lib/crypto.ts'
import type { Client } from '../../src/clients/model.ts'
import { checkRedemption, claimAtOnce, type Redemption } from '../../src/oauth/codes.ts'
import { s256 } from '../../src/oauth/pkce.ts'
import { createTestContext, json, REDIRECT_URI, type TestContext } from '../helpers.ts'

/**
 * A good exchange is claimed in one SQL statement (`claimAtOnce`); everything else is judged in TypeScript
 * (`checkRedemption`). If the statement ever accepted what the checks refuse, a bad request would use up a
 * good code; if it refused what they accept, exchanges would fall back to the slower way. Every combination
 * of the rules' inputs must get the same answer from both.
 */

let ctx: TestContext
const OTHER_URI = 'https://shop.example/other'
const UNREGISTERED_URI = 'https://shop.example/unregistered'
const VERIFIER = 'v'.repeat(43)
const OTHER_VERIFIER = 'w'.repeat(43)

beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

type CodeShape = { state: string | null; challenge: string | null; ageOver: number; redirectUri: string }

async function storedCode(clientId: string, shape: CodeShape) {
  const { code } = await ctx.issueCode({ clientId, state: shape.state, codeChallenge: shape.challenge, ageOver: shape.ageOver, redirectUri: shape.redirectUri })
  const codeHash = sha256Hex(code)
  const [found] = await ctx.deps.db
    .select({ code: authCodes, verification: auditLogs })
    .from(authCodes)
    .innerJoin(auditLogs, eq(auditLogs.transactionId, authCodes.transactionId))
    .where(eq(authCodes.codeHash, codeHash))
  return { code, codeHash, found: found! }
}

function verdict(run: () => void): string {
  try {
    run()
    return 'accepted'
  } catch (error) {
    if (error instanceof OAuthError) return error.code
    throw error
  }
}

describe('the single-statement claim and the checks agree', () => {
  test('on every combination of state, PKCE, redirect URI and minimum age', async () => {
    const plain = await ctx.createClient({ redirectUris: [REDIRECT_URI, OTHER_URI] })
    const strict = await ctx.createClient({ redirectUris: [REDIRECT_URI, OTHER_URI], minAge: 21 })
    const verdicts = new Set<string>()
    let cases = 0
    for (const { client } of [plain, strict]) {
      for (const codeState of [null, 's']) {
        for (const challenge of [null, s256(VERIFIER)]) {
          for (const ageOver of [18, 21]) {
            for (const requestState of [undefined, 's', 't', '']) {
              for (const codeVerifier of [undefined, VERIFIER, OTHER_VERIFIER, 'short']) {
                for (const redirectUri of [REDIRECT_URI, OTHER_URI, UNREGISTERED_URI]) {
                  const stored = await storedCode(client.id, { state: codeState, challenge, ageOver, redirectUri: REDIRECT_URI })
                  const request: Redemption = { code: stored.code, redirectUri, state: requestState, codeVerifier }
                  const now = ctx.clock.now()
                  const expected = verdict(() => checkRedemption(stored.found, client as Client, request, now))
                  const claimed = await claimAtOnce(ctx.deps.db, client as Client, request, stored.codeHash, now)
                  const label = JSON.stringify({ minAge: client.minAge, codeState, challenge: Boolean(challenge), ageOver, requestState: requestState ?? '(none)', codeVerifier: codeVerifier ?? '(none)', redirectUri })
                  expect(`${label} ${claimed ? 'claimed' : 'left'}`).toBe(`${label} ${expected === 'accepted' ? 'claimed' : 'left'}`)
                  if (claimed) expect(claimed.transactionId).toBe(stored.found.verification.transactionId)
                  verdicts.add(expected)
                  cases++
                }
              }
            }
          }
        }
      }
    }
    expect(cases).toBe(2 * 2 * 2 * 2 * 4 * 4 * 3)
    // The matrix reaches every rule: acceptance and each error the checks can name here.
    expect([...verdicts].sort()).toEqual(['accepted', 'age_requirement_not_met', 'invalid_grant', 'invalid_redirect_uri', 'invalid_request', 'invalid_state'].sort())
  }, 120_000)

  test('on codes of another client, used codes and expired codes', async () => {
    const owner = await ctx.createClient()
    const other = await ctx.createClient()
    const request = (code: string): Redemption => ({ code, redirectUri: REDIRECT_URI, state: 's' })
    const shape = { state: 's', challenge: null, ageOver: 18, redirectUri: REDIRECT_URI }

    const foreign = await storedCode(owner.id, shape)
    expect(verdict(() => checkRedemption(foreign.found, other.client, request(foreign.code), ctx.clock.now()))).toBe('invalid_grant')
    expect(await claimAtOnce(ctx.deps.db, other.client, request(foreign.code), foreign.codeHash, ctx.clock.now())).toBeUndefined()

    const used = await storedCode(owner.id, shape)
    expect(await claimAtOnce(ctx.deps.db, owner.client, request(used.code), used.codeHash, ctx.clock.now())).toBeDefined()
    expect(await claimAtOnce(ctx.deps.db, owner.client, request(used.code), used.codeHash, ctx.clock.now())).toBeUndefined()

    const expiring = await storedCode(owner.id, shape)
    ctx.clock.advance(60_000)
    expect(verdict(() => checkRedemption(expiring.found, owner.client, request(expiring.code), ctx.clock.now()))).toBe('expired_code')
    expect(await claimAtOnce(ctx.deps.db, owner.client, request(expiring.code), expiring.codeHash, ctx.clock.now())).toBeUndefined()
  })

  test('a refused exchange leaves the code for the right one, through the endpoint', async () => {
    const client = await ctx.createClient()
    const { code } = await ctx.issueCode({ clientId: client.id, state: 's', codeChallenge: s256(VERIFIER) })
    const exchange = (body: Record<string, unknown>) =>
      ctx.exchange(client.authorization, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, ...body })
    expect((await json(await exchange({ code_verifier: OTHER_VERIFIER }))).error).toBe('invalid_grant')
    expect((await json(await exchange({ code_verifier: VERIFIER, state: 't' }))).error).toBe('invalid_state')
    expect((await json(await exchange({ code_verifier: VERIFIER, redirect_uri: UNREGISTERED_URI }))).error).toBe('invalid_redirect_uri')
    const good = await exchange({ code_verifier: VERIFIER })
    expect(good.status).toBe(200)
    expect((await json(await exchange({ code_verifier: VERIFIER }))).error).toBe('code_already_used')
  })
})
