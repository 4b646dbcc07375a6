import { eq, sql, type Placeholder } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { clients } from '../db/schema.ts'
import type { Clock } from '../lib/clock.ts'
import type { Client } from './model.ts'
import { isClientIdShape } from './model.ts'

/**
 * A client as this instance read it, with the version of its row: Postgres' `xmin`, the transaction that
 * wrote the row version, which every change of the row (an update of any column) replaces.
 */
export type VersionedClient = { client: Client; version: string }

/** The most clients kept, and for how long: a bound on memory, not on freshness (each use checks the version). */
const MAX_CLIENTS = 1_000
const MAX_AGE_MS = 30_000

/**
 * The hosted page's copy of the clients it has met, so that opening the page costs no read of the client.
 * Nothing is decided on a copy without the database's word that it is current: the statement that acts on it
 * (the session's insert, the session's read) carries the version and acts only when it is still the row's
 * (`client_version_is`), and a refusal made from a copy is made again from a fresh read. Unknown ids are
 * never kept, so a new client is found at once and made-up ids cannot fill the copy.
 */
export function createClientCache(db: Database, clock: Clock, bounds: { maxClients?: number; maxAgeMs?: number } = {}) {
  const { maxClients = MAX_CLIENTS, maxAgeMs = MAX_AGE_MS } = bounds
  const entries = new Map<string, VersionedClient & { readAt: number }>()

  /** The client as the database holds it now, kept for the next request. */
  async function read(clientId: string): Promise<VersionedClient | undefined> {
    entries.delete(clientId)
    if (!isClientIdShape(clientId)) return undefined
    const [row] = await db.select({ client: clients, version: sql<string>`${clients}.xmin::text` }).from(clients).where(eq(clients.id, clientId))
    if (!row) return undefined
    if (entries.size >= maxClients) entries.delete(entries.keys().next().value!)
    entries.set(clientId, { ...row, readAt: clock.now().getTime() })
    return row
  }

  return {
    read,
    /** The kept copy, when there is one younger than 30 s (`fresh: false`), else {@link read} (`fresh: true`). */
    async find(clientId: string): Promise<(VersionedClient & { fresh: boolean }) | undefined> {
      const kept = entries.get(clientId)
      const age = kept && clock.now().getTime() - kept.readAt
      if (kept && age! >= 0 && age! < maxAgeMs) return { client: kept.client, version: kept.version, fresh: false }
      const row = await read(clientId)
      return row && { ...row, fresh: true }
    },
  }
}

export type ClientCache = ReturnType<typeof createClientCache>

/**
 * A condition a statement holds before it acts on a copy of a client: that the copy's version is still the
 * row's. As of the statement's snapshot, so a change committed before it began is always seen.
 */
export function clientVersionIs(clientId: string | Placeholder, version: string | Placeholder) {
  return sql`exists (select 1 from clients where id = ${clientId}::text and xmin::text = ${version}::text)`
}
