import { and, eq, inArray } from 'drizzle-orm'
import type { Database, Executor } from '../db/client.ts'
import { clients, gateHosts } from '../db/schema.ts'
import { RuleError } from '../errors.ts'
import type { Clock } from '../lib/clock.ts'
import { writeDuration } from '../lib/duration.ts'
import { readHttpUrl, refuseCleartextUrl } from '../lib/http-url.ts'
import { MAX_REDIRECT_URIS } from '../clients/rules.ts'
import { type Client } from '../clients/model.ts'
import { gateAgeOf, gateCallbackUri, listClientGateHosts } from './gate-hosts.ts'

/** The shortest and longest a gate cookie may count: a minute, and the 400 days browsers keep a cookie at most (RFC 6265bis §5.5). */
export const GATE_TTL_RANGE = { min: 60, max: 400 * 86_400 } as const

export type GateChanges = {
  /** Hosts to gate: `shop.example` (https), or an origin such as `https://shop.example:8443`. */
  addHosts?: string[] | undefined
  removeHosts?: string[] | undefined
  /** The age to ask for; null: the client's minimum age, else 18. */
  age?: number | null | undefined
  ttlSeconds?: number | undefined
}

/** A client's gate as the CLI and the dashboard show it. */
export type GateSettings = { hosts: string[]; age: number; ageIsSet: boolean; ttlSeconds: number }

export function describeGate(settings: GateSettings) {
  return { gate_hosts: settings.hosts, gate_age: settings.age, gate_ttl: writeDuration(settings.ttlSeconds) }
}

export async function readGateSettings(db: Executor, client: Client): Promise<GateSettings> {
  return { hosts: await listClientGateHosts(db, client.id), age: gateAgeOf(client), ageIsSet: client.gateAge !== null, ttlSeconds: client.gateTtlSeconds }
}

/**
 * The origin a gate host names: a bare host name means https; an origin keeps its scheme and port. Nothing
 * after the host: the gate covers the whole origin, and the proxy decides which paths it asks about.
 */
export function readGateOrigin(input: string): string {
  const text = input.trim().replace(/\/$/, '')
  const url = readHttpUrl('a gate host', /^https?:\/\//i.test(text) ? text : `https://${text}`)
  if (url.pathname !== '/' || url.search || text.includes('?')) throw new RuleError('gate_host_invalid', `a gate host is a host name or an origin, without a path or query: ${input}`)
  return url.origin
}

/**
 * Changes a client's gate in one transaction, the client row locked: the hosts (each with its callback
 * added to or removed from the client's redirect URIs), the age and the cookie's
 * lifetime. Returns undefined when no such client exists.
 */
export async function updateGate(deps: { db: Database; clock: Clock }, clientId: string, changes: GateChanges): Promise<GateSettings | undefined> {
  const added = [...new Set((changes.addHosts ?? []).map(readGateOrigin))]
  const removed = new Set((changes.removeHosts ?? []).map(readGateOrigin))
  if (changes.age != null && !(Number.isInteger(changes.age) && changes.age >= 1 && changes.age <= 99)) {
    throw new RuleError('gate_age_range', 'gate age must be an integer from 1 to 99')
  }
  const ttl = changes.ttlSeconds
  if (ttl !== undefined && !(Number.isInteger(ttl) && ttl >= GATE_TTL_RANGE.min && ttl <= GATE_TTL_RANGE.max)) {
    throw new RuleError('gate_ttl_range', 'gate cookie lifetime must be from 1 minute (60) to 400 days (400d)')
  }
  return deps.db.transaction(async (tx) => {
    const [client] = await tx.select().from(clients).where(eq(clients.id, clientId)).for('update')
    if (!client) return undefined
    const age = changes.age === undefined ? client.gateAge : changes.age
    if (age !== null && client.minAge !== null && age < client.minAge) {
      throw new RuleError('gate_age_under_min_age', `gate age ${age} is under this client's minimum age of ${client.minAge}`)
    }
    for (const origin of added) refuseCleartextUrl('a gate host', new URL(origin), client.sandbox)
    // Another client's claim of the same origin is no obstacle and no concern: the proxy's configuration
    // names the client that answers (gate-match.ts). The client row is locked, so its own adds are serial.
    const fresh = added.filter((origin) => !removed.has(origin))
    if (fresh.length) {
      await tx
        .insert(gateHosts)
        .values(fresh.map((origin) => ({ origin, clientId: client.id, createdAt: deps.clock.now() })))
        .onConflictDoNothing()
    }
    if (removed.size) await tx.delete(gateHosts).where(and(eq(gateHosts.clientId, client.id), inArray(gateHosts.origin, [...removed])))
    const gone = new Set([...removed].map(gateCallbackUri))
    const redirectUris = [...new Set([...client.redirectUris, ...fresh.map(gateCallbackUri)])].filter((uri) => !gone.has(uri))
    if (redirectUris.length === 0) throw new RuleError('redirect_uri_last', 'a client must keep at least one redirect URI: add another before removing its last gate host')
    if (redirectUris.length > MAX_REDIRECT_URIS) throw new RuleError('redirect_uris_too_many', `a client has at most ${MAX_REDIRECT_URIS} redirect URIs, gate hosts' included`)
    const [updated] = await tx
      .update(clients)
      .set({ redirectUris, gateAge: age, ...(ttl !== undefined && { gateTtlSeconds: ttl }) })
      .where(eq(clients.id, client.id))
      .returning()
    return readGateSettings(tx, updated!)
  })
}
