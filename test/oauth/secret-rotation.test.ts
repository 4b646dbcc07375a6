import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rotateClientSecret } from '../../src/clients/secrets.ts'
import { basic, createTestContext, json, type TestContext } from '../helpers.ts'

let ctx: TestContext

beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

/** Whether a secret authenticates its client right now (the usage report needs client credentials). */
async function authenticates(clientId: string, secret: string): Promise<boolean> {
  const response = await ctx.request('/api/oauth/usage', { headers: { authorization: basic(clientId, secret) } })
  if (response.status === 401) expect((await json(response)).error).toBe('invalid_client')
  return response.status === 200
}

describe('secret rotation', () => {
  test('without an overlap the old secret stops at once', async () => {
    const { id, secret: old } = await ctx.createClient()
    const rotated = await rotateClientSecret(ctx.deps, id)
    expect(await authenticates(id, rotated!.secret)).toBe(true)
    expect(await authenticates(id, old)).toBe(false)
    expect(rotated!.client.previousSecretExpiresAt).toBeNull()
  })

  test('with an overlap both work until it ends, then only the new one', async () => {
    const { id, secret: old } = await ctx.createClient()
    const rotated = await rotateClientSecret(ctx.deps, id, { overlapSeconds: 3600 })
    expect(rotated!.client.previousSecretExpiresAt!.getTime()).toBe(ctx.clock.now().getTime() + 3_600_000)
    expect(await authenticates(id, old)).toBe(true)
    expect(await authenticates(id, rotated!.secret)).toBe(true)
    ctx.clock.advance(3_599_000)
    expect(await authenticates(id, old)).toBe(true)
    ctx.clock.advance(1_000)
    expect(await authenticates(id, old)).toBe(false)
    expect(await authenticates(id, rotated!.secret)).toBe(true)
  })

  test('rotating again keeps only the secret it replaces; the one before stops', async () => {
    const { id, secret: first } = await ctx.createClient()
    const second = await rotateClientSecret(ctx.deps, id, { overlapSeconds: 3600 })
    const third = await rotateClientSecret(ctx.deps, id, { overlapSeconds: 600 })
    expect(await authenticates(id, first)).toBe(false)
    expect(await authenticates(id, second!.secret)).toBe(true)
    expect(await authenticates(id, third!.secret)).toBe(true)
    // A rotation without an overlap ends the previous one's at once (a leaked secret).
    const fourth = await rotateClientSecret(ctx.deps, id)
    expect(await authenticates(id, third!.secret)).toBe(false)
    expect(await authenticates(id, fourth!.secret)).toBe(true)
  })

  test("an overlapping secret is not another client's: the previous secret works only with its own client id", async () => {
    const a = await ctx.createClient()
    const b = await ctx.createClient()
    await rotateClientSecret(ctx.deps, a.id, { overlapSeconds: 3600 })
    expect(await authenticates(b.id, a.secret)).toBe(false)
  })

  test('an overlap outside 0 seconds to 30 days is refused and nothing changes', async () => {
    const { id, secret } = await ctx.createClient()
    for (const overlapSeconds of [-1, 1.5, 30 * 86_400 + 1]) {
      await expect(rotateClientSecret(ctx.deps, id, { overlapSeconds })).rejects.toMatchObject({ code: 'invalid_request' })
    }
    expect(await authenticates(id, secret)).toBe(true)
  })
})
