import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { createClientCache } from '../../src/clients/client-cache.ts'
import { createTestContext, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { callback, testBrowser } from '../verification/browser.ts'

/**
 * The hosted page keeps a copy of each client it meets (src/clients/client-cache.ts), and acts on it only
 * when the statement that acts finds the copy's version still the row's. A change made anywhere (another
 * instance, the CLI, SQL by hand; here SQL, which no code of this instance sees) counts from the next request.
 */
let ctx: TestContext

beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const change = (clientId: string, assignments: ReturnType<typeof sql>) => ctx.deps.db.execute(sql`update clients set ${assignments} where id = ${clientId}`)

describe('a change to the client counts from the next request', () => {
  test('suspended, then active again: the next page says so each time', async () => {
    const client = await ctx.createClient({ sandbox: true })
    expect((await testBrowser(ctx).open({ client_id: client.id })).response.status).toBe(200)
    await change(client.id, sql`status = 'suspended'`)
    const { response, page } = await testBrowser(ctx).open({ client_id: client.id })
    expect(response.status).toBe(401)
    expect(page.html).toContain('<code>client_suspended</code>')
    await change(client.id, sql`status = 'active'`)
    expect((await testBrowser(ctx).open({ client_id: client.id })).response.status).toBe(200)
  })

  test('a redirect URI registered a moment ago is accepted, one removed is refused', async () => {
    const client = await ctx.createClient({ sandbox: true })
    expect((await testBrowser(ctx).open({ client_id: client.id })).response.status).toBe(200)
    await change(client.id, sql`redirect_uris = array[${REDIRECT_URI}, 'https://shop.example/other']`)
    expect((await testBrowser(ctx).open({ client_id: client.id, redirect_uri: 'https://shop.example/other' })).response.status).toBe(200)
    await change(client.id, sql`redirect_uris = array['https://shop.example/other']`)
    expect((await testBrowser(ctx).open({ client_id: client.id })).response.status).toBe(400)
  })

  test('a plan limit set while a visitor is on the page: the page and the completion both count it', async () => {
    const client = await ctx.createClient({ sandbox: true })
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: client.id })
    await change(client.id, sql`verification_limit = 0`)
    expect((await testBrowser(ctx).open({ client_id: client.id })).response.status).toBe(402)
    const refused = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
    expect(refused.status).toBe(402)
    await change(client.id, sql`verification_limit = 1`)
    expect(callback(await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' }))).toBeDefined()
  })

  test('a suspension while the visitor is on the page refuses the completion', async () => {
    const client = await ctx.createClient({ sandbox: true })
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: client.id })
    await change(client.id, sql`status = 'suspended'`)
    const refused = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('location')).toBeNull()
  })
})

describe('the copy is bounded', () => {
  test('in number and in age: past either, the client is read again', async () => {
    const cache = createClientCache(ctx.deps.db, ctx.clock, { maxClients: 2, maxAgeMs: 30_000 })
    const [a, b, c] = [await ctx.createClient(), await ctx.createClient(), await ctx.createClient()]
    for (const client of [a, b, c]) expect((await cache.find(client.id))?.fresh).toBe(true)
    // The oldest went when the third came.
    expect((await cache.find(c.id))?.fresh).toBe(false)
    expect((await cache.find(a.id))?.fresh).toBe(true)
    ctx.clock.advance(30_000)
    expect((await cache.find(a.id))?.fresh).toBe(true)
  })

  test('an unknown id is never kept, so a client made a moment later is found', async () => {
    const cache = createClientCache(ctx.deps.db, ctx.clock)
    expect(await cache.find('cl_made_later')).toBeUndefined()
    await ctx.createClient({ id: 'cl_made_later' })
    expect((await cache.find('cl_made_later'))?.client.id).toBe('cl_made_later')
  })
})
