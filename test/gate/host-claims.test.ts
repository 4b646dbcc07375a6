import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sealGatePass } from '../../src/gate/gate-cookie.ts'
import { listGateHostsByClient } from '../../src/gate/gate-hosts.ts'
import { updateGate } from '../../src/gate/gate-settings.ts'
import { createTestContext, PUBLIC_URL, type TestContext } from '../helpers.ts'

/**
 * Issue 30's gate findings, as an attacker with a sandbox account played them: a host is opened only for
 * the client that the site's own proxy configuration names (docs/gate.md, "Who a host belongs to"), never
 * for whoever listed its name in a dashboard, in any scheme or port, first or last.
 */
let ctx: TestContext
let live: Awaited<ReturnType<TestContext['createClient']>>
let tenant: Awaited<ReturnType<TestContext['createClient']>>
const logged: Record<string, unknown>[] = []

beforeAll(async () => {
  const record = (event: string, fields?: Record<string, unknown>) => logged.push({ event, ...fields })
  ctx = await createTestContext({ log: { info: record, error: record } })
  live = await ctx.createClient({ name: 'Live shop' })
  tenant = await ctx.createClient({ name: 'Sandbox tenant', sandbox: true })
})
afterAll(() => ctx.close())

type Proxy = { host: string; proto?: string; client?: string }

/** What a proxy sends: nginx as documented (`$host:$server_port`, `$scheme`, `client=`), Caddy (the visitor's Host), or a configuration from before. */
const nginx = (host: string, port: number, client: string): Proxy => ({ host: `${host}:${port}`, proto: 'https', client })
const nginxBefore = (host: string): Proxy => ({ host })

function proxyHeaders(proxy: Proxy, cookie?: string): Headers {
  const headers = new Headers({ 'x-forwarded-host': proxy.host })
  if (proxy.proto) headers.set('x-forwarded-proto', proxy.proto)
  if (cookie) headers.set('cookie', cookie)
  return headers
}

/** `/gate/auth` as the proxy asks it; the client in its address, as the documented configurations put it. */
async function auth(proxy: Proxy, cookie?: string, redirect = false): Promise<number> {
  const query = new URLSearchParams({ ...(redirect && { redirect: '1' }), ...(proxy.client && { client: proxy.client }) })
  const response = await ctx.handle(new Request(`${PUBLIC_URL}/gate/auth?${query}`, { headers: proxyHeaders(proxy, cookie) }))
  return response.status
}

/** `/.ofage/start` through the proxy; returns the status and, for a redirect to the page, the client it starts a check of. */
async function start(proxy: Proxy): Promise<{ status: number; client?: string | null }> {
  const headers = proxyHeaders(proxy)
  if (proxy.client) headers.set('x-ofage-client', proxy.client)
  const response = await ctx.handle(new Request(`${PUBLIC_URL}/.ofage/start?rd=%2F`, { headers }))
  const location = response.headers.get('location')
  return location ? { status: response.status, client: new URL(location).searchParams.get('client_id') } : { status: response.status }
}

/** A gate cookie as the gate makes it after a check of `clientId` on `origin`: what a tenant's own pass of its sandbox form gives it. */
function pass(clientId: string, origin: string, name = '__Host-ofage_gate'): string {
  const now = Math.floor(ctx.clock.now().getTime() / 1000)
  return `${name}=${sealGatePass(ctx.deps.keys.gateKey, { clientId, origin, ageOver: 18, verificationId: crypto.randomUUID(), issuedAt: now, expiresAt: now + 3600 })}`
}

/** Notices of a change reach the directory asynchronously: reads until `check` holds (at most 3 s). */
async function settles(check: () => Promise<boolean>) {
  for (let i = 0; i < 60 && !(await check()); i++) await Bun.sleep(50)
}

