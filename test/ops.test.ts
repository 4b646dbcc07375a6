import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { hostname } from 'node:os'
import { instrument, routeLabel, pathOf } from '../src/ops/instrument.ts'
import { createMetrics } from '../src/ops/metrics.ts'
import { registerHttpMetrics } from '../src/ops/http-metrics.ts'
import { createTestContext, json, REDIRECT_URI, type TestContext } from './helpers.ts'

let ctx: TestContext
const lines: Record<string, unknown>[] = []

beforeAll(async () => {
  ctx = await createTestContext({
    env: { METRICS_TOKEN: 'scrape-me' },
    log: { info: (event, fields) => lines.push({ event, ...fields }), error: (event, fields) => lines.push({ event, ...fields }) },
  })
})
afterAll(() => ctx.close())

describe('health and readiness', () => {
  test('/healthz answers ok', async () => {
    expect(await json(await ctx.request('/healthz'))).toEqual({ status: 'ok' })
  })

  test('/readyz is 200 with every check true', async () => {
    const response = await ctx.request('/readyz')
    expect(response.status).toBe(200)
    expect(await json(response)).toEqual({ status: 'ready', checks: { database: true, signing_key: true } })
  })

  test('/readyz is 503 when the database is gone, and says which check failed', async () => {
    const doomed = await createTestContext()
    await doomed.close()
    const started = performance.now()
    const response = await doomed.request('/readyz')
    expect(performance.now() - started).toBeLessThan(3000)
    expect(response.status).toBe(503)
    expect(await json(response)).toEqual({ status: 'not_ready', checks: { database: false, signing_key: true } })
  })
})

describe('request ids and request logs', () => {
  test('every response carries X-Request-Id; a plain id from a proxy is kept, anything else replaced', async () => {
    const fresh = await ctx.request('/healthz')
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const kept = await ctx.request('/healthz', { headers: { 'x-request-id': 'proxy-123.abc' } })
    expect(kept.headers.get('x-request-id')).toBe('proxy-123.abc')
    const odd = await ctx.request('/healthz', { headers: { 'x-request-id': 'a b<script>' } })
    expect(odd.headers.get('x-request-id')).not.toContain('<')
  })

  test("/favicon.ico, which browsers ask after every page, answers 204 with a day's cache and logs no line (it was a 404 and a line per page view)", async () => {
    lines.length = 0
    const response = await ctx.request('/favicon.ico')
    expect(response.status).toBe(204)
    expect(response.headers.get('cache-control')).toBe('public, max-age=86400')
    expect(await response.text()).toBe('')
    expect(lines).toEqual([])
    // Still counted, under its own route.
    const metrics = await (await ctx.request('/metrics', { headers: { authorization: 'Bearer scrape-me' } })).text()
    expect(metrics).toMatch(/ofage_http_requests_total\{[^}]*route="\/favicon\.ico"[^}]*status="204"[^}]*\} 1/)
  })

  test('one log line per request with the route pattern, never the token, code or query', async () => {
    const client = await ctx.createClient()
    const { access_token } = await ctx.tokenFor(client)
    lines.length = 0
    const response = await ctx.request(`/api/verify/token/${access_token}?x=secret-query`, { headers: { 'x-request-id': 'req-1' } })
    expect(response.status).toBe(200)
    expect(lines).toEqual([{ event: 'request', request_id: 'req-1', method: 'GET', route: '/api/verify/token/:access_token', status: 200, ms: expect.any(Number) }])
    expect(JSON.stringify(lines)).not.toContain(access_token.slice(-20))
    expect(JSON.stringify(lines)).not.toContain('secret-query')
  })

  test('a failure is logged with the id its response carries; redirects and errors carry one too', async () => {
    const logged: Record<string, unknown>[] = []
    const doomed = await createTestContext({ log: { info() {}, error: (event, fields) => logged.push({ event, ...fields }) } })
    await doomed.close()
    const failed = await doomed.request('/api/oauth/usage', { headers: { authorization: 'Basic YTpi', 'x-request-id': 'req-failed' } })
    expect(failed.status).toBe(500)
    expect(failed.headers.get('x-request-id')).toBe('req-failed')
    expect(logged.find((line) => line.event === 'request_failed')).toMatchObject({ request_id: 'req-failed' })

    const unknown = await ctx.request('/api/no-such-route')
    expect(unknown.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const redirect = Response.redirect('https://shop.example/', 303)
    const handle = instrument(async () => redirect, { info() {}, error() {} }, createMetrics())
    const answered = await handle(new Request('http://x.test/demo/start', { headers: { 'x-request-id': 'req-redirect' } }))
    expect(answered.status).toBe(303)
    expect(answered.headers.get('location')).toBe('https://shop.example/')
    expect(answered.headers.get('x-request-id')).toBe('req-redirect')
  })
})

