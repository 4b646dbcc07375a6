import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { findClient, updateClient } from '../../src/clients/registry.ts'
import { deleteClient } from '../../src/clients/delete-client.ts'
import { listGateHostsByClient } from '../../src/gate/gate-hosts.ts'
import { readGateOrigin, readGateSettings, updateGate } from '../../src/gate/gate-settings.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { createUser, sessionCsrf, signedIn, type DashboardBrowser } from '../dashboard/dashboard.ts'

/**
 * A client's gate (docs/gate.md, "In three steps"): its hosts, each registering its callback as a redirect
 * URI, one client per host, the age and the cookie's lifetime; on the dashboard's settings page as by the
 * service, and what the hosted page then accepts.
 */
let ctx: TestContext
let live: Awaited<ReturnType<TestContext['createClient']>>
let rival: Awaited<ReturnType<TestContext['createClient']>>
let owner: DashboardBrowser

beforeAll(async () => {
  ctx = await createTestContext()
  live = await ctx.createClient({ name: 'Live shop' })
  rival = await ctx.createClient({ name: 'Rival', redirectUris: ['https://rival.example/cb'] })
  await createUser(ctx, live.id, 'owner@shop.example')
  owner = await signedIn(ctx, 'owner@shop.example')
}, 60_000)
afterAll(() => ctx.close())

const client = async (id: string) => (await findClient(ctx.deps.db, id))!

/** Whether the hosted page opens for this client and redirect URI: what the gate's start depends on. */
async function pageOpens(clientId: string, redirectUri: string): Promise<boolean> {
  const response = await ctx.request(`/?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, state: 'st' })}`)
  return response.status === 200
}

describe('gate hosts', () => {
  test('a host name means https; an origin keeps its scheme and port; a path, query or credentials are refused', () => {
    expect(readGateOrigin('shop.example')).toBe('https://shop.example')
    expect(readGateOrigin('Shop.Example/')).toBe('https://shop.example')
    expect(readGateOrigin('https://shop.example:8443')).toBe('https://shop.example:8443')
    expect(readGateOrigin('https://shop.example:443')).toBe('https://shop.example')
    expect(readGateOrigin('http://localhost:8081')).toBe('http://localhost:8081')
    for (const bad of ['https://shop.example/path', 'shop.example?x=1', 'https://user:pw@shop.example', 'ftp://shop.example', '', 'shop example', 'https://shop.example#x']) {
      expect(() => readGateOrigin(bad), bad).toThrow()
    }
  })

  test('gating a host registers its callback as a redirect URI, and the hosted page opens for it; removing it takes both away', async () => {
    const settings = await updateGate(ctx.deps, live.id, { addHosts: ['shop.example'] })
    expect(settings!.hosts).toEqual(['https://shop.example'])
    expect((await client(live.id)).redirectUris).toContain('https://shop.example/.ofage/callback')
    expect(await pageOpens(live.id, 'https://shop.example/.ofage/callback')).toBe(true)
    await updateGate(ctx.deps, live.id, { removeHosts: ['https://shop.example'] })
    expect((await client(live.id)).redirectUris).not.toContain('https://shop.example/.ofage/callback')
    expect(await pageOpens(live.id, 'https://shop.example/.ofage/callback')).toBe(false)
  })

  test('another client may list the same host: it locks no one out and opens nothing (the proxy names the client); a live client may not gate a plain-http host off loopback', async () => {
    await updateGate(ctx.deps, live.id, { addHosts: ['shop.example'] })
    const rivals = await updateGate(ctx.deps, rival.id, { addHosts: ['https://shop.example'] })
    expect(rivals!.hosts).toEqual(['https://shop.example'])
    expect((await client(rival.id)).redirectUris).toEqual(['https://rival.example/cb', 'https://shop.example/.ofage/callback'])
    expect((await readGateSettings(ctx.deps.db, await client(live.id))).hosts).toContain('https://shop.example')
    await updateGate(ctx.deps, rival.id, { removeHosts: ['https://shop.example'] })
    expect((await readGateSettings(ctx.deps.db, await client(live.id))).hosts).toContain('https://shop.example')
    expect((await client(rival.id)).redirectUris).toEqual(['https://rival.example/cb'])
    await expect(updateGate(ctx.deps, live.id, { addHosts: ['http://plain.example'] })).rejects.toThrow('https')
    const loopback = await updateGate(ctx.deps, live.id, { addHosts: ['http://localhost:8081'] })
    expect(loopback!.hosts).toEqual(['http://localhost:8081', 'https://shop.example'])
    // Adding a host twice changes nothing.
    await updateGate(ctx.deps, live.id, { addHosts: ['shop.example'] })
    expect((await client(live.id)).redirectUris.filter((uri) => uri === 'https://shop.example/.ofage/callback')).toHaveLength(1)
  })

  test("a gated host's callback is not removed alone as a redirect URI", async () => {
    await expect(updateClient(ctx.deps.db, live.id, { removeRedirectUris: ['https://shop.example/.ofage/callback'] })).rejects.toThrow('remove the gate host instead')
  })

  test('age and lifetime: bounded, never under the minimum age; a minimum age raised since raises the gate with it', async () => {
    await expect(updateGate(ctx.deps, live.id, { age: 0 })).rejects.toThrow('gate age')
    await expect(updateGate(ctx.deps, live.id, { age: 100 })).rejects.toThrow('gate age')
    await expect(updateGate(ctx.deps, live.id, { ttlSeconds: 59 })).rejects.toThrow('lifetime')
    await expect(updateGate(ctx.deps, live.id, { ttlSeconds: 400 * 86_400 + 1 })).rejects.toThrow('lifetime')
    const set = await updateGate(ctx.deps, live.id, { age: 21, ttlSeconds: 3600 })
    expect(set).toMatchObject({ age: 21, ageIsSet: true, ttlSeconds: 3600 })
    await updateClient(ctx.deps.db, live.id, { minAge: 25 })
    expect((await readGateSettings(ctx.deps.db, await client(live.id))).age).toBe(25)
    await expect(updateGate(ctx.deps, live.id, { age: 21 })).rejects.toThrow('minimum age')
    await updateClient(ctx.deps.db, live.id, { minAge: null })
    expect((await updateGate(ctx.deps, live.id, { age: null }))!).toMatchObject({ age: 18, ageIsSet: false })
  })

  test("deleting a client takes its claims of a host with it, and leaves another client's", async () => {
    const temporary = await ctx.createClient({ name: 'Temporary', redirectUris: ['https://tmp.example/cb'] })
    await updateGate(ctx.deps, temporary.id, { addHosts: ['tmp.example'] })
    expect((await updateGate(ctx.deps, rival.id, { addHosts: ['tmp.example'] }))!.hosts).toEqual(['https://tmp.example'])
    await deleteClient(ctx.deps.db, temporary.id, { now: ctx.clock.now(), force: true })
    expect(await listGateHostsByClient(ctx.deps.db)).not.toContainKey(temporary.id)
    expect((await readGateSettings(ctx.deps.db, await client(rival.id))).hosts).toEqual(['https://tmp.example'])
    await updateGate(ctx.deps, rival.id, { removeHosts: ['tmp.example'] })
  })
})

