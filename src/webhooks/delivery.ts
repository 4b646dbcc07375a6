import { and, asc, eq, inArray, isNull, lte, or, sql } from 'drizzle-orm'
import { Webhook } from 'standardwebhooks'
import type { Database } from '../db/client.ts'
import { webhookDeliveries, webhookEndpoints } from '../db/schema.ts'
import type { AddressPolicy } from '../lib/address-policy.ts'
import type { Clock } from '../lib/clock.ts'
import { redact, type Logger } from '../lib/log.ts'
import { postBounded, type FetchFailure, type PostResult } from '../lib/outbound-fetch.ts'
import type { Metrics } from '../ops/metrics.ts'

/**
 * Seconds between a failed attempt and the next: exponential, eleven attempts over about 24 hours
 * (85,355 s); after the last one the delivery is dead until replayed (`ofage webhooks replay`).
 */
export const RETRY_DELAYS_S = [5, 30, 120, 600, 1_800, 3_600, 7_200, 14_400, 28_800, 28_800]
/** An attempt is one instance's for this long: longer than a send may take, so none is sent twice at once. */
const LEASE_MS = 30_000
const SEND_TIMEOUT_MS = 10_000
const BATCH = 16

/** `config.outbound`: where a send may connect, judged at connect time (src/lib/outbound-fetch.ts). */
type DeliveryDeps = { db: Database; clock: Clock; log: Logger; metrics: Metrics; config: { outbound: AddressPolicy } }

/**
 * One pass of the worker: claims the deliveries that are due (a lease, taken with SKIP LOCKED so that
 * instances never claim the same attempt), sends each signed per Standard Webhooks, and records the
 * outcome. At least once: a receiver that answered but whose answer was lost gets the message again, with
 * the same `webhook-id` to deduplicate by. Returns how many were attempted.
 */
export async function deliverDue(deps: DeliveryDeps): Promise<number> {
  const now = deps.clock.now()
  const leaseUntil = new Date(now.getTime() + LEASE_MS)
  const due = deps.db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        isNull(webhookDeliveries.deliveredAt),
        isNull(webhookDeliveries.deadAt),
        lte(webhookDeliveries.nextAttemptAt, now),
        or(isNull(webhookDeliveries.leaseUntil), lte(webhookDeliveries.leaseUntil, now)),
      ),
    )
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(BATCH)
    .for('update', { skipLocked: true })
  const claimed = await deps.db
    .update(webhookDeliveries)
    .set({ leaseUntil, attempts: sql`${webhookDeliveries.attempts} + 1` })
    .where(inArray(webhookDeliveries.id, due))
    .returning()
  if (claimed.length === 0) return 0
  const endpoints = await deps.db
    .select()
    .from(webhookEndpoints)
    .where(inArray(webhookEndpoints.id, [...new Set(claimed.map((delivery) => delivery.endpointId))]))
  const byId = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]))
  await Promise.all(
    claimed.map(async (delivery) => {
      const endpoint = byId.get(delivery.endpointId)
      // Removed since it was claimed: its deliveries went with it.
      if (!endpoint) return
      const outcome = await send(deps.config.outbound, endpoint, delivery, deps.clock.now())
      await record(deps, delivery, leaseUntil, outcome)
    }),
  )
  return claimed.length
}

type Outcome = { ok: boolean; status: number | null; error: string | null }

/**
 * One signed POST, through the outbound module that every request of ours goes through: the address the
 * endpoint's host resolves to is judged when connecting (a client's people choose the URL: issue 30), and a
 * redirect is the receiver's answer, never followed. Plain http is the endpoint registry's to refuse.
 */
async function send(policy: AddressPolicy, endpoint: { url: string; secret: string }, delivery: { id: string; payload: string }, at: Date): Promise<Outcome> {
  const signature = new Webhook(endpoint.secret).sign(delivery.id, at, delivery.payload)
  const sent = await postBounded(endpoint.url, {
    ...policy,
    allowHttp: true,
    timeoutMs: SEND_TIMEOUT_MS,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'ofage-webhooks',
      'webhook-id': delivery.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signature,
    },
    body: delivery.payload,
  })
  if (sent.ok) return { ok: sent.status >= 200 && sent.status < 300, status: sent.status, error: null }
  return { ok: false, status: null, error: describeSendFailure(sent, endpoint.url) }
}