describe('route labels', () => {
  test('every route has its pattern; ids, states and tokens never reach a label', () => {
    expect(routeLabel('/api/oauth/par')).toBe('/api/oauth/par')
    expect(routeLabel('/.well-known/oauth-authorization-server')).toBe('/.well-known/oauth-authorization-server')
    expect(routeLabel('/api/oid4vp/requests/SeCrEtState123')).toBe('/api/oid4vp/requests/:state')
    expect(routeLabel('/api/oid4vp/av/SeCrEtState123')).toBe('/api/oid4vp/av/:state')
    expect(routeLabel('/s/abcDEF123/methods/credential/start')).toBe('/s/:id/methods/credential/start')
    expect(routeLabel('/s/abcDEF123/methods/face')).toBe('/s/:id/methods/:method')
    expect(routeLabel('/s/abcDEF123/x/Value42')).toBe('unmatched')
    expect(routeLabel('/api/verify/token/eyJ.x.y')).toBe('/api/verify/token/:access_token')
    // A real token's path (about 900 characters) is not looked up among the fixed paths, the longest of which still are.
    expect(routeLabel(`/api/verify/token/eyJ${'a'.repeat(900)}.x.y`)).toBe('/api/verify/token/:access_token')
    expect(routeLabel('/api/.well-known/oauth-authorization-server')).toBe('/api/.well-known/oauth-authorization-server')
    expect(routeLabel('/dashboard/settings/redirect-uris/remove')).toBe('/dashboard/settings/redirect-uris/remove')
    expect(routeLabel(`/dashboard/${'x'.repeat(900)}`)).toBe('unmatched')
    expect(routeLabel('/s/abcDEF123/continue')).toBe('/s/:id/continue')
  })

  test("a request's path is read as the URL parser reads it, from every URL a Request can carry", () => {
    const urls = [
      'http://api.ofage.test/a?b#c',
      'http://api.ofage.test/a#b?c',
      'http://127.0.0.1:3000/api/oauth/token',
      'http://api.ofage.test/',
      'http://api.ofage.test',
      'https://user:pw@api.ofage.test:8443/s/abc/methods/face?lang=de&x=/y',
      'http://api.ofage.test/a/../api/verify/token/x?y=1#frag',
      'http://api.ofage.test/%2e%2e/api//jwks?',
      'http://[::1]:3000/readyz',
      'http://api.ofage.test/healthz#only-a-fragment',
      'http://api.ofage.test?only=query',
      'http://api.ofage.test/dashboard/audit/ü ö',
    ]
    for (const url of urls) {
      const request = new Request(url)
      expect({ url, path: pathOf(request.url) }).toEqual({ url, path: new URL(request.url).pathname })
    }
  })
})

