import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { cleartextAddresses } from '../../src/clients/model.ts'
import { createClient, findClient, updateClient } from '../../src/clients/registry.ts'
import { createTestContext, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { testBrowser } from '../verification/browser.ts'
import { createUser, sessionCsrf, signedIn } from '../dashboard/dashboard.ts'

/**
 * Issue 19, found 4: a live client's redirect URIs and home URL must be https, except loopback (RFC 9700
 * §2.6), wherever they are set: `clients create/update` and the dashboard both go through the service.
 * Sandbox clients may keep http. Rows registered before the rule keep working and are reported.
 */
let ctx: TestContext

beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

const why = 'must use https for a live client'

describe('the service refuses new http addresses for a live client', () => {
  test('create: an http redirect URI or home URL off loopback is invalid_request, saying why', async () => {
    for (const input of [
      { redirectUris: ['http://site.example/cb'] },
      { redirectUris: [REDIRECT_URI, 'http://site.example:8443/cb'] },
      { redirectUris: [REDIRECT_URI], homeUrl: 'http://site.example/' },
      { redirectUris: ['http://127.0.0.1.site.example/cb'] },
      { redirectUris: ['http://10.0.0.1/cb'] },
    ]) {
      const refused = await createClient(ctx.deps, { name: 'Plain', ...input }).catch((error) => error)
      expect({ input, code: refused.code }).toEqual({ input, code: 'invalid_request' })
      expect(refused.description).toContain(why)
      expect(refused.description).toContain('RFC 9700 §2.6')
    }
  })

  test('loopback on any port may use http, live or not; a sandbox client may use http anywhere', async () => {
    const loopback = ['http://127.0.0.1/cb', 'http://127.0.0.1:8080/cb', 'http://[::1]:3000/cb', 'http://localhost/cb', 'http://LOCALHOST:5173/cb']
    const live = await createClient(ctx.deps, { name: 'Local', redirectUris: loopback, homeUrl: 'http://localhost:5173/' })
    expect(live.client.redirectUris).toEqual(loopback)
    expect(cleartextAddresses(live.client)).toEqual([])
    const sandbox = await createClient(ctx.deps, { name: 'Test', sandbox: true, redirectUris: ['http://site.example/cb'], homeUrl: 'http://site.example/' })
    expect(cleartextAddresses(sandbox.client)).toEqual([])
    expect((await updateClient(ctx.deps.db, sandbox.client.id, { addRedirectUris: ['http://site.example/cb2'] }))!.redirectUris).toHaveLength(2)
  })

  test('update: a new http redirect URI or home URL for a live client is refused and changes nothing', async () => {
    const { client } = await createClient(ctx.deps, { name: 'Live', redirectUris: [REDIRECT_URI] })
    for (const changes of [{ addRedirectUris: ['http://site.example/cb'] }, { homeUrl: 'http://site.example/' }, { minAge: 21, homeUrl: 'http://site.example/' }]) {
      const refused = await updateClient(ctx.deps.db, client.id, changes).catch((error) => error)
      expect(refused.description).toContain(why)
    }
    expect(await findClient(ctx.deps.db, client.id)).toEqual(client)
  })
})

describe('http rows from before the rule', () => {
  async function oldHttpClient() {
    const { client, secret } = await createClient(ctx.deps, { name: 'Old http', redirectUris: [REDIRECT_URI] })
    await ctx.deps.db.execute(sql`update clients set redirect_uris = array[${REDIRECT_URI}, 'http://old.example/cb'], home_url = 'http://old.example/' where id = ${client.id}`)
    return { client: (await findClient(ctx.deps.db, client.id))!, secret }
  }

  test('keep working: the page opens with the http redirect URI; other settings save with the old home URL unchanged', async () => {
    const { client } = await oldHttpClient()
    expect(cleartextAddresses(client)).toEqual(['http://old.example/cb', 'http://old.example/'])
    const { response } = await testBrowser(ctx).open({ client_id: client.id, redirect_uri: 'http://old.example/cb', state: 'st' })
    expect(response.status).toBe(200)
    const updated = await updateClient(ctx.deps.db, client.id, { minAge: 21, homeUrl: 'http://old.example/', addRedirectUris: ['http://old.example/cb'] })
    expect(updated).toMatchObject({ minAge: 21, homeUrl: 'http://old.example/' })
  })

  test('the dashboard refuses a new http address with the rule, and says which registered ones need https', async () => {
    const { client } = await oldHttpClient()
    await createUser(ctx, client.id, 'owner@old.example')
    const owner = await signedIn(ctx, 'owner@old.example')
    const page = await (await owner.request('/dashboard/settings')).text()
    expect(page).toContain('data-needs-https')
    expect(page).toContain('These addresses use plain http, which a live site may no longer register: http://old.example/cb, http://old.example/.')
    const added = await owner.post('/dashboard/settings/redirect-uris/add', { csrf: await sessionCsrf(owner), redirect_uri: 'http://new.example/cb' })
    expect(added.status).toBe(400)
    expect(await added.text()).toContain('A live site must use https (RFC 9700 §2.6)')
    expect((await findClient(ctx.deps.db, client.id))!.redirectUris).not.toContain('http://new.example/cb')
    const german = await (await owner.request('/dashboard/settings?lang=de')).text()
    expect(german).toContain('Diese Adressen verwenden unverschlüsseltes http')
  })

  test('a client without http addresses shows no such notice', async () => {
    const { client } = await createClient(ctx.deps, { name: 'Clean', redirectUris: [REDIRECT_URI] })
    await createUser(ctx, client.id, 'owner@clean.example')
    const owner = await signedIn(ctx, 'owner@clean.example')
    expect(await (await owner.request('/dashboard/settings')).text()).not.toContain('data-needs-https')
  })
})
