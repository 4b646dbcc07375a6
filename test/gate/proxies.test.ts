import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { existsSync } from 'node:fs'
import type { Browser, BrowserContext, Page, Response } from 'playwright-core'
import { auditLogs } from '../../src/db/schema.ts'
import { sealGatePass } from '../../src/gate/gate-cookie.ts'
import { updateGate } from '../../src/gate/gate-settings.ts'
import { createClient } from '../../src/clients/registry.ts'
import { type Client } from '../../src/clients/model.ts'
import { hasChromium, launchChromium, startTestServer, type RunningServer } from '../browser/chromium.ts'
import { PostgresProxy } from '../db-proxy.ts'
import { onPostgres } from '../helpers.ts'
import { CADDY, makeCertificate, NGINX, proxyFolder, startCaddy, startNginx, throughProxy, type ProxySite, type RunningProxy } from './proxy-harness.ts'

/**
 * The gate behind the real proxies, configured as docs/gate.md says (test/gate/proxy-harness.ts), walked in
 * Chromium: nginx (`auth_request`) and Caddy (`forward_auth`) on loopback, each in front of an upstream that
 * records what reaches it, over https so that the `__Host-` cookies are the real thing.
 */
const hasProxies = existsSync(NGINX) && existsSync(CADDY)
if (!hasProxies) {
  if (process.env.CI) throw new Error(`the proxy tests need nginx at ${NGINX} and Caddy at ${CADDY} (apt-get install nginx caddy)`)
  console.warn(`proxy tests skipped: no nginx at ${NGINX} or no Caddy at ${CADDY} (apt-get install nginx caddy)`)
}
const runs = hasChromium && hasProxies

const GATE_COOKIE = '__Host-ofage_gate'
let running: RunningServer
let database: PostgresProxy | undefined
let folder: ReturnType<typeof proxyFolder>
let pem: string
let browser: Browser
const proxies: Partial<Record<'nginx' | 'caddy', RunningProxy>> = {}
const clients: Partial<Record<'nginx' | 'caddy' | 'other', Client>> = {}
/** The gate cookie each proxy's first walk got, for the tests after it. */
const passes: Partial<Record<'nginx' | 'caddy', string>> = {}

beforeAll(async () => {
  if (!runs) return
  // On Postgres the server's database is reached through a link the last test breaks.
  const throughLink = async (url: string) => {
    const direct = new URL(url)
    database = new PostgresProxy({ host: direct.hostname, port: Number(direct.port || 5432) })
    await database.open()
    return database.via(url)
  }
  // By name: nginx rewrites a Location that starts with its proxy_pass address (127.0.0.1:port), and the
  // hosted page's address must not be the one the proxies reach the service at.
  running = await startTestServer({}, { hostname: 'localhost', database: onPostgres ? throughLink : undefined })
  folder = proxyFolder()
  const hosts = { nginx: { site: 'shop-nginx.test', path: 'adults-nginx.test' }, caddy: { site: 'shop-caddy.test', path: 'adults-caddy.test' } }
  const certificate = await makeCertificate(folder.dir, [...Object.values(hosts.nginx), ...Object.values(hosts.caddy)])
  pem = certificate.pem
  const ofagePort = Number(new URL(running.baseUrl).port)
  const deps = running.services.deps
  // Each proxy's configuration names its client (docs/gate.md): made first, its hosts gated once the ports are known.
  for (const name of ['nginx', 'caddy'] as const) {
    clients[name] = (await createClient(deps, { name: `Shop behind ${name}`, redirectUris: ['https://shop.example/callback'], sandbox: true })).client
  }
  // Side by side, each kept as it starts, so that afterAll stops whatever did when another failed.
  const started = await Promise.allSettled([
    startNginx({ dir: folder.dir, ofagePort, clientId: clients.nginx!.id, certificate, hosts: hosts.nginx }).then((proxy) => (proxies.nginx = proxy)),
    startCaddy({ dir: folder.dir, ofagePort, clientId: clients.caddy!.id, certificate, hosts: hosts.caddy }).then((proxy) => (proxies.caddy = proxy)),
    launchChromium(['--host-resolver-rules=MAP *.test 127.0.0.1', '--ignore-certificate-errors']).then((launched) => (browser = launched)),
  ])
  for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason
  for (const name of ['nginx', 'caddy'] as const) {
    const { sites } = proxies[name]!
    await updateGate(deps, clients[name]!.id, { addHosts: [sites.site.origin, sites.path.origin], age: 18 })
  }
  clients.other = (await createClient(deps, { name: 'Another shop', redirectUris: ['https://other.example/callback'], sandbox: true })).client
  await updateGate(deps, clients.other.id, { addHosts: ['other.test'] })
}, 90_000)