describe('GET /metrics', () => {
  test('is off unless a token is set or the operator opens it (METRICS_PUBLIC=1)', async () => {
    const closed = await createTestContext()
    const open = await createTestContext({ env: { METRICS_PUBLIC: '1' } })
    try {
      const off = await closed.request('/metrics')
      expect(off.status).toBe(404)
      expect(off.headers.get('content-type')).toBe('text/plain; charset=utf-8')
      expect((await open.request('/metrics')).status).toBe(200)
    } finally {
      await closed.close()
      await open.close()
    }
  })

  test('needs the bearer token when METRICS_TOKEN is set', async () => {
    // A plain 401 for the scraper, not the visitor's HTML page about an unregistered site (issue 19).
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: 'Basic c2NyYXBlLW1lOg==' }] as Record<string, string>[]) {
      const refused = await ctx.request('/metrics', { headers })
      expect(refused.status).toBe(401)
      expect(refused.headers.get('content-type')).toBe('text/plain; charset=utf-8')
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="ofage metrics"')
      const text = await refused.text()
      expect(text).toBe('Unauthorized: /metrics needs the bearer token set in METRICS_TOKEN.\n')
      expect(text).not.toContain('invalid_client')
    }
    const response = await ctx.request('/metrics', { headers: { authorization: 'Bearer scrape-me' } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/plain')
  })

  test('counts requests by route and status, codes by event, and plan-limit refusals', async () => {
    const client = await ctx.createClient({ verificationLimit: 1 })
    const { code } = await ctx.issueCode({ clientId: client.id, state: 's' })
    const body = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 's' }
    await ctx.exchange(client.authorization, body)
    await ctx.exchange(client.authorization, body)
    await ctx.issueCode({ clientId: client.id }).catch(() => {})
    const refused = await ctx.request(`/?client_id=${client.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`)
    expect(refused.status).toBe(402)
    const text = await (await ctx.request('/metrics', { headers: { authorization: 'Bearer scrape-me' } })).text()
    expect(text).toMatch(/ofage_http_requests_total\{method="POST",route="\/api\/oauth\/token",status="200"[^}]*\} [1-9]/)
    expect(text).toMatch(/ofage_http_requests_total\{method="POST",route="\/api\/oauth\/token",status="400"[^}]*\} [1-9]/)
    expect(text).toMatch(/ofage_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/healthz"[,}]/)
    expect(text).toMatch(/ofage_codes_total\{event="redeemed"[^}]*\} [1-9]/)
    expect(text).toMatch(/ofage_codes_total\{event="replayed"[^}]*\} [1-9]/)
    expect(text).toMatch(/ofage_plan_limit_refusals_total\{[^}]*\} [1-9]/)
    // This process's memory, read at the scrape.
    const rss = Number(/ofage_process_memory_bytes\{kind="rss"[^}]*\} (\d+)/.exec(text)?.[1])
    expect(rss).toBeGreaterThan(10 * 2 ** 20)
    expect(text).toMatch(/ofage_process_memory_bytes\{kind="heap_used"[^}]*\} [1-9]/)
    expect(text).not.toContain(code)
  })
})

describe('the process behind each series', () => {
  test('every series names the process that counted it: a scrape of one target may be answered by any of them', async () => {
    const metrics = createMetrics({ host: 'ofage-2.internal', worker: '3' })
    metrics.http.record('GET', '/healthz', 200, 0.001)
    metrics.codes.inc({ event: 'issued' })
    const samples = (await metrics.registry.metrics()).split('\n').filter((line) => line !== '' && !line.startsWith('#'))
    expect(samples.length).toBeGreaterThan(10)
    for (const line of samples) expect(line).toMatch(/\{(.*,)?host="ofage-2\.internal",worker="3"\} /)
    // A server's own: its machine, and 0 for the first process (WORKERS starts the others with their index).
    const text = await (await ctx.request('/metrics', { headers: { authorization: 'Bearer scrape-me' } })).text()
    expect(text).toContain(`ofage_plan_limit_refusals_total{host="${hostname()}",worker="0"}`)
  })
})

