/** The service's own state: its secrets and keys' records, and rate-limit windows. */
import { index, integer, pgTable, text } from 'drizzle-orm/pg-core'
import { instant } from './columns.ts'

/**
 * Server-wide secrets generated once and shared by every instance: the signing key (unless
 * SIGNING_KEY_FILE is set) and the HMAC keys for client secrets and pairwise subjects. Also, not secret,
 * the deployment's signing key in force and each running instance's report of its own
 * (src/keys/key-in-force.ts, instance-reports.ts), and the addresses the server last started with.
 */
export const serverSecrets = pgTable('server_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: instant('created_at').notNull(),
})

/**
 * Abuse limits shared by every instance: hits per key (a purpose and an address or client id) in the
 * current fixed window. One row per key; a hit in a new window starts the count again (src/ratelimit/).
 */
export const rateLimits = pgTable(
  'rate_limits',
  {
    key: text('key').primaryKey(),
    windowStart: instant('window_start').notNull(),
    hits: integer('hits').notNull(),
  },
  (t) => [index('rate_limits_window').on(t.windowStart)],
)
