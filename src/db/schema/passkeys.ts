/** Passkeys saved after a check (src/passkeys/). */
import { boolean, integer, pgTable, text } from 'drizzle-orm/pg-core'
import { instant } from './columns.ts'
import { methodClasses } from './verifications.ts'

/**
 * Passkeys saved after an approved check, for re-verification on any device holding them. Only what the
 * check proved and the key that proves the holder: the credential's public key and signature counter,
 * the threshold, the method class and the day it was proven. The pairwise subject's key lives in the
 * passkey's user handle, on the visitor's authenticator, not here.
 */
export const passkeys = pgTable('passkeys', {
  credentialId: text('credential_id').primaryKey(),
  publicKey: text('public_key').notNull(),
  signCount: integer('sign_count').notNull().default(0),
  ageOver: integer('age_over').notNull(),
  methodClass: text('method_class', { enum: methodClasses }).notNull(),
  /** Saved after a sandbox check: never stands in for a real check at a production client. */
  sandbox: boolean('sandbox').notNull(),
  provenAt: instant('proven_at').notNull(),
  /** After this a fresh check is required: the proof ages, and a lost device should not work forever. */
  expiresAt: instant('expires_at').notNull(),
})