describe('series that exist before their first event', () => {
  test('closed sets of events start at 0, so that the first dead letter or replayed code is an increase', async () => {
    const text = await createMetrics({ host: 'h', worker: '0' }).registry.metrics()
    const zero = (name: string, label: string, value: string) => expect(text).toContain(`${name}{${label}="${value}",host="h",worker="0"} 0\n`)
    for (const event of ['issued', 'redeemed', 'expired', 'replayed']) zero('ofage_codes_total', 'event', event)
    for (const outcome of ['delivered', 'failed', 'dead']) zero('ofage_webhook_attempts_total', 'outcome', outcome)
    for (const outcome of ['pass', 'unverified', 'refused', 'unknown_host', 'ambiguous', 'suspended', 'unavailable']) zero('ofage_gate_checks_total', 'outcome', outcome)
    for (const route of ['api', 'page']) zero('ofage_rate_limited_total', 'route', route)
    expect(text).toContain('ofage_plan_limit_refusals_total{host="h",worker="0"} 0\n')
  })
})

describe('the API deadline', () => {
  test('an API call that never answers gets the spec 500 at the deadline; a page is not cut', async () => {
    const logged: string[] = []
    const handle = instrument(
      () => new Promise<Response>(() => {}),
      { info() {}, error: (event) => logged.push(event) },
      createMetrics(),
      { deadlineMs: 50 },
    )
    const response = await handle(new Request('http://ofage.test/api/oauth/token', { method: 'POST' }))
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({ error: 'server_error', error_description: expect.any(String) })
    expect(logged).toEqual(['request_deadline'])
    const page = await Promise.race([handle(new Request('http://ofage.test/')), Bun.sleep(200).then(() => 'still waiting')])
    expect(page).toBe('still waiting')
  })
})

describe('HTTP metrics', () => {
  test("render exactly as prom-client's own counter and histogram would", async () => {
    const { Counter, Histogram, Registry } = await import('prom-client')
    const ours = new Registry()
    const http = registerHttpMetrics(ours)
    const reference = new Registry()
    const counter = new Counter({ name: 'ofage_http_requests_total', help: 'HTTP requests by method, route pattern and status', labelNames: ['method', 'route', 'status'], registers: [reference] })
    const histogram = new Histogram({
      name: 'ofage_http_request_duration_seconds',
      help: 'HTTP request latency by method and route pattern',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [reference],
    })
    const requests: [string, string, number, number][] = [
      ['GET', '/healthz', 200, 0.001],
      ['GET', '/healthz', 200, 0.005],
      ['GET', '/healthz', 503, 0.3],
      ['POST', '/api/oauth/token', 200, 0.02],
      ['POST', '/api/oauth/token', 400, 12],
      ['GET', '/api/verify/token/:access_token', 401, 0.0099],
    ]
    for (const [method, route, status, seconds] of requests) {
      http.record(method, route, status, seconds)
      counter.inc({ method, route, status: String(status) })
      histogram.observe({ method, route }, seconds)
    }
    const lines = async (registry: InstanceType<typeof Registry>) => (await registry.metrics()).split('\n').filter(Boolean).sort()
    expect(await lines(ours)).toEqual(await lines(reference))
  })

  test('label values from requests are bounded: odd methods and routes past the limit are counted together', async () => {
    const { Registry } = await import('prom-client')
    const registry = new Registry()
    const http = registerHttpMetrics(registry)
    for (let i = 0; i < 1_000; i++) http.record(i % 2 ? 'GET' : `X${i}`, `/s/:id/route-${i}`, 404, 0.001)
    const text = await registry.metrics()
    const series = text.split('\n').filter((line) => line.startsWith('ofage_http_requests_total{'))
    expect(series.length).toBeLessThanOrEqual(2 * 257)
    expect(text).toContain('method="other"')
    expect(text).toContain('route="other"')
    const total = series.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0)
    expect(total).toBe(1_000)
  })
})
