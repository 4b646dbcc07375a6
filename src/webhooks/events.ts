import { and, arrayContains, eq } from 'drizzle-orm'
import type { Executor } from '../db/client.ts'
import { webhookDeliveries, webhookEndpoints } from '../db/schema.ts'
import { randomToken } from '../lib/crypto.ts'

/**
 * The events a client can hear about. None carries anything personal: no subject, no evidence, only what
 * the client already holds (its own id, transaction ids, thresholds) or its operator set.
 */
export const eventTypes = ['verification.approved', 'code.replayed', 'plan.limit_reached', 'client.secret_rotated'] as const
export type EventType = (typeof eventTypes)[number]

export type EventData = {
  'verification.approved': { client_id: string; transaction_id: string; age_over: number; method_class: string; verification_level: string; sandbox: boolean }
  'code.replayed': { client_id: string; transaction_id: string; revoked: true }
  'plan.limit_reached': { client_id: string; verification_limit: number; month: string }
  'client.secret_rotated': { client_id: string }
}

/**
 * Writes an event to the outbox of each of the client's endpoints that takes it, in the caller's
 * transaction: the event exists exactly when what it reports was committed, and sending it never
 * delays the request (the worker delivers it, src/webhooks/delivery.ts).
 */
export async function enqueueEvent<T extends EventType>(tx: Executor, clientId: string, type: T, data: EventData[T], at: Date): Promise<number> {
  const endpoints = await tx
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.clientId, clientId), arrayContains(webhookEndpoints.events, [type])))
  if (endpoints.length === 0) return 0
  // Standard Webhooks' payload: type, timestamp, data.
  const payload = JSON.stringify({ type, timestamp: at.toISOString(), data })
  await tx.insert(webhookDeliveries).values(
    endpoints.map((endpoint) => ({ id: `msg_${randomToken(18)}`, endpointId: endpoint.id, eventType: type, payload, createdAt: at, nextAttemptAt: at })),
  )
  return endpoints.length
}