describe('a host opens only for the client its proxy names (issue 30)', () => {
  test('1: a sandbox tenant lists http://shop.example, the live client gates https://shop.example later: the tenant\'s pass opens nothing, and its check is never the site\'s', async () => {
    await updateGate(ctx.deps, tenant.id, { addHosts: ['http://shop.example'] })
    await updateGate(ctx.deps, live.id, { addHosts: ['shop.example'] })
    const documented = nginx('shop.example', 443, live.id)
    const tenantPass = pass(tenant.id, 'http://shop.example')
    await settles(async () => (await auth(documented, pass(live.id, 'https://shop.example'))) === 200)
    expect(await auth(documented, pass(live.id, 'https://shop.example'))).toBe(200)
    expect(await auth(documented, tenantPass)).toBe(401)
    expect(await auth(documented, pass(tenant.id, 'http://shop.example', 'ofage_gate'))).toBe(401)
    expect(await start(documented)).toEqual({ status: 303, client: live.id })
    // The configuration from before names no client: the name is claimed twice, so it is refused, never the tenant's.
    expect(await auth(nginxBefore('shop.example'), tenantPass)).toBe(403)
    expect(await auth(nginxBefore('shop.example'), pass(tenant.id, 'http://shop.example', 'ofage_gate'))).toBe(403)
    expect((await start(nginxBefore('shop.example'))).status).toBe(404)
    // A sandbox client never answers for a name a live client gates, even where a proxy names it.
    const namingTenant = { host: 'shop.example', proto: 'http', client: tenant.id }
    expect(await auth(namingTenant, pass(tenant.id, 'http://shop.example', 'ofage_gate'))).toBe(403)
    expect((await start(namingTenant)).status).toBe(404)
  })

  test('2: the live client gates https://shop2.example:8443, a tenant lists http://shop2.example: nginx names the port, and the tenant\'s default-port entry never wins', async () => {
    await updateGate(ctx.deps, live.id, { addHosts: ['https://shop2.example:8443'] })
    await updateGate(ctx.deps, tenant.id, { addHosts: ['http://shop2.example'] })
    const documented = nginx('shop2.example', 8443, live.id)
    await settles(async () => (await auth(documented, pass(live.id, 'https://shop2.example:8443'))) === 200)
    expect(await auth(documented, pass(live.id, 'https://shop2.example:8443'))).toBe(200)
    expect(await auth(documented, pass(tenant.id, 'http://shop2.example'))).toBe(401)
    expect(await start(documented)).toEqual({ status: 303, client: live.id })
    // nginx's `$host` alone (no port): refused, not the tenant's default-port entry.
    expect(await auth(nginxBefore('shop2.example'), pass(tenant.id, 'http://shop2.example'))).toBe(403)
    expect(await auth(nginxBefore('shop2.example'), pass(tenant.id, 'http://shop2.example', 'ofage_gate'))).toBe(403)
    expect((await start(nginxBefore('shop2.example'))).status).toBe(404)
  })

  test('3: the live client gates https://shop3.example first, a tenant lists http://shop3.example after: Host shop3.example:80 through Caddy or Traefik is a 403, not the site', async () => {
    await updateGate(ctx.deps, live.id, { addHosts: ['shop3.example'] })
    await updateGate(ctx.deps, tenant.id, { addHosts: ['http://shop3.example'] })
    // Caddy and Traefik forward the visitor's own Host, port and all, with the scheme it came in on.
    const caddy = (host: string): Proxy => ({ host, proto: 'https', client: live.id })
    await settles(async () => (await auth(caddy('shop3.example'), pass(live.id, 'https://shop3.example'))) === 200)
    for (const cookie of [pass(tenant.id, 'http://shop3.example'), pass(tenant.id, 'http://shop3.example', 'ofage_gate'), pass(live.id, 'https://shop3.example')]) {
      expect(await auth(caddy('shop3.example:80'), cookie, true)).toBe(403)
      expect(await auth({ host: 'shop3.example:80', proto: 'https' }, cookie, true)).toBe(403)
    }
    expect(await auth(caddy('shop3.example'), pass(live.id, 'https://shop3.example'), true)).toBe(200)
    expect(await auth(caddy('shop3.example'), pass(tenant.id, 'http://shop3.example'), true)).toBe(302)
    expect((await start(caddy('shop3.example:80'))).status).toBe(404)
  })

  test('8: a tenant who lists the very origin first locks no one out, and which row came first decides nothing', async () => {
    await updateGate(ctx.deps, tenant.id, { addHosts: ['https://shop4.example'] })
    await updateGate(ctx.deps, live.id, { addHosts: ['https://shop4.example'] })
    await updateGate(ctx.deps, live.id, { addHosts: ['https://shop5.example'] })
    await updateGate(ctx.deps, tenant.id, { addHosts: ['https://shop5.example'] })
    const hosts = await listGateHostsByClient(ctx.deps.db)
    expect(hosts.get(live.id)).toContain('https://shop4.example')
    expect(hosts.get(tenant.id)).toContain('https://shop4.example')
    for (const name of ['shop4.example', 'shop5.example']) {
      const documented = nginx(name, 443, live.id)
      await settles(async () => (await auth(documented, pass(live.id, `https://${name}`))) === 200)
      expect(await auth(documented, pass(live.id, `https://${name}`))).toBe(200)
      expect(await auth(documented, pass(tenant.id, `https://${name}`))).toBe(401)
      expect(await start(documented)).toEqual({ status: 303, client: live.id })
      expect(await auth(nginxBefore(name), pass(live.id, `https://${name}`))).toBe(403)
    }
  })

  test('a configuration from before that names no client keeps working while one client alone lists the host, with a line in the log', async () => {
    const alone = await ctx.createClient({ name: 'Alone', sandbox: true })
    await updateGate(ctx.deps, alone.id, { addHosts: ['alone.example'] })
    const cookie = pass(alone.id, 'https://alone.example')
    await settles(async () => (await auth(nginxBefore('alone.example'), cookie)) === 200)
    expect(await auth(nginxBefore('alone.example'), cookie)).toBe(200)
    expect(await start(nginxBefore('alone.example'))).toEqual({ status: 303, client: alone.id })
    expect(logged.some((line) => line.event === 'gate_client_unnamed' && line.origin === 'https://alone.example')).toBe(true)
    // From the moment another client lists the name, the unnamed configuration is refused, with a line saying why.
    await updateGate(ctx.deps, tenant.id, { addHosts: ['http://alone.example:8080'] })
    await settles(async () => (await auth(nginxBefore('alone.example'), cookie)) === 403)
    expect(await auth(nginxBefore('alone.example'), cookie)).toBe(403)
    expect(logged.some((line) => line.event === 'gate_host_ambiguous' && line.host === 'alone.example')).toBe(true)
    expect(await auth(nginx('alone.example', 443, alone.id), cookie)).toBe(200)
  })
})

describe('claims race without a 500 (issue 30, finding 7)', () => {
  test('eight pairs of clients listing one host each at the same moment all succeed; one client listing a host twice at once keeps one row', async () => {
    const pairs = await Promise.all(Array.from({ length: 8 }, async (_, i) => [await ctx.createClient({ name: `A${i}` }), await ctx.createClient({ name: `B${i}`, sandbox: true })] as const))
    const outcomes = await Promise.allSettled(pairs.flatMap(([a, b], i) => [updateGate(ctx.deps, a.id, { addHosts: [`race${i}.example`] }), updateGate(ctx.deps, b.id, { addHosts: [`race${i}.example`] })]))
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([])
    const twice = await Promise.allSettled([updateGate(ctx.deps, live.id, { addHosts: ['twice.example'] }), updateGate(ctx.deps, live.id, { addHosts: ['twice.example'] })])
    expect(twice.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled'])
    expect((await listGateHostsByClient(ctx.deps.db)).get(live.id)!.filter((origin) => origin === 'https://twice.example')).toHaveLength(1)
  })
})