describe('on the dashboard', () => {
  async function settings(): Promise<string> {
    const response = await owner.request('/dashboard/settings')
    expect(response.status).toBe(200)
    return response.text()
  }
  const post = async (path: string, fields: Record<string, string>) => owner.post(`/dashboard/settings/${path}`, { csrf: await sessionCsrf(owner), ...fields })

  test('lists the gated hosts; a host added or removed there is gated or not at once, with a notice', async () => {
    const added = await post('gate-hosts/add', { gate_host: 'forum.example' })
    expect(added.status).toBe(303)
    expect(added.headers.get('location')).toBe('/dashboard/settings?notice=gate_host_added')
    expect((await readGateSettings(ctx.deps.db, await client(live.id))).hosts).toContain('https://forum.example')
    const html = await settings()
    expect(html).toContain('data-gate-host="https://forum.example"')
    const removed = await post('gate-hosts/remove', { gate_host: 'https://forum.example' })
    expect(removed.status).toBe(303)
    expect((await readGateSettings(ctx.deps.db, await client(live.id))).hosts).not.toContain('https://forum.example')
  })

  test('a host that is not one is refused with the reason and the value kept; nothing changes', async () => {
    await updateGate(ctx.deps, rival.id, { addHosts: ['rival.example'] })
    for (const [host, reason] of [
      ['http://plain.example', 'must use https'],
      ['shop.example/path', 'without a path'],
    ] as const) {
      const refused = await post('gate-hosts/add', { gate_host: host })
      expect(refused.status).toBe(400)
      const html = await refused.text()
      expect(html).toContain(reason)
      expect(html).toContain(`value="${host}"`)
    }
    expect((await readGateSettings(ctx.deps.db, await client(live.id))).hosts).not.toContain('https://plain.example')
  })

  test("the settings page names the client the site's proxy must name, and a host another client lists is gated here too", async () => {
    expect(await settings()).toContain(`data-gate-client="${live.id}"`)
    const added = await post('gate-hosts/add', { gate_host: 'rival.example' })
    expect(added.status).toBe(303)
    expect((await readGateSettings(ctx.deps.db, await client(live.id))).hosts).toContain('https://rival.example')
    expect((await readGateSettings(ctx.deps.db, await client(rival.id))).hosts).toContain('https://rival.example')
    await post('gate-hosts/remove', { gate_host: 'https://rival.example' })
  })

  test('age and lifetime are saved; a lifetime not offered, or an age out of range, is refused', async () => {
    expect((await post('gate', { gate_age: '21', gate_ttl: '86400' })).status).toBe(303)
    expect(await readGateSettings(ctx.deps.db, await client(live.id))).toMatchObject({ age: 21, ttlSeconds: 86_400 })
    expect(await settings()).toMatch(/<option value="86400" selected>1 day<\/option>/)
    expect((await post('gate', { gate_age: '21', gate_ttl: '12345' })).status).toBe(400)
    expect((await post('gate', { gate_age: '150', gate_ttl: '86400' })).status).toBe(400)
    expect((await post('gate', { gate_age: '', gate_ttl: '2592000' })).status).toBe(303)
    expect(await readGateSettings(ctx.deps.db, await client(live.id))).toMatchObject({ age: 18, ageIsSet: false, ttlSeconds: 2_592_000 })
  })

  test('a lifetime set by the CLI outside the list is offered too, so saving the age keeps it', async () => {
    await updateGate(ctx.deps, live.id, { ttlSeconds: 5400 })
    expect(await settings()).toMatch(/<option value="5400" selected>90 minutes<\/option>/)
    expect((await post('gate', { gate_age: '19', gate_ttl: '5400' })).status).toBe(303)
    expect(await readGateSettings(ctx.deps.db, await client(live.id))).toMatchObject({ age: 19, ttlSeconds: 5400 })
  })

  test('a form from another site changes nothing', async () => {
    const before = await readGateSettings(ctx.deps.db, await client(live.id))
    const foreign = await owner.post('/dashboard/settings/gate-hosts/add', { csrf: await sessionCsrf(owner), gate_host: 'evil.example' }, { origin: 'https://evil.example' })
    expect(foreign.status).toBe(403)
    expect(await readGateSettings(ctx.deps.db, await client(live.id))).toEqual(before)
  })
})
