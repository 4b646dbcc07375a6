import { Counter, Histogram, Registry } from 'prom-client'

/** The service's Prometheus metrics, one registry per app (tests build many apps in one process). */
export type Metrics = ReturnType<typeof createMetrics>

export function createMetrics() {
  const registry = new Registry()
  return {
    registry,
    httpRequests: new Counter({
      name: 'ofage_http_requests_total',
      help: 'HTTP requests by method, route pattern and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'ofage_http_request_duration_seconds',
      help: 'HTTP request latency by method and route pattern',
      labelNames: ['method', 'route'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    verifications: new Counter({
      name: 'ofage_verifications_total',
      help: 'Checks on the hosted page by method and outcome (approved, failed, unreadable, busy)',
      labelNames: ['method', 'outcome'] as const,
      registers: [registry],
    }),
    codes: new Counter({
      name: 'ofage_codes_total',
      help: 'Authorization codes by event (issued, redeemed, expired, replayed)',
      labelNames: ['event'] as const,
      registers: [registry],
    }),
    planLimitRefusals: new Counter({
      name: 'ofage_plan_limit_refusals_total',
      help: 'Requests refused with payment_required because a plan reached its limit',
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'ofage_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, failed, dead)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'ofage_rate_limited_total',
      help: 'Requests refused with 429 by an abuse limit, by where (api or page)',
      labelNames: ['route'] as const,
      registers: [registry],
    }),
  }
}
