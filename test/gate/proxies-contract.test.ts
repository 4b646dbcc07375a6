import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sealGatePass } from '../../src/gate/gate-cookie.ts'
import { GateUnavailableError } from '../../src/gate/gate-directory.ts'
import { updateGate } from '../../src/gate/gate-settings.ts'
import { createClient } from '../../src/clients/registry.ts'
import { startTestServer, type RunningServer } from '../browser/chromium.ts'
import { readPage, testBrowser } from '../verification/browser.ts'
import { gateSnippet } from './proxy-harness.ts'

/**
 * The forward-auth contract over HTTP against a real listening server, each proxy played by the test as it
 * asks and acts on the answer: Traefik's ForwardAuth as its documentation and pkg/middlewares/auth/forward.go
 * describe it (Debian packages no Traefik, so none runs here), and Caddy's forward_auth and nginx's
 * auth_request as test/gate/proxies.test.ts runs them, so that a change of the gate's answers shows without
 * a proxy binary. What each proxy is told (addresses, headers to copy) is read from docs/gate.md's snippets.
 */
const SHOP = 'https://shop.example'
let running: RunningServer
let ofage: URL
/** The client the proxies' configurations name, and another client that lists the same host. */
let shopClient: string
let rivalClient: string

beforeAll(async () => {
  running = await startTestServer()
  ofage = new URL(running.baseUrl)
  const deps = running.services.deps
  shopClient = (await createClient(deps, { name: 'Shop', redirectUris: ['https://shop.example/callback'], sandbox: true })).client.id
  await updateGate(deps, shopClient, { addHosts: ['shop.example'], age: 18 })
  rivalClient = (await createClient(deps, { name: 'Rival', redirectUris: ['https://rival.example/callback'], sandbox: true })).client.id
  await updateGate(deps, rivalClient, { addHosts: ['http://shop.example', 'https://shop.example:8443'] })
}, 30_000)
afterAll(() => running.stop())

/** `127.0.0.1:3000`, where the snippets say ofage listens, is the test's server. */
function toOfage(address: string): URL {
  const url = new URL(address)
  expect(url.host).toBe('127.0.0.1:3000')
  url.host = ofage.host
  return url
}

type Visit = { method: string; url: URL; headers: Headers }
/** What a proxy does with a visit: sends it on to the site with these headers, or answers the visitor itself. */
type Outcome = { forwarded: Headers } | { answered: Response }
type Proxy = { visit(visit: Visit): Promise<Outcome> }

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailers', 'transfer-encoding', 'upgrade']

/** The visitor's headers as a proxy copies them onward: all of them but the hop-by-hop ones. */
function copied(headers: Headers): Headers {
  const copy = new Headers(headers)
  for (const name of HOP_BY_HOP) copy.delete(name)
  return copy
}

function send(url: URL, headers: Headers): Promise<Response> {
  return fetch(url, { headers, redirect: 'manual' })
}

/** Every header of `source` named in `names` replaces the request's own; one the answer lacks is removed. */
function copyAnswerHeaders(request: Headers, source: Headers, names: string[]): Headers {
  const result = new Headers(request)
  for (const name of names) {
    result.delete(name)
    const value = source.get(name)
    if (value !== null) result.set(name, value)
  }
  return result
}

/**
 * Traefik, configured by the `traefik` snippet: `/.ofage/` routed to ofage with the visitor's Host and
 * X-Forwarded-* of its own, the rest through `forwardAuth`. The auth request is a GET to `address` (Host the
 * auth server's) with the visitor's headers and X-Forwarded-Method, -Proto, -Host, -Uri and -For set by
 * Traefik (`trustForwardHeader` off); a 2xx forwards the request with `authResponseHeaders` copied, anything
 * else goes back to the visitor as it came, its Location resolved against `address` (Go's
 * `Response.Location`, as Traefik does unless `preserveLocationHeader` is set).
 */
