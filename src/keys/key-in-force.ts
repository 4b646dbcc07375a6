import { inArray, sql } from 'drizzle-orm'
import type { Executor } from '../db/client.ts'
import { serverSecrets } from '../db/schema.ts'

/** The row that says which key every instance signs with (not a secret: a thumbprint and a public key). */
const KEY_IN_FORCE = 'signing_key_in_force'
/** The generated key's private PEM, when the key in force is kept in the database. */
export const GENERATED_KEY = 'signing_key'
/** Announced in the transaction that puts another key in force: every instance reads the record again. */
export const SIGNING_KEY_CHANNEL = 'ofage_signing_key'

/** Where instances take the private key from: the database's `signing_key` row, or their SIGNING_KEY_FILE. */
export type KeySource = 'database' | 'file'

/**
 * The deployment's key in force, one row for every instance: the first server to start on a database
 * records its key, and only `ofage keys rotate` replaces it. An instance whose own key (its file's, or the
 * database's) is another one does not start, and a running one stops signing.
 */
export type KeyInForce = {
  thumbprint: string
  /** The public key (RFC 7517 `n`, `e`), so that any instance and `keys show` can publish and verify with it. */
  n: string
  e: string
  source: KeySource
  /** SIGNING_KEY_FILE as named by whoever put the key in force; each instance reads its own. */
  file?: string
  /** ISO 8601: when this key was put in force. */
  since: string
  /**
   * The key it replaced, still accepted by our own validation endpoints until `until` (ISO 8601): tokens it
   * signed just before the switch live 600 s. Absent after a rotation for a leak (`--leaked`).
   */
  previous?: { thumbprint: string; n: string; e: string; until: string }
}

/** What the database holds: the key in force, and the generated key's PEM when one was generated. */
export type StoredKeys = { inForce?: KeyInForce; generated?: { pem: string; createdAt: Date } }

/** Both rows in one statement, so that a rotation's two writes are never seen half done. */
export async function readStoredKeys(db: Executor): Promise<StoredKeys> {
  const rows = await db.select().from(serverSecrets).where(inArray(serverSecrets.name, [KEY_IN_FORCE, GENERATED_KEY]))
  const inForce = rows.find((row) => row.name === KEY_IN_FORCE)
  const generated = rows.find((row) => row.name === GENERATED_KEY)
  return {
    ...(inForce && { inForce: JSON.parse(inForce.value) as KeyInForce }),
    ...(generated && { generated: { pem: generated.value, createdAt: generated.createdAt } }),
  }
}

/** Records `record` as the key in force unless one already is (instances starting together: the first wins). */
export async function claimKeyInForce(db: Executor, record: KeyInForce): Promise<void> {
  await db.insert(serverSecrets).values({ name: KEY_IN_FORCE, value: JSON.stringify(record), createdAt: new Date(record.since) }).onConflictDoNothing()
}

/**
 * Puts another key in force, in the caller's transaction: the record, the generated key's PEM when it is
 * kept in the database, and the notice every instance hears when (and only if) the transaction commits.
 */
export async function putKeyInForce(tx: Executor, record: KeyInForce, generatedPem: string | undefined): Promise<void> {
  const since = new Date(record.since)
  const upsert = (name: string, value: string) =>
    tx.insert(serverSecrets).values({ name, value, createdAt: since }).onConflictDoUpdate({ target: serverSecrets.name, set: { value, createdAt: since } })
  await upsert(KEY_IN_FORCE, JSON.stringify(record))
  if (generatedPem !== undefined) await upsert(GENERATED_KEY, generatedPem)
  await tx.execute(sql`select pg_notify(${SIGNING_KEY_CHANNEL}, ${record.thumbprint})`)
}
