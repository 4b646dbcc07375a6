import { and, eq, lt } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { passkeys, type MethodClass } from '../db/schema.ts'
import { storedCounter } from './webauthn.ts'

/**
 * How long a saved passkey re-verifies, counted from the check it stands for (not from when it was saved):
 * the proof ages, and a lost or sold device should not pass forever. After it, a fresh check is required.
 */
export const PASSKEY_LIFETIME_MS = 365 * 24 * 60 * 60_000


export type Passkey = typeof passkeys.$inferSelect

export type NewPasskey = {
  credentialId: string
  /** The COSE public key, base64url. */
  publicKey: string
  signCount: number
  ageOver: number
  methodClass: MethodClass
  sandbox: boolean
  provenAt: Date
}

/** Saves a passkey; false when one with this credential id exists already (nothing is overwritten). */
export async function insertPasskey(db: Database, passkey: NewPasskey): Promise<boolean> {
  const inserted = await db
    .insert(passkeys)
    .values({
      ...passkey,
      signCount: storedCounter(passkey.signCount),
      expiresAt: new Date(passkey.provenAt.getTime() + PASSKEY_LIFETIME_MS),
    })
    .onConflictDoNothing()
    .returning({ credentialId: passkeys.credentialId })
  return inserted.length === 1
}

/** The saved passkey with this credential id (base64url, as the browser reports it), if any. */
export async function findPasskey(db: Database, credentialId: string): Promise<Passkey | undefined> {
  if (!credentialId || credentialId.length > 1400) return undefined
  const [row] = await db.select().from(passkeys).where(eq(passkeys.credentialId, credentialId))
  return row
}

/**
 * Moves the signature counter from the value read to the value just verified, only if nobody moved it
 * meanwhile: of two assertions racing from a cloned authenticator, one fails. A counter above the column's
 * range is stored at its top, which still lets a later, higher counter pass.
 */
export async function advanceCounter(db: Database, passkey: Passkey, counter: number): Promise<boolean> {
  const updated = await db
    .update(passkeys)
    .set({ signCount: storedCounter(counter) })
    .where(and(eq(passkeys.credentialId, passkey.credentialId), eq(passkeys.signCount, passkey.signCount)))
    .returning({ credentialId: passkeys.credentialId })
  return updated.length === 1
}

/** Deletes a passkey at its holder's request; true when there was one. */
export async function deletePasskey(db: Database, credentialId: string): Promise<boolean> {
  const deleted = await db.delete(passkeys).where(eq(passkeys.credentialId, credentialId)).returning({ credentialId: passkeys.credentialId })
  return deleted.length === 1
}

/** Deletes passkeys past their lifetime: they can no longer re-verify, and the key is worth nothing kept. */
export async function pruneExpiredPasskeys(db: Database, before: Date): Promise<number> {
  const deleted = await db.delete(passkeys).where(lt(passkeys.expiresAt, before)).returning({ credentialId: passkeys.credentialId })
  return deleted.length
}
