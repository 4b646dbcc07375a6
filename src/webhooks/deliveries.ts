import { and, desc, eq, lt, lte, or } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { webhookDeliveries, webhookEndpoints } from '../db/schema.ts'
import { isWebhookId, type WebhookDelivery } from './endpoints.ts'

/**
 * Where a delivery stands: waiting for its first attempt (or in it), sent and answered 2xx, failed and
 * due again at `nextAttemptAt`, or dead after the whole retry schedule until someone replays it.
 */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'dead'

export function deliveryStatus(delivery: Pick<WebhookDelivery, 'deliveredAt' | 'deadAt' | 'attempts' | 'lastStatus' | 'lastError'>): DeliveryStatus {
  if (delivery.deliveredAt) return 'delivered'
  if (delivery.deadAt) return 'dead'
  // A replayed delivery starts again at no attempts (its last answer is kept, to be shown): pending.
  if (delivery.attempts === 0) return 'pending'
  // An attempt under way has no answer yet; one that failed has a status or an error.
  return delivery.lastStatus !== null || delivery.lastError !== null ? 'failed' : 'pending'
}

/** Where a page of an endpoint's newest-first deliveries ends: the next page starts strictly after it. */
export type DeliveryCursor = { createdAt: Date; id: string }

/** `2026-11-22T12:00:00.000Z_msg_…`: the cursor in a URL, checked when read back. */
export function encodeDeliveryCursor(cursor: DeliveryCursor): string {
  return `${cursor.createdAt.toISOString()}_${cursor.id}`
}

export function decodeDeliveryCursor(value: string): DeliveryCursor | undefined {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)_(msg_[A-Za-z0-9_-]{1,64})$/.exec(value)
  const createdAt = match ? new Date(match[1]!) : undefined
  if (!createdAt || Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== match![1]) return undefined
  return { createdAt, id: match![2]! }
}

/**
 * One page of an endpoint's deliveries, newest first, and the cursor of the next page when there is one.
 * A backward walk of the (endpoint_id, created_at, id) index that stops after a page, so the hundred-
 * thousandth delivery costs what the first does; `id` breaks ties within a millisecond.
 */
export async function listEndpointDeliveries(
  db: Database,
  query: { endpointId: string; before?: DeliveryCursor | undefined; limit: number },
): Promise<{ rows: WebhookDelivery[]; next: DeliveryCursor | undefined }> {
  const { before } = query
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.endpointId, query.endpointId),
        before && and(lte(webhookDeliveries.createdAt, before.createdAt), or(lt(webhookDeliveries.createdAt, before.createdAt), lt(webhookDeliveries.id, before.id))),
      ),
    )
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(query.limit + 1)
  const page = rows.slice(0, query.limit)
  const last = page.at(-1)
  return { rows: page, next: rows.length > query.limit && last ? { createdAt: last.createdAt, id: last.id } : undefined }
}

/** One delivery to an endpoint of this client; another client's is not found, like one that does not exist. */
export async function findClientDelivery(db: Database, clientId: string, deliveryId: string): Promise<WebhookDelivery | undefined> {
  if (!isWebhookId(deliveryId)) return undefined
  const [row] = await db
    .select({ delivery: webhookDeliveries })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookEndpoints.clientId, clientId)))
  return row?.delivery
}