function traefik(): Proxy {
  const config = Bun.YAML.parse(gateSnippet('traefik', shopClient)) as {
    http: {
      routers: Record<string, { rule: string; service: string; middlewares?: string[] }>
      middlewares: Record<string, { forwardAuth?: { address: string; authResponseHeaders: string[] }; headers?: { customRequestHeaders: Record<string, string> } }>
      services: Record<string, { loadBalancer: { servers: { url: string }[] } }>
    }
  }
  const { routers, middlewares, services } = config.http
  const ofageRouter = Object.values(routers).find((router) => router.rule.includes('PathPrefix(`/.ofage/`)'))!
  const gatedRouter = Object.values(routers).find((router) => router.middlewares?.some((name) => middlewares[name]?.forwardAuth))!
  // The `/.ofage/` router's headers middleware names the client, replacing what a visitor sent.
  const ofageHeaders = (ofageRouter.middlewares ?? []).map((name) => middlewares[name]!.headers!.customRequestHeaders)
  const { address, authResponseHeaders } = middlewares[gatedRouter.middlewares![0]!]!.forwardAuth!
  const authAddress = toOfage(address)
  const ofageService = toOfage(services[ofageRouter.service]!.loadBalancer.servers[0]!.url)
  const forwarded = (visit: Visit) => ({ 'x-forwarded-proto': 'https', 'x-forwarded-host': visit.url.host, 'x-forwarded-for': '203.0.113.7' })
  return {
    async visit(visit) {
      if (visit.url.pathname.startsWith('/.ofage/')) {
        const headers = copied(visit.headers)
        for (const [name, value] of Object.entries(forwarded(visit))) headers.set(name, value)
        for (const [name, value] of ofageHeaders.flatMap(Object.entries)) headers.set(name, value)
        headers.set('host', visit.url.host)
        return { answered: await send(new URL(`${visit.url.pathname}${visit.url.search}`, ofageService), headers) }
      }
      const headers = copied(visit.headers)
      for (const [name, value] of Object.entries({ ...forwarded(visit), 'x-forwarded-method': visit.method, 'x-forwarded-uri': `${visit.url.pathname}${visit.url.search}` })) headers.set(name, value)
      headers.delete('host')
      const answer = await send(authAddress, headers)
      if (answer.status >= 200 && answer.status < 300) return { forwarded: copyAnswerHeaders(visit.headers, answer.headers, authResponseHeaders) }
      const location = answer.headers.get('location')
      const headersBack = new Headers(answer.headers)
      if (location !== null) headersBack.set('location', new URL(location, authAddress).href)
      return { answered: new Response(await answer.arrayBuffer(), { status: answer.status, headers: headersBack }) }
    },
  }
}

/**
 * Caddy 2.6, configured by the `caddy-site` snippet: `/.ofage/*` to ofage (the visitor's Host kept,
 * X-Forwarded-For, -Proto and -Host its own), the rest through `forward_auth`: a GET of `uri` with the same
 * headers and X-Forwarded-Method and -Uri; a 2xx goes on with `copy_headers` copied, anything else goes back
 * to the visitor untouched.
 */
function caddy(): Proxy {
  const snippet = gateSnippet('caddy-site', shopClient)
  const uri = /^\s*uri (\S+)$/m.exec(snippet)![1]!
  // `header_up` in the `/.ofage/*` block: set on what goes to ofage, replacing what a visitor sent.
  const ofageBlock = /handle \/\.ofage\/\* \{([\s\S]*?)\n\t\}/.exec(snippet)![1]!
  const headerUp = [...ofageBlock.matchAll(/header_up ([\w-]+) (\S+)/g)].map((m) => [m[1]!, m[2]!] as const)
  expect(headerUp.length).toBeGreaterThan(0)
  const copyHeaders = /^\s*copy_headers (.+)$/m.exec(snippet)![1]!.trim().split(/\s+/)
  const upstream = toOfage(`http://${/forward_auth (\S+) \{/.exec(snippet)![1]!}`)
  return {
    async visit(visit) {
      const headers = copied(visit.headers)
      for (const [name, value] of Object.entries({ host: visit.url.host, 'x-forwarded-proto': 'https', 'x-forwarded-host': visit.url.host, 'x-forwarded-for': '203.0.113.7' })) headers.set(name, value)
      if (visit.url.pathname.startsWith('/.ofage/')) {
        for (const [name, value] of headerUp) headers.set(name, value)
        return { answered: await send(new URL(`${visit.url.pathname}${visit.url.search}`, upstream), headers) }
      }
      headers.set('x-forwarded-method', visit.method)
      headers.set('x-forwarded-uri', `${visit.url.pathname}${visit.url.search}`)
      const answer = await send(new URL(uri, upstream), headers)
      return answer.status >= 200 && answer.status < 300 ? { forwarded: copyAnswerHeaders(visit.headers, answer.headers, copyHeaders) } : { answered: answer }
    },
  }
}

/**
 * nginx, configured by the `nginx-site` snippet: `auth_request` as a GET subrequest to the `/.ofage/auth`
 * location's `proxy_pass` (Host the proxy_pass address, X-Forwarded-Host `$host`), the visitor's headers
 * kept; 2xx goes on with the `auth_request_set` headers, 401 becomes an internal GET of `/.ofage/start`
 * with X-Original-URI, 403 stays 403, anything else a 500 shown as `/.ofage/unavailable`.
 */
