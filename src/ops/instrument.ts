import { serverError } from '../errors.ts'
import { withDeadline } from '../lib/deadline.ts'
import type { Logger } from '../lib/log.ts'
import type { Metrics } from './metrics.ts'

/** Request ids we accept from a proxy: short and plain, so they are safe to log and echo. */
const acceptableId = /^[A-Za-z0-9._-]{1,64}$/

/**
 * Route patterns for logs and metrics. A path can carry a secret (a token in /api/verify/token/…, a
 * session id in /s/…), so only the pattern is ever recorded, and never a query string.
 */
const patterns: [RegExp, string][] = [
  [/^\/api\/verify\/token\//, '/api/verify/token/:access_token'],
  [/^\/s\/[^/]+$/, '/s/:id'],
  [/^\/s\/[^/]+\/methods\/[^/]+$/, '/s/:id/methods/:method'],
  [/^\/s\/[^/]+\/(continue|forget)$/, '/s/:id/$1'],
  [/^\/assets\/[^/]+$/, '/assets/:file'],
  [/^\/api\/oid4vp\/requests\/[^/]+$/, '/api/oid4vp/requests/:state'],
  // The `av://` request's response URI carries its request's state.
  [/^\/api\/oid4vp\/av\/[^/]+$/, '/api/oid4vp/av/:state'],
  // Deeper page paths: what follows the session id names a route, never a value.
  [/^\/s\/[^/]+\/([a-z-]+(\/[a-z-]+){0,3})$/, '/s/:id/$1'],
  // A dashboard user's own verification, by its transaction id: the id stays out of logs and metrics.
  [/^\/dashboard\/audit\/[^/]+$/, '/dashboard/audit/:transaction_id'],
]
const fixed = new Set([
  '/',
  '/favicon.ico',
  '/.well-known/oauth-authorization-server',
  '/api/.well-known/oauth-authorization-server',
  '/api/oauth/par',
  '/api/oauth/token',
  '/api/oauth/validate',
  '/api/oauth/usage',
  '/api/verify/public-key',
  '/api/.well-known/jwks.json',
  '/api/openapi.json',
  '/demo',
  '/demo/start',
  '/demo/callback',
  '/dashboard',
  '/dashboard/sign-in',
  '/dashboard/sign-out',
  '/dashboard/sign-out-everywhere',
  '/dashboard/set-password',
  '/dashboard/audit',
  '/dashboard/audit.csv',
  '/dashboard/usage',
  '/dashboard/settings',
  '/dashboard/settings/redirect-uris/add',
  '/dashboard/settings/redirect-uris/remove',
  '/dashboard/settings/site',
  '/dashboard/settings/rotate-secret',
  '/dashboard/settings/methods',
  '/dashboard/settings/gate',
  '/dashboard/settings/gate-hosts/add',
  '/dashboard/settings/gate-hosts/remove',
  '/gate/auth',
  '/.ofage/start',
  '/.ofage/callback',
  '/.ofage/forget',
  '/.ofage/unavailable',
  '/.ofage/ofage.css',
  '/dashboard/passkeys',
  '/dashboard/passkeys/options',
  '/dashboard/passkeys/delete',
  '/dashboard/sign-in/passkey',
  '/dashboard/sign-in/passkey/options',
  '/healthz',
  '/readyz',
  '/metrics',
])

/**
 * Routes whose answers below 400 get no log line of their own (metrics still count them): `/gate/auth` is
 * asked before every request of a gated site, whose proxy logs each request already; a line per pass was
 * the largest cost of the gate's check (a fifth of its CPU, `bun run bench --profile`). `/favicon.ico` is
 * asked by the browser after every page, which has its own line. Their refusals and failures are logged as
 * every route's are.
 */
const quietWhenAnswered = new Set(['/gate/auth', '/favicon.ico'])

/** No fixed path is longer: a longer one (a token's, about 900 characters) is not hashed to look it up. */
const longestFixed = Math.max(...[...fixed].map((path) => path.length))

export function routeLabel(pathname: string): string {
  if (pathname.length <= longestFixed && fixed.has(pathname)) return pathname
  for (const [pattern, label] of patterns) {
    if (pattern.test(pathname)) return label.includes('$') ? pathname.replace(pattern, label) : label
  }
  return 'unmatched'
}

/**
 * API calls do a few indexed queries; one still unanswered after this long is waiting on a database that
 * stopped answering without closing the connection (a half-open link). The caller gets the spec's 500
 * rather than a hang; the query itself finishes or fails in the background.
 */
export const API_DEADLINE_MS = 10_000

/**
 * The path of a request's URL without parsing it again: a Request's `url` is already serialised by the URL
 * parser (dot segments resolved, escapes made), so the path runs from the first `/` after the authority to
 * the query or the fragment (one built in process may keep it). What `new URL(url).pathname` gives, for a
 * third of its cost on every request.
 */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start < 0) return '/'
  const query = url.indexOf('?', start)
  const fragment = url.indexOf('#', start)
  const end = query < 0 ? fragment : fragment < 0 ? query : Math.min(query, fragment)
  return end < 0 ? url.slice(start) : url.slice(start, end)
}