afterAll(async () => {
  if (!runs) return
  await browser?.close().catch(() => {})
  await Promise.all([proxies.nginx?.stop(), proxies.caddy?.stop()])
  await running?.stop()
  await database?.close()
  folder?.remove()
}, 60_000)

function newContext(): Promise<BrowserContext> {
  return browser.newContext({ ignoreHTTPSErrors: true })
}

async function completeTestForm(page: Page, age: string) {
  await page.getByLabel('Test age').fill(age)
  await page.getByLabel('Test method').selectOption('age_only')
  await page.getByRole('button', { name: 'Complete test verification' }).click()
}

/** The page is the hosted page's check, on the service's own address. */
async function expectTheCheck(page: Page) {
  await page.getByLabel('Test age').waitFor({ timeout: 20_000 })
  expect(page.url().startsWith(`${running.baseUrl}/`)).toBe(true)
}

/** The page is the upstream's page for `path`, with the X-Age-Over the upstream got. */
async function expectUpstreamPage(page: Page, site: ProxySite, path: string, ageOver: string) {
  await page.waitForURL(`${site.origin}${path}`, { timeout: 20_000 })
  expect(await page.locator('h1').textContent()).toBe(`Upstream page ${path}`)
  expect(await page.locator('#age').textContent()).toBe(`X-Age-Over: ${ageOver}`)
}

/** The gate cookie of the proxy's first walk, or (that test filtered out) one made with the server's key. */
function passFor(name: 'nginx' | 'caddy'): string {
  const now = Math.floor(Date.now() / 1000)
  const origin = proxies[name]!.sites.site.origin
  passes[name] ??= sealGatePass(running.services.deps.keys.gateKey, { clientId: clients[name]!.id, origin, ageOver: 18, verificationId: crypto.randomUUID(), issuedAt: now, expiresAt: now + 3600 })
  return passes[name]
}

/** A gate cookie with `value` on `site`, as the gate sets it. */
function gateCookie(site: ProxySite, value: string) {
  return { name: GATE_COOKIE, value, url: `${site.origin}/`, secure: true, httpOnly: true, sameSite: 'Lax' as const }
}

/** A fresh browser whose only cookie is a gate cookie with `value` on `site`. */
async function contextWithGateCookie(site: ProxySite, value: string) {
  const context = await newContext()
  await context.addCookies([gateCookie(site, value)])
  return context
}

/** Waits until `/gate/auth`, through the proxy, answers a cookie as `wanted` says (a change arrives by NOTIFY). */
async function gateSettles(proxy: RunningProxy, site: ProxySite, cookie: string, wanted: 'passes' | 'refused') {
  const deadline = performance.now() + 15_000
  for (;;) {
    const response = await throughProxy(proxy, site, '/settling', { pem, headers: { cookie: `${GATE_COOKIE}=${cookie}` } })
    await response.body?.cancel()
    if ((response.status === 200) === (wanted === 'passes')) return
    if (performance.now() > deadline) throw new Error(`the gate did not settle to ${wanted}: ${response.status}`)
    await Bun.sleep(100)
  }
}

