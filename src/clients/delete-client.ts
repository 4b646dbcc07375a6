import { count, eq } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { auditLogs, authCodes, clients, dashboardUsers, pushedRequests, usageDaily, verificationSessions, webhookEndpoints } from '../db/schema.ts'
import { countMonthToDate } from '../usage/counters.ts'

export type ClientDeletion =
  | { outcome: 'deleted'; auditRows: number }
  | { outcome: 'not_found' }
  /** The client has approved verifications in the current UTC month; nothing was deleted. */
  | { outcome: 'in_use'; monthToDate: number }

/**
 * Deletes a client and every row that refers to it, in one transaction: codes, pushed requests, page
 * sessions (and their credential requests), webhook endpoints (and their deliveries), dashboard users (and
 * their sessions), usage counters and audit rows. The audit rows cannot outlive their client: `audit_logs.client_id` is a foreign key. Their
 * tokens then stop validating, since validation looks the audit row up. Refused while the client has
 * verifications this month (the count `ofage usage` reports), unless `force`: that is a site in use.
 */
export async function deleteClient(db: Database, clientId: string, options: { now: Date; force?: boolean }): Promise<ClientDeletion> {
  return db.transaction(async (tx) => {
    // Locked first: a completion counting against this client waits, or finds it gone.
    const [client] = await tx.select({ id: clients.id }).from(clients).where(eq(clients.id, clientId)).for('update')
    if (!client) return { outcome: 'not_found' }
    const monthToDate = await countMonthToDate(tx, clientId, options.now)
    if (monthToDate > 0 && !options.force) return { outcome: 'in_use', monthToDate }
    const [audit] = await tx.select({ rows: count() }).from(auditLogs).where(eq(auditLogs.clientId, clientId))
    // Children before parents: codes point at audit rows, credential requests and deliveries cascade.
    await tx.delete(authCodes).where(eq(authCodes.clientId, clientId))
    await tx.delete(pushedRequests).where(eq(pushedRequests.clientId, clientId))
    await tx.delete(verificationSessions).where(eq(verificationSessions.clientId, clientId))
    await tx.delete(webhookEndpoints).where(eq(webhookEndpoints.clientId, clientId))
    await tx.delete(dashboardUsers).where(eq(dashboardUsers.clientId, clientId))
    await tx.delete(usageDaily).where(eq(usageDaily.clientId, clientId))
    await tx.delete(auditLogs).where(eq(auditLogs.clientId, clientId))
    await tx.delete(clients).where(eq(clients.id, clientId))
    return { outcome: 'deleted', auditRows: audit?.rows ?? 0 }
  })
}
