import { openapi } from '@elysiajs/openapi'
import './lib/schema-formats.ts'
import { Elysia, ValidationError } from 'elysia'
import packageJson from '../package.json' with { type: 'json' }
import { brandingRoutes } from './branding/routes.ts'
import { DashboardErrorPage } from './dashboard/error-page.tsx'
import { dashboardRoutes } from './dashboard/routes.ts'
import type { AppDeps } from './deps.ts'
import { OAuthError, serverError } from './errors.ts'
import { demoRoutes } from './demo/routes.tsx'
import { gateAuthRoutes } from './gate/auth-routes.ts'
import { gateFlowRoutes } from './gate/flow-routes.tsx'
import { keyRoutes } from './keys/routes.ts'
import { describeError, type Logger } from './lib/log.ts'
import { checkRequestUrl } from './lib/strict-request.ts'
import { authorizationRoutes } from './oauth/authorization-routes.ts'
import { oauthRoutes } from './oauth/routes.ts'
import { instrument, requestIdOf } from './ops/instrument.ts'
import type { Metrics } from './ops/metrics.ts'
import { opsRoutes } from './ops/routes.ts'
import { ErrorPage } from './pages/error-page.tsx'
import { htmlDocument, pageHeaders, transportSecurityHeader } from './web/headers.ts'
import { requestDashboardLanguage, requestLanguage } from './web/language.ts'
import { usageRoutes } from './usage/routes.ts'
import { RateLimitedError } from './ratelimit/limits.ts'
import { pageRoutes } from './verification/routes.tsx'

/**
 * The root app: OpenAPI document, the one error mapping, then the feature routes. Errors are mapped
 * before the routes are added because Elysia hooks apply to routes registered after them.
 */
export function createApp(deps: AppDeps) {
  // The demo calls the API through this very app, so it needs the handler before the app exists.
  let handle = (_request: Request): Promise<Response> => Promise.reject(new Error('app not built'))
  const app = new Elysia({ name: 'ofage' })
    .use(
      openapi({
        path: '/api/openapi',
        specPath: '/api/openapi.json',
        provider: null,
        // The key set's path ends in .json; without this it would be taken for a static file and left out.
        exclude: { staticFile: false },
        documentation: {
          info: { title: 'ofage API', version: packageJson.version, description: 'Age verification: code exchange, token validation, keys, usage.' },
          servers: [{ url: deps.config.publicUrl }],
          components: {
            securitySchemes: {
              clientBasic: { type: 'http', scheme: 'basic', description: 'client_id:client_secret (SPEC.md §5)' },
              metricsBearer: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN' },
            },
          },
        },
      }),
    )
    .onError(({ code, error, request }) => errorResponse(code, error, request, deps.log, deps.metrics))
    .onRequest(({ request }) => checkRequestUrl(request))
    .use(opsRoutes(deps, deps.metrics))
    .use(keyRoutes(deps))
    .use(oauthRoutes(deps))
    .use(authorizationRoutes(deps))
    .use(usageRoutes(deps))
    .use(pageRoutes(deps))
    .use(brandingRoutes(deps))
    .use(gateAuthRoutes(deps))
    .use(gateFlowRoutes(deps))
    .use(dashboardRoutes(deps))
    .use(deps.config.demo ? demoRoutes(deps, (request) => handle(request)) : new Elysia({ name: 'no-demo' }))
  handle = (request) => app.handle(request)
  return app
}

export type App = ReturnType<typeof createApp>

/**
 * The server's request handler: the app, with a request id, a log line and metrics per request, and HSTS on
 * every answer when the service is on https (set on the answer, not in the app: a header in Elysia's `set`
 * makes it copy every Response a route returns, body and all).
 */
export function createHandler(deps: AppDeps, app: App = createApp(deps)): (request: Request) => Promise<Response> {
  const hsts = transportSecurityHeader(deps.config)
  return instrument((request) => app.handle(request), deps.log, deps.metrics, { headers: hsts ? { 'strict-transport-security': hsts } : {} })
}

/**
 * Every failure becomes the spec's JSON body with its status under /api, and an error page with the same
 * code and status elsewhere; a 500 never says why (the log does).
 */
function errorResponse(code: string | number, error: unknown, request: Request, log: Logger, metrics: Metrics): Response {
  const mapped = mapError(code, error)
  if (mapped.code === 'server_error') log.error('request_failed', { code, request_id: requestIdOf(request), ...describeError(error) })
  if (mapped.code === 'expired_code') metrics.codes.inc({ event: 'expired' })
  if (mapped.code === 'code_already_used') metrics.codes.inc({ event: 'replayed' })
  if (mapped.code === 'payment_required') metrics.planLimitRefusals.inc()
  // RFC 6585 §4: a 429 may say when to come back.
  const retryAfter: Record<string, string> = error instanceof RateLimitedError ? { 'retry-after': String(error.retryAfterSeconds) } : {}
  if (error instanceof RateLimitedError) metrics.rateLimited.inc({ route: new URL(request.url).pathname.startsWith('/api/') ? 'api' : 'page' })
  const { pathname } = new URL(request.url)
  if (!pathname.startsWith('/api/')) {
    const explicit = new URL(request.url).searchParams.get('lang')
    // The dashboard's errors speak to a signed-in integrator, the hosted page's to a visitor a site sent.
    const page = htmlDocument(
      (/^\/dashboard(\/|$)/.test(pathname)
        ? DashboardErrorPage({ lang: requestDashboardLanguage(request, explicit), code: mapped.code })
        : ErrorPage({ lang: requestLanguage(request, explicit), code: mapped.code, hint: mapped.hint })) as string,
    )
    return new Response(page, { status: mapped.status, headers: { ...pageHeaders(), ...retryAfter } })
  }
  const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': 'no-store', ...retryAfter }
  // RFC 6749 §5.2: a 401 for client authentication names the scheme the client should use.
  if (mapped.status === 401) headers['www-authenticate'] = 'Basic realm="ofage", charset="UTF-8"'
  return new Response(JSON.stringify(mapped.toBody()), { status: mapped.status, headers })
}

function mapError(code: string | number, error: unknown): OAuthError {
  if (error instanceof OAuthError) return error
  if (code === 'NOT_FOUND') return new OAuthError('not_found', 'No such endpoint')
  if (code === 'PARSE') {
    // Elysia wraps what a parse hook throws: our strict reader's own refusal (a duplicate, a bound) says more.
    const cause = (error as { cause?: unknown }).cause
    return cause instanceof OAuthError ? cause : new OAuthError('invalid_request', 'The request body could not be parsed')
  }
  // A malformed percent-escape in the path or query (`/s/%`) fails when the framework decodes it.
  if (error instanceof URIError) return new OAuthError('invalid_request', 'The request URL is not correctly encoded')
  // A response that fails its own schema is our bug, not the caller's: that stays a 500.
  if (error instanceof ValidationError && error.type !== 'response') {
    return new OAuthError('invalid_request', describeValidation(error))
  }
  return serverError
}

function describeValidation(error: ValidationError): string {
  const first = error.valueError
  const where = first?.path ? `${error.type} ${first.path.replace(/^\//, '')}` : error.type
  const allowed = (first?.schema as { enum?: unknown[] } | undefined)?.enum
  const problem = allowed ? `must be one of ${allowed.join(', ')}` : (first?.message ?? 'does not match the schema')
  return `Invalid ${where}: ${problem}`
}