/** What `last_error` says when nothing was sent to the address: no port was opened, so nothing about it. */
const NOT_SENT: Partial<Record<FetchFailure, string>> = {
  refused_address: 'refused_address: the endpoint’s host is or resolves to a private, loopback or reserved address, which webhooks are not sent to',
  refused_url: 'refused_url: the endpoint’s URL is not one webhooks are sent to',
  timeout: `timeout: no answer within ${SEND_TIMEOUT_MS / 1000} s`,
}

/**
 * Why a send failed, for the log, the deliveries list and `webhooks dead`. A refused address says only that
 * (issue 30: never how a port answered). An unreachable one says the system's code and message
 * (`ECONNREFUSED: …`, `ENOTFOUND`), not only the error's class (issue 19: every failure logged
 * `"error":"TypeError"`). Never the payload or the signature; the endpoint's URL is cut out of the message,
 * since a receiver's URL may carry a token of its own.
 */
export function describeSendFailure(failure: PostResult & { ok: false }, url: string): string {
  const known = NOT_SENT[failure.failure]
  if (known) return known
  return `${failure.failure}: ${describeError(failure.cause, url)}`
}

function describeError(cause: unknown, url: string): string {
  if (!(cause instanceof Error)) return 'error'
  const code = (cause as { code?: unknown }).code ?? (cause.cause as { code?: unknown } | undefined)?.code
  const message = redact(cause.message.replaceAll(url, '[endpoint URL]')).slice(0, 300)
  if (typeof code !== 'string' || !code) return `${cause.name}: ${message}`
  return message.startsWith(code) ? message : `${code}: ${message}`
}

/** Writes an attempt's outcome, only while the lease is still ours (an expired one may be another's attempt now). */
async function record(deps: DeliveryDeps, delivery: { id: string; attempts: number; endpointId: string }, lease: Date, outcome: Outcome): Promise<void> {
  const now = deps.clock.now()
  const ours = and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.leaseUntil, lease))
  const result = { lastStatus: outcome.status, lastError: outcome.error, leaseUntil: null }
  if (outcome.ok) {
    await deps.db.update(webhookDeliveries).set({ ...result, deliveredAt: now }).where(ours)
    deps.metrics.webhookAttempts.inc({ outcome: 'delivered' })
    return
  }
  const delay = RETRY_DELAYS_S[delivery.attempts - 1]
  const next = delay === undefined ? { deadAt: now } : { nextAttemptAt: new Date(now.getTime() + delay * 1000) }
  await deps.db.update(webhookDeliveries).set({ ...result, ...next }).where(ours)
  deps.metrics.webhookAttempts.inc({ outcome: delay === undefined ? 'dead' : 'failed' })
  deps.log.info('webhook_failed', { delivery_id: delivery.id, endpoint_id: delivery.endpointId, attempt: delivery.attempts, status: outcome.status, error: outcome.error, dead: delay === undefined })
}

/**
 * The delivery loop of a server: a pass every `intervalMs`, at once again after a full batch. `stop()`
 * waits for the pass in progress, so a shutdown does not cut a send in half (a cut one is sent again).
 */
export function startWebhookWorker(deps: DeliveryDeps, intervalMs = 1_000): { stop(): Promise<void> } {
  let stopped = false
  let timer: Timer | undefined
  let pass: Promise<void> = Promise.resolve()
  const tick = () => {
    pass = deliverDue(deps).then(
      (attempted) => schedule(attempted >= BATCH ? 0 : intervalMs),
      (cause) => {
        deps.log.error('webhook_pass_failed', { message: cause instanceof Error ? cause.message : String(cause) })
        schedule(intervalMs)
      },
    )
  }
  const schedule = (ms: number) => {
    if (!stopped) timer = setTimeout(tick, ms)
  }
  schedule(intervalMs)
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await pass
    },
  }
}
