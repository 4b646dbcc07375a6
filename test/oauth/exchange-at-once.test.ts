import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { updateClient } from '../../src/clients/registry.ts'
import { rotateClientSecret } from '../../src/clients/secrets.ts'
import { createStatementLog } from '../../src/db/statement-log.ts'
import { sha256Hex } from '../../src/lib/crypto.ts'
import { basic, createTestContext, json, queryRows, REDIRECT_URI, type TestContext } from '../helpers.ts'

/**
 * The token exchange in one statement for a client the instance has a copy of (src/oauth/exchange.ts): the
 * copy is trusted only as far as the statement finds it still the client's row, and the answers are those of
 * authenticating from a read of the row: 429 past the failure limit whatever the secret, a wrong secret
 * counted, a suspension or a rotation seen at once, and no code used up by a request that is refused.
 */
const log = createStatementLog()
let ctx: TestContext

beforeAll(async () => {
  ctx = await createTestContext({ env: { TRUST_PROXY: '1', RATE_LIMIT_AUTH_FAILURES: '3' }, onStatement: log.onStatement })
})
afterAll(() => ctx.close())

const exchange = (authorization: string, code: string, address: string) =>
  ctx.handle(
    new Request('http://api.ofage.test/api/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization, 'x-forwarded-for': address },
      body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 'st' }),
    }),
  )

const newCode = async (clientId: string) => (await ctx.issueCode({ clientId, state: 'st' })).code

async function isUsed(code: string): Promise<boolean> {
  const [row] = await queryRows<{ used: boolean }>(ctx.deps.db, sql`select used_at is not null as used from auth_codes where code_hash = ${sha256Hex(code)}`)
  return row!.used
}

/** The statements one exchange sends, with its answer. */
async function measured(authorization: string, code: string, address: string) {
  const { result, statements } = await log.measure(async () => {
    const response = await exchange(authorization, code, address)
    return { status: response.status, body: await json(response) }
  })
  return { ...result, statements }
}

describe('the token exchange in one statement', () => {
  test('a client this instance has met is exchanged in one statement; its first exchange reads it first', async () => {
    const shop = await ctx.createClient()
    const first = await measured(shop.authorization, await newCode(shop.id), '198.51.100.20')
    expect(first.status).toBe(200)
    expect(first.statements).toHaveLength(2)
    const next = await measured(shop.authorization, await newCode(shop.id), '198.51.100.20')
    expect(next.status).toBe(200)
    expect(next.statements).toHaveLength(1)
    expect(next.statements[0]).toContain('update "auth_codes"')
  })

  test('a wrong secret is invalid_client, counted under the address and the client id from it, and uses up no code', async () => {
    const shop = await ctx.createClient()
    expect((await exchange(shop.authorization, await newCode(shop.id), '198.51.100.21')).status).toBe(200)
    const code = await newCode(shop.id)
    const wrong = await exchange(basic(shop.id, 'not-the-secret'), code, '198.51.100.21')
    expect(wrong.status).toBe(401)
    expect((await json(wrong)).error).toBe('invalid_client')
    expect(await isUsed(code)).toBe(false)
    const hits = await queryRows<{ key: string; hits: number }>(ctx.deps.db, sql`select key, hits from rate_limits where key like 'auth:198.51.100.21%' order by key`)
    expect(hits.map((row) => Number(row.hits))).toEqual([1, 1])
    // The code is still good for the right secret.
    expect((await exchange(shop.authorization, code, '198.51.100.21')).status).toBe(200)
  })

  test('past the failure limit the right secret and a wrong one send the same statement, both get 429, and the code stays unused', async () => {
    const shop = await ctx.createClient()
    expect((await exchange(shop.authorization, await newCode(shop.id), '198.51.100.22')).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await exchange(basic(shop.id, `wrong-${i}`), await newCode(shop.id), '198.51.100.22')).status).toBe(401)
    const code = await newCode(shop.id)
    const right = await measured(shop.authorization, code, '198.51.100.22')
    const wrong = await measured(basic(shop.id, 'wrong-again'), code, '198.51.100.22')
    expect([right.status, wrong.status]).toEqual([429, 429])
    expect(right.body).toEqual(wrong.body)
    expect(right.statements).toEqual(wrong.statements)
    expect(right.statements).toHaveLength(1)
    expect(await isUsed(code)).toBe(false)
    // Another address is not locked out, and the same one is let in again when the window ends.
    expect((await exchange(shop.authorization, code, '198.51.100.23')).status).toBe(200)
    ctx.clock.advance(60_000)
    expect((await exchange(shop.authorization, await newCode(shop.id), '198.51.100.22')).status).toBe(200)
  })

  test('a client suspended after the copy was made is client_suspended at once, and its code stays unused', async () => {
    const shop = await ctx.createClient()
    expect((await exchange(shop.authorization, await newCode(shop.id), '198.51.100.24')).status).toBe(200)
    const code = await newCode(shop.id)
    await updateClient(ctx.deps.db, shop.id, { status: 'suspended' })
    const refused = await exchange(shop.authorization, code, '198.51.100.24')
    expect(refused.status).toBe(401)
    expect((await json(refused)).error).toBe('client_suspended')
    expect(await isUsed(code)).toBe(false)
    await updateClient(ctx.deps.db, shop.id, { status: 'active' })
    expect((await exchange(shop.authorization, code, '198.51.100.24')).status).toBe(200)
  })

  test('a secret rotated after the copy was made: the new one works at once, the old one until its overlap ends', async () => {
    const shop = await ctx.createClient()
    expect((await exchange(shop.authorization, await newCode(shop.id), '198.51.100.25')).status).toBe(200)
    const rotated = await rotateClientSecret(ctx.deps, shop.id, { overlapSeconds: 60 })
    // The copy no longer the row: read again, and the statement sent once more; the next exchange is one statement again.
    const first = await measured(basic(shop.id, rotated!.secret), await newCode(shop.id), '198.51.100.25')
    expect([first.status, first.statements.length]).toEqual([200, 3])
    const next = await measured(shop.authorization, await newCode(shop.id), '198.51.100.25')
    expect([next.status, next.statements.length]).toEqual([200, 1])
    ctx.clock.advance(61_000)
    const code = await newCode(shop.id)
    expect((await exchange(shop.authorization, code, '198.51.100.25')).status).toBe(401)
    expect(await isUsed(code)).toBe(false)
    expect((await exchange(basic(shop.id, rotated!.secret), code, '198.51.100.25')).status).toBe(200)
  })

  test('a code of another client and a replay are judged as the steps judge them', async () => {
    const shop = await ctx.createClient()
    const rival = await ctx.createClient()
    expect((await exchange(shop.authorization, await newCode(shop.id), '198.51.100.26')).status).toBe(200)
    const rivalCode = await newCode(rival.id)
    const stolen = await exchange(shop.authorization, rivalCode, '198.51.100.26')
    expect([stolen.status, (await json(stolen)).error]).toEqual([400, 'invalid_grant'])
    expect(await isUsed(rivalCode)).toBe(false)
    const code = await newCode(shop.id)
    expect((await exchange(shop.authorization, code, '198.51.100.26')).status).toBe(200)
    const replay = await exchange(shop.authorization, code, '198.51.100.26')
    expect([replay.status, (await json(replay)).error]).toEqual([400, 'code_already_used'])
  })
})
