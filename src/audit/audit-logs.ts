import { and, desc, eq, gte } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { auditLogs } from '../db/schema.ts'

export type AuditLog = typeof auditLogs.$inferSelect

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The audit row of one approved verification, by `transaction_id`. */
export async function findAuditLog(db: Database, transactionId: string): Promise<AuditLog | undefined> {
  if (!uuid.test(transactionId)) return undefined
  const [row] = await db.select().from(auditLogs).where(eq(auditLogs.transactionId, transactionId.toLowerCase()))
  return row
}

/**
 * A client's audit rows, newest first, from `since` on when given: read through the (client_id,
 * created_at) index, so a long history costs only the rows asked for.
 */
export async function listAuditLogs(db: Database, query: { clientId: string; since?: Date | undefined; limit: number }): Promise<AuditLog[]> {
  return db
    .select()
    .from(auditLogs)
    .where(and(eq(auditLogs.clientId, query.clientId), query.since && gte(auditLogs.createdAt, query.since)))
    .orderBy(desc(auditLogs.createdAt), desc(auditLogs.transactionId))
    .limit(query.limit)
}

/** An audit row with wire names, as the CLI prints it. */
export function describeAuditLog(row: AuditLog) {
  return {
    transaction_id: row.transactionId,
    client_id: row.clientId,
    sub: row.subject,
    method_class: row.methodClass,
    verification_level: row.verificationLevel,
    age_over: row.ageOver,
    method: row.method,
    age_buffer: row.ageBuffer,
    created_at: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
  }
}
