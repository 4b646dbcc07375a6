import { sql } from 'drizzle-orm'
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { constantTimeEqual, sha256Hex } from '../lib/crypto.ts'
import { withDeadline } from '../lib/deadline.ts'
import type { Metrics } from './metrics.ts'
import { security } from '../lib/openapi-security.ts'

/** How long readiness waits for the database before it says no. */
const DATABASE_PROBE_MS = 2000

const Checks = t.Object({ database: t.Boolean(), signing_key: t.Boolean(), estimator: t.Optional(t.Boolean()) })

/**
 * Operations: `/healthz` (the process answers), `/readyz` (it can serve: database reachable, the key in force held,
 * estimator loaded when the face check is on; 503 otherwise) and `/metrics` (Prometheus text), behind
 * METRICS_TOKEN when one is set, and off unless a token is set or METRICS_PUBLIC=1.
 */
export function opsRoutes(deps: AppDeps, metrics: Metrics) {
  let estimatorReady = !deps.estimator
  deps.estimator?.ready.then(
    () => (estimatorReady = true),
    () => (estimatorReady = false),
  )
  const expectedToken = deps.config.metricsToken && sha256Hex(deps.config.metricsToken)

  return new Elysia({ name: 'ops-routes' })
    .get('/healthz', () => ({ status: 'ok' as const }), {
      response: t.Object({ status: t.Literal('ok') }),
      detail: { summary: 'Liveness: the process answers', tags: ['Operations'], security: security.none },
    })
    .get(
      '/readyz',
      async ({ set }) => {
        set.headers['cache-control'] = 'no-store'
        const checks = {
          database: await probeDatabase(deps),
          signing_key: hasSigningKey(deps),
          ...(deps.estimator && { estimator: estimatorReady }),
        }
        const ready = Object.values(checks).every(Boolean)
        set.status = ready ? 200 : 503
        return { status: ready ? ('ready' as const) : ('not_ready' as const), checks }
      },
      {
        response: { 200: t.Object({ status: t.Literal('ready'), checks: Checks }), 503: t.Object({ status: t.Literal('not_ready'), checks: Checks }) },
        detail: { summary: 'Readiness: database, signing key, estimator', tags: ['Operations'], security: security.none },
      },
    )
    .get(
      '/metrics',
      async ({ headers, set }) => {
        // Closed unless the operator chose: metrics name routes, volumes and failure rates of the service.
        // Answered in plain text for a scraper, never the visitor's error page (issue 19: a wrong token got
        // "the site that sent you here is not registered… invalid_client" in HTML).
        if (!expectedToken && !deps.config.metricsPublic) {
          return plainAnswer(404, 'Metrics are off: set METRICS_TOKEN, or METRICS_PUBLIC=1 behind a private network.')
        }
        if (expectedToken) {
          const presented = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1]
          if (!presented || !constantTimeEqual(sha256Hex(presented), expectedToken)) {
            // RFC 6750 §3: the scheme the scraper should use (Prometheus: `authorization: { credentials: … }`).
            return plainAnswer(401, 'Unauthorized: /metrics needs the bearer token set in METRICS_TOKEN.', { 'www-authenticate': 'Bearer realm="ofage metrics"' })
          }
        }
        set.headers['content-type'] = metrics.registry.contentType
        return metrics.registry.metrics()
      },
      { detail: { summary: 'Prometheus metrics', tags: ['Operations'], security: security.metrics } },
    )
}

function plainAnswer(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(`${text}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers } })
}

function probeDatabase(deps: AppDeps): Promise<boolean> {
  const probe = deps.db.execute(sql`select 1`).then(
    () => true,
    () => false,
  )
  return withDeadline(probe, DATABASE_PROBE_MS, () => false)
}

/** Whether this instance signs with the deployment's key in force: one that does not is taken out of rotation. */
function hasSigningKey(deps: AppDeps): boolean {
  try {
    return deps.keys.signing.canSign
  } catch {
    return false
  }
}
