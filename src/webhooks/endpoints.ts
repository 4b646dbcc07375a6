import { and, asc, desc, eq, isNotNull, isNull } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { clients, webhookDeliveries, webhookEndpoints } from '../db/schema.ts'
import { RuleError } from '../errors.ts'
import type { Clock } from '../lib/clock.ts'
import { randomToken } from '../lib/crypto.ts'
import { knownAddresses, refuseAddress, type AddressPolicy } from '../lib/address-policy.ts'
import { isCleartextUrl, readHttpUrl } from '../lib/http-url.ts'
import { findClient } from '../clients/registry.ts'
import { eventTypes, type EventType } from './events.ts'

export type WebhookEndpoint = typeof webhookEndpoints.$inferSelect
export type WebhookDelivery = typeof webhookDeliveries.$inferSelect

type EndpointDeps = { db: Database; clock: Clock; config: { production: boolean; outbound: AddressPolicy } }

/** Endpoints a client may have: each event is sent to every one of them. */
export const MAX_WEBHOOK_ENDPOINTS = 10

/**
 * Registers an endpoint for a client and returns it with its signing secret (Standard Webhooks' `whsec_`
 * form, 32 random bytes). HTTPS only in production, and for a live client anywhere but on loopback (the
 * rule of its redirect URIs); plain http for a receiver on the operator's machine or a sandbox client's.
 * An address that webhooks are never sent to (isInternalWebhookUrl) is refused now rather than on every send.
 */
export async function addWebhookEndpoint(deps: EndpointDeps, clientId: string, input: { url: string; events?: string[] }): Promise<WebhookEndpoint> {
  const client = await findClient(deps.db, clientId)
  if (!client) throw new RuleError('client_unknown', `no client ${clientId}`)
  const url = readHttpUrl('a webhook URL', input.url)
  if (deps.config.production && url.protocol !== 'https:') throw new RuleError('url_cleartext', 'a webhook URL must be https in production')
  if (!client.sandbox && isCleartextUrl(url)) {
    throw new RuleError('url_cleartext', `a webhook URL must use https for a live client (only loopback addresses and sandbox clients may use http): ${url.href}`)
  }
  if (isInternalWebhookUrl(url, deps.config.outbound)) {
    throw new RuleError('webhook_url_internal', `a webhook URL's host may not be a private, loopback or reserved address, which webhooks are not sent to (${url.hostname}); an internal receiver's address is named in OUTBOUND_ALLOWED_NETWORKS`)
  }
  const events = input.events?.length ? [...new Set(input.events)] : [...eventTypes]
  const unknown = events.filter((event) => !(eventTypes as readonly string[]).includes(event))
  if (unknown.length) throw new RuleError('webhook_event_unknown', `unknown event type ${unknown.join(', ')}; known: ${eventTypes.join(', ')}`)
  const secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`
  return deps.db.transaction(async (tx) => {
    // One endpoint per client and URL (as the parser writes it): a second would send each event twice,
    // signed with a secret the receiver does not have (issue 19). The client's row is locked so that two
    // adds at once cannot both find none. Not a unique index: a database holding such pairs from before
    // could then not be migrated at start; `webhooks list` shows them, and `webhooks remove` ends one.
    await tx.select({ id: clients.id }).from(clients).where(eq(clients.id, clientId)).for('update')
    const [existing] = await tx
      .select({ id: webhookEndpoints.id })
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.clientId, clientId), eq(webhookEndpoints.url, url.href)))
    if (existing) {
      throw new RuleError(
        'webhook_endpoint_known',
        `client ${clientId} already has the webhook endpoint ${existing.id} for ${url.href}, with its own signing secret: ` +
          `to change its events or secret, remove it (webhooks remove ${existing.id}) and add it again`,
      )
    }
    const count = await tx.$count(webhookEndpoints, eq(webhookEndpoints.clientId, clientId))
    if (count >= MAX_WEBHOOK_ENDPOINTS) throw new RuleError('webhook_endpoints_full', `client ${clientId} has ${count} webhook endpoints, the most a client may have: remove one first`)
    const [endpoint] = await tx
      .insert(webhookEndpoints)
      .values({ id: `we_${randomToken(12)}`, clientId, url: url.href, secret, events: events as EventType[], createdAt: deps.clock.now() })
      .returning()
    return endpoint!
  })
}

/**
 * Whether a webhook URL's host is an address that sends would be refused at connect time: an IP literal, or
 * a localhost name, judged by the outbound policy (`knownAddresses`, `refuseAddress`). Only an early, clearer
 * answer when an endpoint is added: a name that resolves to such an address is not judged here (what it
 * resolves to now says nothing of what it will resolve to at send time), and every send is judged again when
 * it connects (src/lib/outbound-fetch.ts), so that a client cannot make our server probe its neighbours and
 * read the answer off the deliveries list (issue 30).
 */
export function isInternalWebhookUrl(url: URL, policy: AddressPolicy): boolean {
  return knownAddresses(url.hostname)?.some(({ address }) => refuseAddress(address, policy) !== undefined) ?? false
}

/**
 * Whether a text can be one of our ids (`we_…`, `msg_…`: a prefix and base64url). Anything else names
 * nothing, and is never sent to the database (a NUL byte is an error there, not a miss).
 */
export function isWebhookId(value: string): boolean {
  return /^[a-z]+_[A-Za-z0-9_-]{1,64}$/.test(value)
}

/** One endpoint of this client; another client's is not found, exactly like one that does not exist. */
export async function findClientEndpoint(db: Database, clientId: string, endpointId: string): Promise<WebhookEndpoint | undefined> {
  if (!isWebhookId(endpointId)) return undefined
  const [endpoint] = await db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.clientId, clientId)))
  return endpoint
}

export async function listWebhookEndpoints(db: Database, clientId: string): Promise<WebhookEndpoint[]> {
  return db.select().from(webhookEndpoints).where(eq(webhookEndpoints.clientId, clientId)).orderBy(asc(webhookEndpoints.createdAt))
}

/** Removes an endpoint and its pending deliveries; returns whether it existed. */
export async function removeWebhookEndpoint(db: Database, endpointId: string): Promise<boolean> {
  const removed = await db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, endpointId)).returning({ id: webhookEndpoints.id })
  return removed.length > 0
}

/** Deliveries that gave up after the whole retry schedule, newest first; of one client when given. */
export async function listDeadDeliveries(db: Database, clientId?: string): Promise<(WebhookDelivery & { url: string; clientId: string })[]> {
  const rows = await db
    .select({ delivery: webhookDeliveries, url: webhookEndpoints.url, clientId: webhookEndpoints.clientId })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(and(isNotNull(webhookDeliveries.deadAt), clientId === undefined ? undefined : eq(webhookEndpoints.clientId, clientId)))
    .orderBy(desc(webhookDeliveries.deadAt))
  return rows.map((row) => ({ ...row.delivery, url: row.url, clientId: row.clientId }))
}

/**
 * Sends a dead delivery again: same message id (receivers deduplicate by it), a fresh retry schedule.
 * Returns whether there was such a dead delivery.
 */
export async function replayDelivery(deps: { db: Database; clock: Clock }, deliveryId: string): Promise<boolean> {
  const replayed = await deps.db
    .update(webhookDeliveries)
    .set({ deadAt: null, attempts: 0, nextAttemptAt: deps.clock.now(), leaseUntil: null })
    .where(and(eq(webhookDeliveries.id, deliveryId), isNotNull(webhookDeliveries.deadAt), isNull(webhookDeliveries.deliveredAt)))
    .returning({ id: webhookDeliveries.id })
  return replayed.length > 0
}
