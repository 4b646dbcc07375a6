/** The sites that integrate: clients, the hosts they gate and their logos (src/clients/, src/gate/, src/branding/). */
import { sql } from 'drizzle-orm'
import { boolean, check, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core'
import { instant, bytea } from './columns.ts'

/**
 * The ways a client may accept (issue 22): a fresh check by face or digital ID, and the re-verifications
 * that stand for an earlier check (an age pass in this browser, a saved passkey).
 */
export const clientMethods = ['face', 'credential', 'passkey', 'age_pass'] as const

export type ClientMethod = (typeof clientMethods)[number]

export const clientStatuses = ['active', 'suspended'] as const

export type ClientStatus = (typeof clientStatuses)[number]

/** Integrating sites. Only a keyed hash of the secret is kept (DESIGN.md, "Clients"). */
export const clients = pgTable(
  'clients',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    secretHash: text('secret_hash').notNull(),
    /** After a rotation with an overlap, the old secret's hash, accepted until `previousSecretExpiresAt`. */
    previousSecretHash: text('previous_secret_hash'),
    previousSecretExpiresAt: instant('previous_secret_expires_at'),
    /** Exact-match allow list: scheme, host, port and path compared as strings. */
    redirectUris: text('redirect_uris').array().notNull(),
    status: text('status', { enum: clientStatuses }).notNull().default('active'),
    minAge: integer('min_age'),
    /** Approved verifications per UTC calendar month; null is unlimited. */
    verificationLimit: integer('verification_limit'),
    sandbox: boolean('sandbox').notNull().default(false),
    /** Safety buffer in years for the face check; null uses the deployment's FACE_AGE_BUFFER. */
    faceBuffer: integer('face_buffer'),
    /** The methods the client accepts; the page offers no other, and a re-verification counts only for these. */
    methods: text('methods', { enum: clientMethods }).array().notNull().default(sql`array['face', 'credential', 'passkey', 'age_pass']::text[]`),
    /** Where the page's "Back to {site}" link leads; null: the origin of the request's redirect URI. */
    homeUrl: text('home_url'),
    /** Every authorization request of this client must carry a PKCE challenge (RFC 7636). */
    requirePkce: boolean('require_pkce').notNull().default(false),
    /** Only pushed authorization requests (RFC 9126) open the page: parameters in a plain URL are refused. */
    requirePushedRequests: boolean('require_pushed_requests').notNull().default(false),
    /** The age the gate asks for on this client's gated hosts; null: the client's min_age, else 18. */
    gateAge: integer('gate_age'),
    /** How long a gate cookie lets a browser through without a new check. */
    gateTtlSeconds: integer('gate_ttl_seconds').notNull().default(30 * 86_400),
    /** The site's look on the hosted page (src/branding/): the name shown instead of `name`, when set. */
    displayName: text('display_name'),
    /** `#rrggbb`, lower case, readable as white text on it and as link text on the page (WCAG 2.2 AA). */
    accentColour: text('accent_colour'),
    /** The site's privacy policy, linked under the page's privacy notice. */
    privacyUrl: text('privacy_url'),
    createdAt: instant('created_at').notNull(),
  },
  (t) => [
    check('clients_display_name_length', sql`${t.displayName} is null or char_length(${t.displayName}) between 1 and 80`),
    check('clients_accent_colour_shape', sql`${t.accentColour} is null or ${t.accentColour} ~ '^#[0-9a-f]{6}$'`),
    check('clients_gate_age_range', sql`${t.gateAge} is null or ${t.gateAge} between 1 and 99`),
    check('clients_gate_ttl_range', sql`${t.gateTtlSeconds} between 60 and 34560000`),
    check('clients_face_buffer_range', sql`${t.faceBuffer} is null or ${t.faceBuffer} between 0 and 30`),
    check('clients_methods_known', sql`cardinality(${t.methods}) > 0 and ${t.methods} <@ array['face', 'credential', 'passkey', 'age_pass']::text[]`),
    check('clients_min_age_range', sql`${t.minAge} is null or ${t.minAge} between 1 and 99`),
    check('clients_limit_non_negative', sql`${t.verificationLimit} is null or ${t.verificationLimit} >= 0`),
  ],
)

/**
 * The sites a client gates (src/gate/): the origin a reverse proxy in front of them serves. Several clients
 * may claim one origin: a claim alone opens nothing, the proxy's configuration names the client that
 * answers (src/gate/gate-match.ts), so that no one locks a site's owner out by typing its name first. Its
 * `/.ofage/callback` is among the client's redirect URIs while the row exists.
 */
export const gateHosts = pgTable('gate_hosts', {
  /** scheme://host[:port], as the URL parser writes an origin. */
  origin: text('origin').notNull(),
  clientId: text('client_id')
    .notNull()
    .references(() => clients.id, { onDelete: 'cascade' }),
  createdAt: instant('created_at').notNull(),
}, (t) => [primaryKey({ columns: [t.origin, t.clientId] }), index('gate_hosts_client').on(t.clientId)])

/**
 * A client's logo (src/branding/): a PNG we encoded ourselves from the upload's pixels, nothing of the upload's
 * own bytes. In the database, so that every instance serves it and the embedded default needs no files.
 */
export const clientLogos = pgTable('client_logos', {
  clientId: text('client_id')
    .primaryKey()
    .references(() => clients.id, { onDelete: 'cascade' }),
  png: bytea('png').notNull(),
  /** SHA-256 of `png`, hex: the version in the logo's URL. */
  sha256: text('sha256').notNull(),
  width: integer('width').notNull(),
  height: integer('height').notNull(),
  createdAt: instant('created_at').notNull(),
}, (t) => [
  // The display bounds of src/branding/logo-image.ts: what we encode never exceeds them.
  check('client_logos_bounds', sql`${t.width} between 1 and 1024 and ${t.height} between 1 and 256 and octet_length(${t.png}) <= 1048576`),
])
