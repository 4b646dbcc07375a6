import { and, eq, gte, like, lt } from 'drizzle-orm'
import type { Executor } from '../db/client.ts'
import { serverSecrets } from '../db/schema.ts'
import type { KeySource } from './key-in-force.ts'

/** Rows `signing_key_instance:<id>` of server_secrets: not secrets, each running instance's own account. */
const PREFIX = 'signing_key_instance:'
/** Each running server reads the key in force again and reports this often (src/server.ts). */
export const REPORT_EVERY_MS = 30_000
/** An instance not heard from in three reports is taken for gone (killed, or its host lost). */
const SEEN_WITHIN_MS = 3 * REPORT_EVERY_MS

export type InstanceIdentity = { id: string; host: string; pid: number }

/** What an instance says of its key: where it reads it, which one it holds, and whether it signs with it. */
export type InstanceReport = InstanceIdentity & { source: KeySource; key: string | null; signing: boolean; seenAt: Date }

export async function reportInstance(db: Executor, report: Omit<InstanceReport, 'seenAt'>, now: Date): Promise<void> {
  const value = JSON.stringify({ host: report.host, pid: report.pid, source: report.source, key: report.key, signing: report.signing })
  await db
    .insert(serverSecrets)
    .values({ name: PREFIX + report.id, value, createdAt: now })
    .onConflictDoUpdate({ target: serverSecrets.name, set: { value, createdAt: now } })
}

/** The instances heard from in the last 90 seconds, by host and pid. */
export async function listInstances(db: Executor, now: Date): Promise<InstanceReport[]> {
  const rows = await db
    .select()
    .from(serverSecrets)
    .where(and(like(serverSecrets.name, `${PREFIX}%`), gte(serverSecrets.createdAt, new Date(now.getTime() - SEEN_WITHIN_MS))))
  return rows
    .map((row) => ({ id: row.name.slice(PREFIX.length), ...(JSON.parse(row.value) as Omit<InstanceReport, 'id' | 'seenAt'>), seenAt: row.createdAt }))
    .sort((a, b) => a.host.localeCompare(b.host) || a.pid - b.pid)
}

/** An instance that stops says so, rather than linger in `keys show` for 90 seconds. */
export async function forgetInstance(db: Executor, id: string): Promise<void> {
  await db.delete(serverSecrets).where(eq(serverSecrets.name, PREFIX + id))
}

/** Reports of instances gone before `before` (pruned with the rest, src/server.ts). */
export async function pruneInstanceReports(db: Executor, before: Date): Promise<void> {
  await db.delete(serverSecrets).where(and(like(serverSecrets.name, `${PREFIX}%`), lt(serverSecrets.createdAt, before)))
}
