import { and, desc, eq, gte, lt, lte, or } from 'drizzle-orm'
import type { AuditLog } from '../audit/audit-logs.ts'
import type { Database } from '../db/client.ts'
import { unionAll } from 'drizzle-orm/pg-core'
import { auditLogs, methodClasses, verificationLevels, type MethodClass, type VerificationLevel } from '../db/schema.ts'

/** What a dashboard user narrows their audit log by; every search is also bound to their client. */
export type AuditFilter = {
  /** Exact; anything that is not a UUID matches nothing. */
  transactionId?: string | undefined
  /** Half-open: `start <= created_at < end`. */
  start?: Date | undefined
  end?: Date | undefined
  methodClass?: MethodClass | undefined
  level?: VerificationLevel | undefined
}

/** Where a page of the newest-first list ends: the next page starts strictly after this row. */
export type AuditCursor = { createdAt: Date; transactionId: string }

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A transaction id as stored (lower case), or undefined when it is not a UUID and so names no row. */
export function readTransactionId(value: string): string | undefined {
  const id = value.trim().toLowerCase()
  return uuid.test(id) ? id : undefined
}

/** `2026-11-22T12:00:00.000Z_<uuid>`: the cursor in a URL, readable and checked when read back. */
export function encodeCursor(cursor: AuditCursor): string {
  return `${cursor.createdAt.toISOString()}_${cursor.transactionId}`
}

export function decodeCursor(value: string): AuditCursor | undefined {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)_([0-9a-f-]{36})$/.exec(value)
  const createdAt = match ? new Date(match[1]!) : undefined
  const transactionId = match ? readTransactionId(match[2]!) : undefined
  if (!createdAt || Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== match![1] || !transactionId) return undefined
  return { createdAt, transactionId }
}

/**
 * One page of a client's audit rows, newest first, and the cursor of the next page when there is one.
 * Keyset pagination on (created_at, transaction_id): the condition on created_at is a range on the
 * (client_id, created_at) index, so a page far down a history of millions reads about as many rows as it
 * shows, where OFFSET would read every row before it. transaction_id only breaks ties within a millisecond.
 */
export async function searchAuditLogs(
  db: Database,
  clientId: string,
  query: { filter: AuditFilter; before?: AuditCursor | undefined; limit: number },
): Promise<{ rows: AuditLog[]; next: AuditCursor | undefined }> {
  if (query.filter.transactionId !== undefined && readTransactionId(query.filter.transactionId) === undefined) return { rows: [], next: undefined }
  const rows = await auditPageQuery(db, clientId, query)
  const page = rows.slice(0, query.limit)
  const last = page.at(-1)
  return { rows: page, next: rows.length > query.limit && last ? { createdAt: last.createdAt, transactionId: last.transactionId } : undefined }
}

/**
 * The statement behind {@link searchAuditLogs}: one row more than a page, to know whether another follows.
 *
 * A transaction id is a primary-key lookup, and the whole list a backward walk of (client_id, created_at).
 * A filter by class or level is one branch per (method class, level) it allows, each a backward range on the (client_id, method_class, verification_level, created_at) index
 * that stops after a page, merged newest first: a filter that matches few rows, or none, reads about a page
 * per branch, where a walk of (client_id, created_at) that filters as it goes would read the whole history
 * (a million rows, 630 ms, before this; `bun run bench:audit`).
 */
export function auditPageQuery(db: Database, clientId: string, query: { filter: AuditFilter; before?: AuditCursor | undefined; limit: number }) {
  const { filter, before } = query
  const newestFirst = [desc(auditLogs.createdAt), desc(auditLogs.transactionId)] as const
  const common = and(
    eq(auditLogs.clientId, clientId),
    filter.start && gte(auditLogs.createdAt, filter.start),
    filter.end && lt(auditLogs.createdAt, filter.end),
    // Spelt out rather than a row comparison, so that `created_at <= …` is plainly an index condition.
    before && and(lte(auditLogs.createdAt, before.createdAt), or(lt(auditLogs.createdAt, before.createdAt), lt(auditLogs.transactionId, before.transactionId))),
  )
  // By id, or with every class and level: one statement (a key lookup; every row of the range matches).
  if (filter.transactionId !== undefined || (!filter.methodClass && !filter.level)) {
    const transactionId = filter.transactionId === undefined ? undefined : (readTransactionId(filter.transactionId) ?? '00000000-0000-0000-0000-000000000000')
    const where = and(
      common,
      transactionId === undefined ? undefined : eq(auditLogs.transactionId, transactionId),
      filter.methodClass && eq(auditLogs.methodClass, filter.methodClass),
      filter.level && eq(auditLogs.verificationLevel, filter.level),
    )
    return db.select().from(auditLogs).where(where).orderBy(...newestFirst).limit(query.limit + 1)
  }
  const classes = methodClasses.filter((value) => !filter.methodClass || value === filter.methodClass)
  const levels = verificationLevels.filter((value) => !filter.level || value === filter.level)
  const branches = classes.flatMap((methodClass) =>
    levels.map((level) =>
      db
        .select()
        .from(auditLogs)
        .where(and(common, eq(auditLogs.methodClass, methodClass), eq(auditLogs.verificationLevel, level)))
        .orderBy(...newestFirst)
        .limit(query.limit + 1),
    ),
  )
  const [first, second, ...rest] = branches
  return second ? unionAll(first!, second, ...rest).orderBy(...newestFirst).limit(query.limit + 1) : first!
}

/**
 * One audit row of this client by its transaction id. Another client's row is not found, exactly like an
 * id that does not exist: guessing ids tells a user nothing about other clients.
 */
export async function findClientAuditLog(db: Database, clientId: string, transactionId: string): Promise<AuditLog | undefined> {
  const id = readTransactionId(transactionId)
  if (!id) return undefined
  const [row] = await db
    .select()
    .from(auditLogs)
    .where(and(eq(auditLogs.transactionId, id), eq(auditLogs.clientId, clientId)))
  return row
}