for (const name of ['nginx', 'caddy'] as const) {
  describe.skipIf(!runs)(`${name} as docs/gate.md configures it`, () => {
    const proxy = () => proxies[name]!
    const site = () => proxies[name]!.sites.site
    const client = () => clients[name]!

    test('unverified → the hosted page → sandbox check → the page asked for, path and query kept; a second page needs no new check', async () => {
      const context = await newContext()
      const page = await context.newPage()
      const wanted = '/account/orders?tab=2&q=a%20b'
      await page.goto(`${site().origin}${wanted}`)
      await expectTheCheck(page)
      expect(site().upstream.seen).toEqual([])
      await completeTestForm(page, '30')
      await expectUpstreamPage(page, site(), wanted, '18')
      const gate = (await context.cookies(site().origin)).find((cookie) => cookie.name === GATE_COOKIE)!
      expect(gate).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Lax', path: '/', domain: site().host })
      passes[name] = gate.value

      const second = await page.goto(`${site().origin}/second/page`)
      expect(second!.request().redirectedFrom()).toBeNull()
      await expectUpstreamPage(page, site(), '/second/page', '18')
      await context.close()
    }, 60_000)

    test('a tampered, an expired, another host\'s or another client\'s gate cookie → back to the check', async () => {
      const value = passes[name]!
      const [body, mac] = value.split('.') as [string, string]
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString())
      const key = running.services.deps.keys.gateKey
      const now = Math.floor(Date.now() / 1000)
      const pass = { clientId: client().id, origin: site().origin, ageOver: 18, verificationId: payload.v, issuedAt: now - 60, expiresAt: now + 3600 }
      const forged = {
        tampered: `${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`,
        'raised in the payload': `${Buffer.from(JSON.stringify({ ...payload, a: 21 })).toString('base64url')}.${mac}`,
        expired: sealGatePass(key, { ...pass, issuedAt: now - 7200, expiresAt: now - 1 }),
        'another host of the same client': sealGatePass(key, { ...pass, origin: proxy().sites.path.origin }),
        'another client': sealGatePass(key, { ...pass, clientId: clients.other!.id }),
      }
      const context = await newContext()
      const page = await context.newPage()
      for (const [kind, cookie] of Object.entries(forged)) {
        await context.clearCookies()
        await context.addCookies([gateCookie(site(), cookie)])
        await page.goto(`${site().origin}/members?cookie=${encodeURIComponent(kind)}`)
        await expectTheCheck(page)
      }
      // The real cookie, taken to the other gated host of this very client: its origin is not this one.
      await context.clearCookies()
      await context.addCookies([gateCookie(proxy().sites.path, value)])
      await page.goto(`${proxy().sites.path.origin}/adults/room`)
      await expectTheCheck(page)
      await context.close()
      // None of these requests reached a site. Counted by their paths, not by how many requests the site
      // had seen before: the last test's browser may still be fetching its second page's /favicon.ico through
      // the gate, with its valid cookie (it arrived during this test once in CI, on a busy machine).
      const reached = [...site().upstream.seen, ...proxy().sites.path.upstream.seen].map((seen) => seen.path)
      expect(reached.filter((path) => path.startsWith('/members') || path.startsWith('/adults/'))).toEqual([])
    }, 90_000)

    test('a threshold raised in the configuration → back to the check, and through again with a check for the new age', async () => {
      const context = await contextWithGateCookie(site(), passes[name]!)
      const page = await context.newPage()
      await page.goto(`${site().origin}/before`)
      await expectUpstreamPage(page, site(), '/before', '18')
      try {
        await updateGate(running.services.deps, client().id, { age: 21 })
        await gateSettles(proxy(), site(), passes[name]!, 'refused')
        await page.goto(`${site().origin}/after?raised=1`)
        await expectTheCheck(page)
        await completeTestForm(page, '30')
        await expectUpstreamPage(page, site(), '/after?raised=1', '21')
      } finally {
        await updateGate(running.services.deps, client().id, { age: 18 })
        await gateSettles(proxy(), site(), passes[name]!, 'passes')
      }
      await context.close()
    }, 60_000)

    test('rd=https://evil.example, //evil.example, /\\evil.example on /.ofage/start are refused on the gated host', async () => {
      const context = await newContext()
      const page = await context.newPage()
      const attempts = ['https://evil.example', '//evil.example', '/\\evil.example'].flatMap((rd) => [encodeURIComponent(rd), rd])
      for (const rd of attempts) {
        const response = await page.goto(`${site().origin}/.ofage/start?rd=${rd}`)
        expect({ rd, status: response!.status() }).toEqual({ rd, status: 400 })
        expect(new URL(page.url()).host).toBe(`${site().host}:${proxy().port}`)
        expect(await page.locator('code').textContent()).toBe('invalid_request')
      }
      // A page of the site whose path reads as another host: the gate's way back refuses it too.
      const response = await page.goto(`${site().origin}//evil.example/x`)
      expect(response!.status()).toBe(400)
      expect(new URL(page.url()).host).toBe(`${site().host}:${proxy().port}`)
      await context.close()
    }, 60_000)

    test('one path gated: the rest of the site is served without a check, the gated path is not', async () => {
      const path = proxy().sites.path
      const context = await newContext()
      const page = await context.newPage()
      await page.goto(`${path.origin}/`)
      await expectUpstreamPage(page, path, '/', 'none')
      await page.goto(`${path.origin}/adults/room?x=1`)
      await expectTheCheck(page)
      await completeTestForm(page, '30')
      await expectUpstreamPage(page, path, '/adults/room?x=1', '18')
      await page.goto(`${path.origin}/shop/open`)
      await expectUpstreamPage(page, path, '/shop/open', 'none')
      await context.close()
    }, 60_000)

    test('the visitor\'s own X-Age-Over, X-Verification-Id and X-Forwarded-Host are never taken for the gate\'s', async () => {
      const forged = { 'x-age-over': '99', 'x-verification-id': 'forged', 'x-forwarded-host': proxy().sites.path.host }
      const seen = site().upstream.seen.length
      const unverified = await throughProxy(proxy(), site(), '/forged', { pem, headers: forged })
      expect(unverified.status).toBe(name === 'nginx' ? 303 : 302)
      const post = await throughProxy(proxy(), site(), '/forged', { pem, method: 'POST', headers: forged })
      expect(post.status).not.toBe(200)
      expect(site().upstream.seen.length).toBe(seen)
      // A cookie made for the host the visitor names in X-Forwarded-Host does not count here.
      const forPath = sealGatePass(running.services.deps.keys.gateKey, {
        clientId: client().id,
        origin: proxy().sites.path.origin,
        ageOver: 30,
        verificationId: 'v',
        issuedAt: Math.floor(Date.now() / 1000),
        expiresAt: Math.floor(Date.now() / 1000) + 600,
      })
      expect((await throughProxy(proxy(), site(), '/forged', { pem, headers: { ...forged, cookie: `${GATE_COOKIE}=${forPath}` } })).status).not.toBe(200)
      expect(site().upstream.seen.length).toBe(seen)

      const passed = await throughProxy(proxy(), site(), '/forged', { pem, headers: { ...forged, cookie: `${GATE_COOKIE}=${passes[name]}` } })
      expect(passed.status).toBe(200)
      const got = site().upstream.seen.at(-1)!
      expect(got.path).toBe('/forged')
      expect(got.headers['x-age-over']).toBe('18')
      expect(got.headers['x-verification-id']).not.toBe('forged')

      // Where one path is gated, the open rest of the site gets neither header from a visitor.
      const path = proxy().sites.path
      expect((await throughProxy(proxy(), path, '/open?forged=1', { pem, headers: forged })).status).toBe(200)
      const open = path.upstream.seen.at(-1)!
      expect(open.path).toBe('/open?forged=1')
      expect([open.headers['x-age-over'], open.headers['x-verification-id']]).toEqual([undefined, undefined])
    }, 60_000)

    test("another client listing this very host, in any scheme or port, opens nothing: its pass is refused, its check never started, Host :80 is no way in (issue 30)", async () => {
      const other = clients.other!
      const deps = running.services.deps
      const port = proxy().port
      const claimed = [site().origin, `https://${site().host}`, `http://${site().host}`, `http://${site().host}:${port}`]
      await updateGate(deps, other.id, { addHosts: claimed })
      try {
        const now = Math.floor(Date.now() / 1000)
        const seen = site().upstream.seen.length
        const context = await newContext()
        const page = await context.newPage()
        for (const origin of claimed) {
          const value = sealGatePass(deps.keys.gateKey, { clientId: other.id, origin, ageOver: 30, verificationId: crypto.randomUUID(), issuedAt: now, expiresAt: now + 3600 })
          await context.clearCookies()
          await context.addCookies([gateCookie(site(), value)])
          await page.goto(`${site().origin}/members?claimed=${encodeURIComponent(origin)}`)
          await expectTheCheck(page)
          // The check is the proxy's client's, whatever else lists the host.
          expect(new URL(page.url()).searchParams.get('client_id')).toBe(client().id)
          for (const host of [`${site().host}:80`, site().host, `${site().host}:443`]) {
            for (const cookie of [`${GATE_COOKIE}=${value}`, `ofage_gate=${value}`]) {
              const response = await throughProxy(proxy(), site(), '/members', { pem, headers: { host, cookie } })
              await response.body?.cancel()
              expect({ host, cookie: cookie.split('=')[0], status: response.status }).not.toMatchObject({ status: 200 })
            }
          }
        }
        await context.close()
        expect(site().upstream.seen.length).toBe(seen)
        // The proxy's own client is let through as before.
        await gateSettles(proxy(), site(), passFor(name), 'passes')
      } finally {
        await updateGate(deps, other.id, { removeHosts: claimed })
      }
    }, 90_000)

    test('the upstream never received a request without a valid gate pass', async () => {
      const checks = await running.services.deps.db.select({ id: auditLogs.transactionId }).from(auditLogs).where(eq(auditLogs.clientId, client().id))
      const verifications = new Set(checks.map((row) => row.id))
      const gated = [...site().upstream.seen, ...proxy().sites.path.upstream.seen.filter((seen) => seen.path.startsWith('/adults/'))]
      expect(gated.length).toBeGreaterThan(5)
      for (const { path, headers } of gated) {
        expect({ path, ageOver: headers['x-age-over'], known: verifications.has(headers['x-verification-id']!) }).toEqual({ path, ageOver: expect.stringMatching(/^(18|21)$/), known: true })
      }
    })
  })
}

