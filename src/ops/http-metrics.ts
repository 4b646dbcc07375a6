import type { Registry } from 'prom-client'

/**
 * The per-request HTTP metrics, counted in plain maps and rendered for Prometheus only when scraped.
 * prom-client's `inc`/`observe` sort and hash a label object on every call: with two per request that was
 * 9% of a JWKS request's CPU (`bun run bench --profile`). Same names, labels and buckets as before:
 * `ofage_http_requests_total{method,route,status}` and `ofage_http_request_duration_seconds{method,route}`.
 */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** Label values come from requests: methods outside this set, and routes past this many, are counted together. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
const MAX_ROUTES = 256

type RouteStats = { statuses: Map<number, number>; buckets: number[]; sum: number; count: number }

export type HttpMetrics = { record(method: string, route: string, status: number, seconds: number): void }

export function registerHttpMetrics(registry: Registry): HttpMetrics {
  const byMethod = new Map<string, Map<string, RouteStats>>()
  const each = function* () {
    for (const [method, routes] of byMethod) for (const [route, stats] of routes) yield { method, route, stats }
  }
  registry.registerMetric({
    name: 'ofage_http_requests_total',
    help: 'HTTP requests by method, route pattern and status',
    type: 'counter',
    get: async () => ({
      name: 'ofage_http_requests_total',
      help: 'HTTP requests by method, route pattern and status',
      type: 'counter',
      aggregator: 'sum',
      values: [...each()].flatMap(({ method, route, stats }) =>
        [...stats.statuses].map(([status, value]) => ({ labels: { method, route, status: String(status) }, value })),
      ),
    }),
    reset: () => byMethod.clear(),
  } as never)
  registry.registerMetric({
    name: 'ofage_http_request_duration_seconds',
    help: 'HTTP request latency by method and route pattern',
    type: 'histogram',
    get: async () => ({
      name: 'ofage_http_request_duration_seconds',
      help: 'HTTP request latency by method and route pattern',
      type: 'histogram',
      aggregator: 'sum',
      values: [...each()].flatMap(({ method, route, stats }) => {
        let cumulative = 0
        const buckets = BUCKETS.map((le, i) => {
          cumulative += stats.buckets[i]!
          return { metricName: 'ofage_http_request_duration_seconds_bucket', labels: { le, method, route }, value: cumulative }
        })
        return [
          ...buckets,
          { metricName: 'ofage_http_request_duration_seconds_bucket', labels: { le: '+Inf', method, route }, value: stats.count },
          { metricName: 'ofage_http_request_duration_seconds_sum', labels: { method, route }, value: stats.sum },
          { metricName: 'ofage_http_request_duration_seconds_count', labels: { method, route }, value: stats.count },
        ]
      }),
    }),
    reset: () => byMethod.clear(),
  } as never)

  return {
    record(method, route, status, seconds) {
      const methodLabel = METHODS.has(method) ? method : 'other'
      let routes = byMethod.get(methodLabel)
      if (!routes) byMethod.set(methodLabel, (routes = new Map()))
      let stats = routes.get(route)
      if (!stats) {
        const label = routes.size < MAX_ROUTES ? route : 'other'
        stats = routes.get(label)
        if (!stats) routes.set(label, (stats = { statuses: new Map(), buckets: BUCKETS.map(() => 0), sum: 0, count: 0 }))
      }
      stats.statuses.set(status, (stats.statuses.get(status) ?? 0) + 1)
      const bucket = BUCKETS.findIndex((le) => seconds <= le)
      if (bucket >= 0) stats.buckets[bucket]!++
      stats.sum += seconds
      stats.count++
    },
  }
}
