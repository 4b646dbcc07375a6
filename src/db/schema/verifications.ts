/** A verification's life: the page's sessions, pushed requests, codes, the audit row, usage, age passes. */
import { sql } from 'drizzle-orm'
import { boolean, date, index, integer, pgTable, primaryKey, smallint, text, uuid } from 'drizzle-orm/pg-core'
import { instant } from './columns.ts'
import { clients } from './clients.ts'

/** How many counter rows a client's day may be spread over (usageDaily). */
export const USAGE_SHARDS = 16

export const methodClasses = ['age_only', 'biometric'] as const

export type MethodClass = (typeof methodClasses)[number]

export const verificationLevels = ['first_verification', 're_verification'] as const

export type VerificationLevel = (typeof verificationLevels)[number]

/**
 * One row per approved verification: the audit trail behind `transaction_id`. Nothing personal: the
 * subject is a pairwise pseudonym, and no evidence of the check is kept.
 */
export const auditLogs = pgTable(
  'audit_logs',
  {
    transactionId: uuid('transaction_id').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => clients.id),
    subject: text('subject').notNull(),
    methodClass: text('method_class', { enum: methodClasses }).notNull(),
    verificationLevel: text('verification_level', { enum: verificationLevels }).notNull(),
    ageOver: integer('age_over').notNull(),
    /** Which method approved it (`sandbox`, `face`, `age_pass`, …), and the face check's buffer if any. */
    method: text('method'),
    ageBuffer: integer('age_buffer'),
    createdAt: instant('created_at').notNull(),
    /** Set when the code for this verification was replayed (RFC 6749 §4.1.2): its tokens stop validating. */
    revokedAt: instant('revoked_at'),
  },
  (t) => [
    index('audit_logs_client_created').on(t.clientId, t.createdAt),
    // The dashboard's filtered audit list: one backward range per (class, level), see auditPageQuery.
    index('audit_logs_client_kind_created').on(t.clientId, t.methodClass, t.verificationLevel, t.createdAt),
  ],
)

/** Authorization codes, stored only as SHA-256 of the code (they are 256-bit random values). */
export const authCodes = pgTable(
  'auth_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => clients.id),
    transactionId: uuid('transaction_id')
      .notNull()
      .references(() => auditLogs.transactionId),
    redirectUri: text('redirect_uri').notNull(),
    state: text('state'),
    /** The PKCE challenge of the authorization request (S256, RFC 7636), which the exchange's verifier must answer. */
    codeChallenge: text('code_challenge'),
    createdAt: instant('created_at').notNull(),
    expiresAt: instant('expires_at').notNull(),
    usedAt: instant('used_at'),
  },
  (t) => [index('auth_codes_expires').on(t.expiresAt)],
)

/**
 * Pushed authorization requests (RFC 9126): the parameters a client's backend posted, found again by the
 * hash of the `request_uri` it got back, so the visitor's URL carries nothing they could edit.
 */
export const pushedRequests = pgTable(
  'pushed_requests',
  {
    referenceHash: text('reference_hash').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => clients.id),
    redirectUri: text('redirect_uri').notNull(),
    state: text('state'),
    ageRequired: integer('age_required').notNull(),
    codeChallenge: text('code_challenge'),
    createdAt: instant('created_at').notNull(),
    expiresAt: instant('expires_at').notNull(),
  },
  (t) => [index('pushed_requests_expires').on(t.expiresAt)],
)

/**
 * Approved verifications counted per client and UTC day, updated in the transaction that writes the
 * audit row: usage reports and plan limits read a few counter rows instead of the audit log. A day's count
 * is the sum of up to {@link USAGE_SHARDS} rows, one per `shard`, so that completions committing at once
 * do not all wait for the one row (src/usage/counters.ts).
 */
export const usageDaily = pgTable(
  'usage_daily',
  {
    clientId: text('client_id')
      .notNull()
      .references(() => clients.id),
    day: date('day', { mode: 'string' }).notNull(),
    shard: smallint('shard').notNull().default(0),
    total: integer('total').notNull().default(0),
    ageOnly: integer('age_only').notNull().default(0),
    biometric: integer('biometric').notNull().default(0),
    reverification: integer('reverification').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.day, t.shard] })],
)

/**
 * A pending authorization request, held server-side while the visitor is on the page: nothing the
 * visitor edits in the page can change the client, redirect URI, state or threshold. Bound to the
 * browser that opened it by the hash of a cookie; its id is stored hashed as well.
 */
export const verificationSessions = pgTable(
  'verification_sessions',
  {
    idHash: text('id_hash').primaryKey(),
    browserHash: text('browser_hash').notNull(),
    /** SHA-256 of the CSRF token; the token itself is derived from the session id (sessions.ts). */
    csrfToken: text('csrf_token').notNull(),
    clientId: text('client_id')
      .notNull()
      .references(() => clients.id),
    redirectUri: text('redirect_uri').notNull(),
    state: text('state'),
    ageRequired: integer('age_required').notNull(),
    /** The PKCE challenge of the authorization request, handed on to the code. */
    codeChallenge: text('code_challenge'),
    failedAttempts: integer('failed_attempts').notNull().default(0),
    createdAt: instant('created_at').notNull(),
    expiresAt: instant('expires_at').notNull(),
    completedAt: instant('completed_at'),
    /**
     * The face check's live challenge (src/liveness/): the hash of its one-time id, the turns asked for
     * ("left,right") and when it stops being accepted. Cleared when a capture answers it.
     */
    challengeHash: text('challenge_hash'),
    challengeTurns: text('challenge_turns'),
    challengeExpiresAt: instant('challenge_expires_at'),
    /** Methods this session no longer offers: a face check that could not confirm the age is not retried. */
    closedMethods: text('closed_methods').array().notNull().default(sql`'{}'::text[]`),
    /** The WebAuthn challenge of a passkey ceremony on this page (src/passkeys/): its hash, until answered. */
    passkeyChallengeHash: text('passkey_challenge_hash'),
    passkeyChallengeExpiresAt: instant('passkey_challenge_expires_at'),
  },
  (t) => [index('verification_sessions_expires').on(t.expiresAt)],
)

/**
 * Age passes: what lets a browser that passed a check re-verify without a new one. The signed cookie
 * carries the pass id; this row makes it revocable. Nothing personal: an age and a method class.
 */
export const agePasses = pgTable('age_passes', {
  id: uuid('id').primaryKey(),
  ageOver: integer('age_over').notNull(),
  methodClass: text('method_class', { enum: methodClasses }).notNull(),
  /** Earned on a sandbox client's test form: it never stands in for a real check at a production client. */
  sandbox: boolean('sandbox').notNull(),
  createdAt: instant('created_at').notNull(),
  expiresAt: instant('expires_at').notNull(),
  revokedAt: instant('revoked_at'),
})
