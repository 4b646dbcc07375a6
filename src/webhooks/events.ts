import { and, arrayContains, eq, SQL, sql, type Placeholder } from 'drizzle-orm'
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
  const payload = eventPayload(type, data, at)
  await tx.insert(webhookDeliveries).values(endpoints.map((endpoint) => outboxRow(endpoint.id, type, payload, at)))
  return endpoints.length
}

/**
 * {@link enqueueEvent} as part of a larger statement (a completion's, src/oauth/issue-code.ts): the event for
 * each of the client's endpoints that takes it, written only when `source` yields a row. The payload is SQL,
 * so that it may carry what only the statement knows (the plan's limit, read from the locked client row);
 * the message ids are made there too, 138 random bits each (two version-4 UUIDs' bytes, base64url).
 */
export function enqueueEventFrom(source: SQL, clientId: string | Placeholder, type: EventType, payload: SQL, at: string | Placeholder): SQL {
  return sql`insert into webhook_deliveries (id, endpoint_id, event_type, payload, created_at, next_attempt_at)
    select ${MESSAGE_ID}, endpoint.id, ${type}::text, ${payload}, ${at}::timestamptz, ${at}::timestamptz
    from webhook_endpoints endpoint, ${source}
    where endpoint.client_id = ${clientId}::text and endpoint.events @> array[${type}::text]`
}

const MESSAGE_ID = sql`'msg_' || rtrim(translate(encode(substring(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) from 1 for 18), 'base64'), '+/', '-_'), '=')`

type PayloadData<T extends EventType> = { [K in keyof EventData[T]]: EventData[T][K] | SQL }

/**
 * An event's payload as SQL text, exactly the text {@link enqueueEvent} writes, where a value may be an SQL
 * expression of the statement (the client's `sandbox` and plan limit, as the completion reads its row): its
 * text is put where JSON would write the value (`true`, `5`). The statement is built once (src/db/prepared.ts),
 * so the JSON around the expressions is placeholders, `${name}0`, `${name}1`, …, whose values
 * {@link payloadPieces} gives for each event. `expressions` are the data's SQL values, in the data's key order.
 */
export function payloadText<T extends EventType>(type: T, expressions: Partial<Record<keyof EventData[T], SQL>>, name: string): SQL {
  const { texts, expressions: spliced } = splitPayload(type, expressions as PayloadData<T>, new Date(0))
  const piece = (i: number) => sql`${sql.placeholder(`${name}${i}`)}::text`
  return sql.join(
    texts.flatMap((_, i) => (i < spliced.length ? [piece(i), sql`(${spliced[i]})::text`] : [piece(i)])),
    sql` || `,
  )
}

/** The values of {@link payloadText}'s placeholders for one event: its JSON text, cut where the statement's expressions go. */
export function payloadPieces<T extends EventType>(type: T, data: PayloadData<T>, at: Date, name: string): Record<string, string> {
  return Object.fromEntries(splitPayload(type, data, at).texts.map((text, i) => [`${name}${i}`, text]))
}

/** The event's JSON text cut at its SQL values, marked where no escaped value can (a NUL becomes `\u0000` in JSON). */
function splitPayload<T extends EventType>(type: T, data: PayloadData<T>, at: Date): { texts: string[]; expressions: SQL[] } {
  const expressions: SQL[] = []
  const marked = Object.fromEntries(Object.entries(data).map(([key, value]) => [key, value instanceof SQL ? `\u0000${expressions.push(value) - 1}` : value]))
  const parts = eventPayload(type, marked, at).split(/"\\u0000(\d+)"/)
  return { texts: parts.filter((_, i) => i % 2 === 0), expressions: parts.filter((_, i) => i % 2 === 1).map((index) => expressions[Number(index)]!) }
}

/**
 * The event a dashboard user sends to one endpoint to see it work (docs/integration.md §6). Not one of
 * {@link eventTypes}: no endpoint subscribes to it, it goes only where it is sent, and it says nothing
 * that happened, only which client and endpoint it is for.
 */
export const TEST_EVENT_TYPE = 'webhook.test'
export type TestEventData = { client_id: string; endpoint_id: string }

/**
 * Writes a `webhook.test` event to the outbox of one endpoint: the same row, signature and worker as a
 * real event, so what the receiver gets (or the failure the dashboard then shows) is what a real one
 * would meet. Returns the delivery's id (the message's `webhook-id`).
 */
export async function enqueueTestEvent(db: Executor, endpoint: { id: string; clientId: string }, at: Date): Promise<string> {
  const data: TestEventData = { client_id: endpoint.clientId, endpoint_id: endpoint.id }
  const row = outboxRow(endpoint.id, TEST_EVENT_TYPE, eventPayload(TEST_EVENT_TYPE, data, at), at)
  await db.insert(webhookDeliveries).values(row)
  return row.id
}

/** Standard Webhooks' payload: type, timestamp, data; the exact text that is signed and sent. */
export function eventPayload(type: string, data: object, at: Date): string {
  return JSON.stringify({ type, timestamp: at.toISOString(), data })
}

function outboxRow(endpointId: string, eventType: string, payload: string, at: Date) {
  return { id: `msg_${randomToken(18)}`, endpointId, eventType, payload, createdAt: at, nextAttemptAt: at }
}