function nginx(): Proxy {
  const snippet = gateSnippet('nginx-site', shopClient)
  const authLocation = /location = \/\.ofage\/auth \{([^}]*)\}/.exec(snippet)![1]!
  const ofageLocation = /location \/\.ofage\/ \{([^}]*)\}/.exec(snippet)![1]!
  const authPass = /proxy_pass (\S+);/.exec(authLocation)![1]!
  const gated = /location \/ \{([^}]*)\}/.exec(snippet)![1]!
  const variables = new Map([...gated.matchAll(/auth_request_set \$(\w+) \$upstream_http_(\w+);/g)].map((m) => [m[1]!, m[2]!.replaceAll('_', '-')]))
  const setHeaders = [...gated.matchAll(/proxy_set_header ([\w-]+) \$(\w+);/g)].map((m) => ({ name: m[1]!, from: variables.get(m[2]!)! }))
  expect(gated).toContain('error_page 401 = /.ofage/start;')
  expect(gated).toContain('error_page 500 = /.ofage/unavailable;')
  const port = /listen (\d+) ssl;/.exec(snippet)![1]!
  const authUrl = toOfage(authPass)
  /** A location's `proxy_set_header` lines, nginx's variables read as they are for this visit; each replaces the visitor's header. */
  const setBy = (location: string, visit: Visit, headers: Headers, requestUri: string) => {
    const values: Record<string, string> = { host: visit.url.hostname, server_port: port, scheme: 'https', request_uri: requestUri, proxy_add_x_forwarded_for: '203.0.113.7' }
    for (const [, name, value] of location.matchAll(/proxy_set_header ([\w-]+) (\S+);/g)) {
      headers.set(name!, value!.replace(/\$(\w+)/g, (_, variable: string) => values[variable] ?? ''))
    }
  }
  const toOfageLocation = (visit: Visit, path: string, original: string) => {
    const headers = copied(visit.headers)
    headers.set('host', authUrl.host)
    setBy(ofageLocation, visit, headers, original)
    return send(new URL(path, authUrl), headers)
  }
  return {
    async visit(visit) {
      const requestUri = `${visit.url.pathname}${visit.url.search}`
      if (visit.url.pathname.startsWith('/.ofage/')) return { answered: await toOfageLocation(visit, requestUri, requestUri) }
      const headers = copied(visit.headers)
      headers.set('host', authUrl.host)
      setBy(authLocation, visit, headers, requestUri)
      headers.delete('content-length')
      const answer = await send(authUrl, headers)
      await answer.body?.cancel()
      if (answer.status >= 200 && answer.status < 300) {
        const onward = new Headers(visit.headers)
        for (const { name, from } of setHeaders) onward.set(name, answer.headers.get(from) ?? '')
        return { forwarded: onward }
      }
      // error_page keeps no query of its own: the start's `rd` comes from X-Original-URI.
      if (answer.status === 401) return { answered: await toOfageLocation(visit, '/.ofage/start', requestUri) }
      if (answer.status === 403) return { answered: new Response('403 Forbidden', { status: 403 }) }
      return { answered: await toOfageLocation(visit, '/.ofage/unavailable', requestUri) }
    },
  }
}

/** A visitor's browser on the gated host: its cookies there, requests through the proxy, redirects followed. */
function visitor(proxy: Proxy) {
  const jar = new Map<string, string>()
  async function go(url: URL, init: { method?: string; headers?: Record<string, string> } = {}): Promise<Outcome> {
    const headers = new Headers(init.headers)
    if (jar.size) headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '))
    headers.set('host', url.host)
    const outcome = await proxy.visit({ method: init.method ?? 'GET', url, headers })
    if ('answered' in outcome) {
      for (const line of outcome.answered.headers.getSetCookie()) {
        const [pair = ''] = line.split(';')
        const name = pair.slice(0, pair.indexOf('='))
        if (/max-age=0\b/i.test(line)) jar.delete(name)
        else jar.set(name, pair.slice(name.length + 1))
      }
    }
    return outcome
  }
  return { jar, go }
}

/** The hosted page at `url`: the sandbox check passed at 30; returns where the page sends the visitor back. */
async function passCheckAt(url: URL): Promise<URL> {
  expect(url.origin).toBe(running.baseUrl)
  const browser = testBrowser({ baseUrl: running.baseUrl })
  const page = await readPage(await browser.request(`${url.pathname}${url.search}`))
  const done = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
  expect(done.status).toBe(303)
  return new URL(done.headers.get('location')!)
}

function answered(outcome: Outcome): Response {
  if (!('answered' in outcome)) throw new Error('the proxy forwarded the request to the site')
  return outcome.answered
}

