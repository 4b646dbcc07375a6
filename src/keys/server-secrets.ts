import { eq } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { serverSecrets } from '../db/schema.ts'

/**
 * Returns the named server secret, creating it with `make` the first time. Instances starting together
 * race on the insert; `on conflict do nothing` plus a read makes every one of them use the winner's value.
 */
export async function getOrCreateSecret(db: Database, name: string, make: () => string, now: Date): Promise<string> {
  await db.insert(serverSecrets).values({ name, value: make(), createdAt: now }).onConflictDoNothing()
  const [row] = await db.select({ value: serverSecrets.value }).from(serverSecrets).where(eq(serverSecrets.name, name))
  if (!row) throw new Error(`server secret ${name} vanished after insert`)
  return row.value
}

/** The named server secret, or undefined before anyone created it. */
export async function findSecret(db: Database, name: string): Promise<string | undefined> {
  const [row] = await db.select({ value: serverSecrets.value }).from(serverSecrets).where(eq(serverSecrets.name, name))
  return row?.value
}

/**
 * Writes what the server last started with under `name` (not a secret: its addresses),
 * as JSON, replacing the last start's; the last server started wins.
 */
export async function writeStartRecord(db: Database, name: string, value: object, now: Date): Promise<void> {
  const text = JSON.stringify(value)
  await db
    .insert(serverSecrets)
    .values({ name, value: text, createdAt: now })
    .onConflictDoUpdate({ target: serverSecrets.name, set: { value: text, createdAt: now } })
}

/** What {@link writeStartRecord} wrote under `name`, and when; undefined before any server started. */
export async function readStartRecord<T>(db: Database, name: string): Promise<{ value: T; recordedAt: Date } | undefined> {
  const [row] = await db.select().from(serverSecrets).where(eq(serverSecrets.name, name))
  return row && { value: JSON.parse(row.value) as T, recordedAt: row.createdAt }
}