/**
 * Each request's id, for the app's own log lines, kept on the request under a symbol of this module
 * (requests are not copied to carry it in a header). A WeakMap entry per request was 7% of a remembered
 * token's validation in process (`bun --cpu-prof-md`); a property costs next to nothing.
 */
const REQUEST_ID = Symbol('ofage.requestId')
type WithId = Request & { [REQUEST_ID]?: string }

export function requestIdOf(request: Request): string | undefined {
  return (request as WithId)[REQUEST_ID]
}

/**
 * Wraps the app's handler: gives every request an id (a proxy's X-Request-Id if it is plain, else a new
 * one), returns it in X-Request-Id with `headers` (those every answer carries), bounds API calls by
 * `deadlineMs` (API_DEADLINE_MS), and writes one JSON log line and the HTTP metrics per request.
 */
export function instrument(
  handle: (request: Request) => Promise<Response>,
  log: Logger,
  metrics: Metrics,
  { deadlineMs = API_DEADLINE_MS, headers = {} }: { deadlineMs?: number; headers?: Record<string, string> } = {},
) {
  const fixed = Object.entries(headers)
  return async (request: Request): Promise<Response> => {
    const started = performance.now()
    const offered = request.headers.get('x-request-id')
    const requestId = offered && acceptableId.test(offered) ? offered : crypto.randomUUID()
    ;(request as WithId)[REQUEST_ID] = requestId
    const pathname = pathOf(request.url)
    const route = routeLabel(pathname)
    const response = pathname.startsWith('/api/')
      ? await withDeadline(handle(request), deadlineMs, () => {
          log.error('request_deadline', { request_id: requestId, route, ms: deadlineMs })
          return Response.json(serverError.toBody(), { status: 500, headers: { 'cache-control': 'no-store' } })
        })
      : await handle(request)
    const seconds = (performance.now() - started) / 1000
    metrics.http.record(request.method, route, response.status, seconds)
    if (response.status >= 400 || !quietWhenAnswered.has(route)) {
      log.info('request', { request_id: requestId, method: request.method, route, status: response.status, ms: Math.round(seconds * 1000) })
    }
    return withHeaders(response, requestId, fixed)
  }
}

/** The response with its request id and the fixed headers; copied only when its headers cannot change (Response.redirect()). */
function withHeaders(response: Response, requestId: string, fixed: [string, string][]): Response {
  try {
    return setHeaders(response, requestId, fixed)
  } catch {
    return setHeaders(new Response(response.body, response), requestId, fixed)
  }
}

function setHeaders(response: Response, requestId: string, fixed: [string, string][]): Response {
  response.headers.set('x-request-id', requestId)
  for (const [name, value] of fixed) response.headers.set(name, value)
  return response
}