for (const [name, make] of Object.entries({ Traefik: traefik, Caddy: caddy, nginx })) {
  describe(`${name}'s forward authentication, as docs/gate.md configures it`, () => {
    // Made in the tests: the snippets name the server's address, known once it listens.
    let made: Proxy | undefined
    const proxy = { name, visit: (visit: Visit) => (made ??= make()).visit(visit) }
    test('unverified → the gated host\'s start → the hosted page → callback → the page asked for, with the gate\'s headers and not the visitor\'s', async () => {
      const { go, jar } = visitor(proxy)
      const wanted = new URL(`${SHOP}/account/orders?tab=2&q=a%20b`)
      const forged = { 'x-age-over': '99', 'x-verification-id': 'forged' }
      let outcome = await go(wanted, { headers: forged })
      // Caddy and Traefik send the visitor to the start; nginx serves it in place of the page.
      if (answered(outcome).status === 302) {
        // As a browser reads it: relative to the page it asked for.
        const start = new URL(answered(outcome).headers.get('location')!, wanted)
        expect(start.origin).toBe(SHOP)
        expect(start.pathname).toBe('/.ofage/start')
        expect(start.searchParams.get('rd')).toBe('/account/orders?tab=2&q=a%20b')
        outcome = await go(start)
      }
      expect(answered(outcome).status).toBe(303)
      expect([...jar.keys()]).toEqual(['__Host-ofage_gate_flow'])
      const back = await passCheckAt(new URL(answered(outcome).headers.get('location')!))
      expect(`${back.origin}${back.pathname}`).toBe(`${SHOP}/.ofage/callback`)
      const callback = answered(await go(back))
      expect(callback.status).toBe(303)
      expect(callback.headers.get('location')).toBe('/account/orders?tab=2&q=a%20b')
      expect([...jar.keys()]).toEqual(['__Host-ofage_gate'])

      const through = await go(new URL(callback.headers.get('location')!, SHOP), { headers: forged })
      if (!('forwarded' in through)) throw new Error(`not forwarded: ${answered(through).status}`)
      expect(through.forwarded.get('x-age-over')).toBe('18')
      expect(through.forwarded.get('x-verification-id')).toMatch(/^[0-9a-f-]{36}$/)
    })

    test('a form post without a gate cookie is not forwarded, and not sent to the check as a redirect to replay', async () => {
      const outcome = await visitor(proxy).go(new URL(`${SHOP}/cart`), { method: 'POST' })
      const response = answered(outcome)
      // nginx shows the start in its place (an internal GET: the visitor goes to the check without the form);
      // Caddy and Traefik pass the 401 on.
      if (proxy.name === 'nginx') {
        expect(response.status).toBe(303)
        expect(response.headers.get('location')!.startsWith(`${running.baseUrl}/?`)).toBe(true)
      } else {
        expect(response.status).toBe(401)
        expect(response.headers.get('location')).toBeNull()
      }
    })

    test('a gate that cannot read its hosts answers 503 through the proxy, never a pass, with or without a cookie', async () => {
      const gate = running.services.deps.gate
      const find = gate.find
      gate.find = () => Promise.reject(new GateUnavailableError(new Error('the database is away')))
      try {
        for (const cookie of [undefined, '__Host-ofage_gate=anything']) {
          const response = answered(await visitor(proxy).go(new URL(`${SHOP}/account`), { headers: cookie ? { cookie } : {} }))
          expect(response.status).toBe(503)
          expect(response.headers.get('retry-after')).toBe('5')
          // nginx turns the 503 into a 500 and shows the gate's page for it; Caddy and Traefik pass it on.
          expect(await response.text()).toContain(proxy.name === 'nginx' ? 'temporarily_unavailable' : 'not available right now')
        }
      } finally {
        gate.find = find
      }
    })

    test('another client listing the host in another scheme or port: its pass is never forwarded, and no Host with a port is a way in (issue 30)', async () => {
      const now = Math.floor(Date.now() / 1000)
      for (const origin of ['http://shop.example', 'https://shop.example:8443', SHOP]) {
        const value = sealGatePass(running.services.deps.keys.gateKey, { clientId: rivalClient, origin, ageOver: 30, verificationId: crypto.randomUUID(), issuedAt: now, expiresAt: now + 3600 })
        for (const url of [`${SHOP}/account`, 'https://shop.example:80/account', 'https://shop.example:8443/account', 'https://shop.example:443/account']) {
          for (const cookie of [`__Host-ofage_gate=${value}`, `ofage_gate=${value}`]) {
            const outcome = await visitor(proxy).go(new URL(url), { headers: { cookie } })
            expect({ origin, url, cookie: cookie.split('=')[0], forwarded: 'forwarded' in outcome }).toMatchObject({ forwarded: false })
          }
        }
      }
    })

    test('a host no client gates is refused, and the visitor\'s own X-Forwarded-Host does not choose the host', async () => {
      const unknown = answered(await visitor(proxy).go(new URL('https://unknown.example/')))
      expect(unknown.status).toBe(403)
      const named = answered(await visitor(proxy).go(new URL('https://unknown.example/'), { headers: { 'x-forwarded-host': 'shop.example' } }))
      expect(named.status).toBe(403)
    })
  })
}