/** A page's status and its error code, or its text where it has none (a plain-text answer). */
async function describeAnswer(page: Page, response: Response | null) {
  const code = (await page.locator('code').count()) ? await page.locator('code').textContent() : undefined
  return code ? { status: response!.status(), code } : { status: response!.status(), text: (await page.locator('body').textContent())!.trim() }
}

/**
 * `/gate/auth` keeps the gated hosts in memory (fresh for up to 30 s, or until a NOTIFY), so a visitor with a
 * valid cookie may pass during a short outage, by design; `/.ofage/start` reads the database, so a visitor
 * without one gets its 503 page. Once the copy is gone (30 s later, or an instance started meanwhile),
 * `/gate/auth` itself answers 503: nginx shows `/.ofage/unavailable`, Caddy passes the answer on.
 */
test.skipIf(!runs || !onPostgres)('the database briefly down: an unverified visitor gets a clear 503 through nginx and Caddy, never the upstream; the gate works again once it is back', async () => {
  const names = ['nginx', 'caddy'] as const
  const unverified = await newContext()
  const page = await unverified.newPage()
  const holders = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await (await contextWithGateCookie(proxies[name]!.sites.site, passFor(name))).newPage()] as const)))
  for (const name of names) await gateSettles(proxies[name]!, proxies[name]!.sites.site, passFor(name), 'passes')
  const seen = Object.fromEntries(names.map((name) => [name, proxies[name]!.sites.site.upstream.seen.length]))
  const outcomes: Record<string, unknown> = {}

  await database!.close()
  try {
    for (const name of names) {
      const site = proxies[name]!.sites.site
      const response = await page.goto(`${site.origin}/during-outage`)
      outcomes[`${name}, hosts in memory, no cookie`] = { ...(await describeAnswer(page, response)), host: new URL(page.url()).host }
      const held = await holders[name]!.goto(`${site.origin}/held-during-outage`)
      outcomes[`${name}, hosts in memory, valid cookie`] = { status: held!.status(), page: await holders[name]!.locator('h1').textContent() }
    }
    // The copy gone: as 30 s after the last read, or on an instance that started during the outage.
    running.services.deps.gate.invalidate()
    for (const name of names) {
      const site = proxies[name]!.sites.site
      const response = await page.goto(`${site.origin}/during-outage`)
      outcomes[`${name}, hosts not in memory, no cookie`] = await describeAnswer(page, response)
      const held = await holders[name]!.goto(`${site.origin}/held-during-outage`)
      outcomes[`${name}, hosts not in memory, valid cookie`] = { status: held!.status() }
    }
  } finally {
    await database!.open()
  }
  expect(outcomes).toEqual({
    'nginx, hosts in memory, no cookie': { status: 503, code: 'temporarily_unavailable', host: `shop-nginx.test:${proxies.nginx!.port}` },
    'nginx, hosts in memory, valid cookie': { status: 200, page: 'Upstream page /held-during-outage' },
    'caddy, hosts in memory, no cookie': { status: 503, code: 'temporarily_unavailable', host: `shop-caddy.test:${proxies.caddy!.port}` },
    'caddy, hosts in memory, valid cookie': { status: 200, page: 'Upstream page /held-during-outage' },
    'nginx, hosts not in memory, no cookie': { status: 503, code: 'temporarily_unavailable' },
    'nginx, hosts not in memory, valid cookie': { status: 503 },
    'caddy, hosts not in memory, no cookie': { status: 503, text: 'The age check is not available right now.' },
    'caddy, hosts not in memory, valid cookie': { status: 503 },
  })
  for (const name of names) {
    // Only the cookie holder's page (and its favicon) reached the upstream meanwhile.
    const fresh = proxies[name]!.sites.site.upstream.seen.slice(seen[name])
    expect(fresh.map((request) => [request.path, request.headers['x-age-over']])).toContainEqual(['/held-during-outage', '18'])
    expect(fresh.filter((request) => request.path === '/during-outage' || request.headers['x-age-over'] !== '18')).toEqual([])
  }

  // Back: nothing restarted, the next visitors are answered as before.
  for (const name of names) {
    const site = proxies[name]!.sites.site
    const deadline = performance.now() + 20_000
    while ((await page.goto(`${site.origin}/after-outage`))!.status() === 503 && performance.now() < deadline) await Bun.sleep(250)
    await expectTheCheck(page)
    await holders[name]!.goto(`${site.origin}/after-outage`)
    await expectUpstreamPage(holders[name]!, site, '/after-outage', '18')
  }
  await Promise.all([unverified.close(), ...Object.values(holders).map((held) => held.context().close())])
}, 90_000)
