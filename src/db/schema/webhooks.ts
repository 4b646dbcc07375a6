/** Webhook endpoints and the outbox of deliveries (src/webhooks/). */
import { sql } from 'drizzle-orm'
import { index, integer, pgTable, text } from 'drizzle-orm/pg-core'
import { instant } from './columns.ts'
import { clients } from './clients.ts'

/**
 * Where a client hears about events (src/webhooks/): an HTTPS endpoint and its Standard Webhooks signing
 * secret, kept as it is because the service signs with it (docs/security.md).
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => clients.id),
    url: text('url').notNull(),
    secret: text('secret').notNull(),
    /** The event types sent to it. */
    events: text('events').array().notNull(),
    createdAt: instant('created_at').notNull(),
  },
  // Read inside every completion's transaction: which endpoints of this client take the event.
  (t) => [index('webhook_endpoints_client').on(t.clientId)],
)

/**
 * The outbox: one row per event and endpoint, written in the transaction of the event itself, delivered
 * by the worker of any instance. `id` is the message's `webhook-id`, the same on every attempt; a lease
 * makes each attempt one instance's.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    /** The exact body that is signed and sent. */
    payload: text('payload').notNull(),
    createdAt: instant('created_at').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: instant('next_attempt_at').notNull(),
    leaseUntil: instant('lease_until'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    deliveredAt: instant('delivered_at'),
    deadAt: instant('dead_at'),
  },
  (t) => [
    // The worker's one question, "what is due?", reads only the rows still pending.
    index('webhook_deliveries_due').on(t.nextAttemptAt).where(sql`${t.deliveredAt} is null and ${t.deadAt} is null`),
    // The dashboard's list of an endpoint's deliveries, newest first, a page at a time (keyset on created_at,
    // id); and the cascade when an endpoint is removed, which otherwise reads the whole outbox.
    index('webhook_deliveries_endpoint_created').on(t.endpointId, t.createdAt, t.id),
  ],
)
