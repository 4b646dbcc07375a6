import { hostname } from 'node:os'
import { Counter, Gauge, Registry } from 'prom-client'
import { registerHttpMetrics } from './http-metrics.ts'
import { workerIndex } from './workers.ts'

/** The service's Prometheus metrics, one registry per app (tests build many apps in one process). */
export type Metrics = ReturnType<typeof createMetrics>

/** Which process counted a series: the machine (or container) and its place among the server's WORKERS. */
export type ProcessLabels = { host: string; worker: string }

/**
 * Every series carries the labels of the process that counts it. Each process counts on its own, and a
 * scrape is answered by one of them: the kernel hands it to any of the WORKERS sharing the port, a balancer
 * to any instance. Without these labels, successive scrapes of one target read different processes' totals
 * into one series, and `rate()` takes each drop for a restart (docs/deploy.md, "Metrics").
 */
export function createMetrics(processLabels: ProcessLabels = { host: hostname(), worker: String(workerIndex()) }) {
  const registry = new Registry()
  registry.setDefaultLabels(processLabels)
  const metrics = {
    registry,
    http: registerHttpMetrics(registry),
    verifications: new Counter({
      name: 'ofage_verifications_total',
      help: 'Checks on the hosted page by method (sandbox, face, passkey, credential) and outcome: approved, failed, unreadable (not counted as an attempt) or busy (503) for a form or a passkey; answered or refused for a digital ID',
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
    revocationChecks: new Counter({
      name: 'ofage_credential_revocation_checks_total',
      help: "Revocation checks of digital IDs: kind (status_list, crl) and outcome, the list's verdict (valid, invalid, suspended, unknown_status; good, revoked) or why the list could not be had (timeout, unreachable, http_status, refused_address, untrusted_list, expired_list, stale_crl, ...)",
      labelNames: ['kind', 'outcome'] as const,
      registers: [registry],
    }),
    gateChecks: new Counter({
      name: 'ofage_gate_checks_total',
      help: "The gate's answers to its proxies (/gate/auth) by outcome: pass, unverified (no cookie), refused (a cookie that does not count here), unknown_host, ambiguous (two origins could answer, or a sandbox client named where a live one gates), suspended, unavailable",
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'ofage_rate_limited_total',
      help: 'Requests refused with 429 by an abuse limit, by where (api or page)',
      labelNames: ['route'] as const,
      registers: [registry],
    }),
    memory: new Gauge({
      name: 'ofage_process_memory_bytes',
      help: "This process's memory by kind: rss (resident), heap_used and heap_total (the JavaScript heap), external (buffers outside it)",
      labelNames: ['kind'] as const,
      registers: [registry],
      collect() {
        const usage = process.memoryUsage()
        this.set({ kind: 'rss' }, usage.rss)
        this.set({ kind: 'heap_used' }, usage.heapUsed)
        this.set({ kind: 'heap_total' }, usage.heapTotal)
        this.set({ kind: 'external' }, usage.external)
      },
    }),
  }
  // Closed sets of events start at 0 (Prometheus's advice, "avoid missing metrics"): a series that appears
  // with its first event at 1 shows no increase, so the first dead letter or replayed code would alert no one.
  for (const event of ['issued', 'redeemed', 'expired', 'replayed']) metrics.codes.inc({ event }, 0)
  for (const outcome of ['delivered', 'failed', 'dead']) metrics.webhookAttempts.inc({ outcome }, 0)
  for (const outcome of ['pass', 'unverified', 'refused', 'unknown_host', 'ambiguous', 'suspended', 'unavailable']) metrics.gateChecks.inc({ outcome }, 0)
  for (const route of ['api', 'page']) metrics.rateLimited.inc({ route }, 0)
  return metrics
}
