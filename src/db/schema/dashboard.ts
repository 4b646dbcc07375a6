/** Dashboard users, their sessions and passkeys (src/dashboard/). */
import { sql } from 'drizzle-orm'
import { index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { instant } from './columns.ts'
import { clients } from './clients.ts'

/**
 * People who sign in to a client's dashboard (src/dashboard/): each belongs to one client and sees only its
 * rows. An operator creates them (`ofage users create`); the password is set through a one-time link whose
 * token is stored only as a SHA-256 hash, and the password only as an argon2id hash.
 */
export const dashboardUsers = pgTable(
  'dashboard_users',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => clients.id),
    /** As the operator typed it; unique whatever its case (the index on lower(email)). */
    email: text('email').notNull(),
    /** argon2id (Bun.password); null until the user sets one through their link. */
    passwordHash: text('password_hash'),
    /** SHA-256 of the set-password link's token, until it is used or replaced; one link per user at a time. */
    passwordTokenHash: text('password_token_hash'),
    passwordTokenExpiresAt: instant('password_token_expires_at'),
    createdAt: instant('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('dashboard_users_email').on(sql`lower(${t.email})`),
    uniqueIndex('dashboard_users_password_token').on(t.passwordTokenHash),
    index('dashboard_users_client').on(t.clientId),
  ],
)

/**
 * Signed-in dashboard sessions. The cookie holds a random token; only its SHA-256 is kept, so a copy of
 * this table signs no one in. A session ends at `expires_at` (absolute) or after a while unused (idle,
 * from `last_seen_at`), and with its user.
 */
export const dashboardSessions = pgTable(
  'dashboard_sessions',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => dashboardUsers.id, { onDelete: 'cascade' }),
    createdAt: instant('created_at').notNull(),
    expiresAt: instant('expires_at').notNull(),
    lastSeenAt: instant('last_seen_at').notNull(),
  },
  (t) => [index('dashboard_sessions_user').on(t.userId), index('dashboard_sessions_expires').on(t.expiresAt)],
)

/**
 * Passkeys a dashboard user signs in with instead of a password: the credential's public key and counter,
 * nothing else from the authenticator. They go with their user. Where each was added is kept coarsely, for
 * its owner to recognise (or not) on the settings page: a browser and system name, and the network (IPv4
 * /24, IPv6 /48), never the user agent or the address itself.
 */
export const dashboardPasskeys = pgTable(
  'dashboard_passkeys',
  {
    credentialId: text('credential_id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => dashboardUsers.id, { onDelete: 'cascade' }),
    /** The COSE public key, base64url. */
    publicKey: text('public_key').notNull(),
    signCount: integer('sign_count').notNull(),
    createdAt: instant('created_at').notNull(),
    lastUsedAt: instant('last_used_at'),
    /** "Firefox, Linux": names from a fixed list, null when the user agent named none of them (or before 0013). */
    addedDevice: text('added_device'),
    /** "203.0.113.0/24", "2001:db8:85a3::/48": null for a request with no address (or before 0013). */
    addedNetwork: text('added_network'),
  },
  (t) => [index('dashboard_passkeys_user').on(t.userId)],
)

/**
 * Live WebAuthn challenges of the dashboard, as SHA-256 of (purpose, what the ceremony is bound to: the
 * session or the pre-session cookie, the challenge): used up once, gone after two minutes.
 */
export const dashboardPasskeyChallenges = pgTable(
  'dashboard_passkey_challenges',
  {
    challengeHash: text('challenge_hash').primaryKey(),
    expiresAt: instant('expires_at').notNull(),
  },
  (t) => [index('dashboard_passkey_challenges_expires').on(t.expiresAt)],
)
