import { sql } from 'drizzle-orm'
import type { JWK } from 'jose'
import { CREDENTIAL_FAILURES } from '../credentials/presentation.ts'
import {
  boolean,
  check,
  date,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  customType,
} from 'drizzle-orm/pg-core'

const instant = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 })

export const methodClasses = ['age_only', 'biometric'] as const
export type MethodClass = (typeof methodClasses)[number]

/**
 * The ways a client may accept (issue 22): a fresh check by face or digital ID, and the re-verifications
 * that stand for an earlier check (an age pass in this browser, a saved passkey).
 */
export const clientMethods = ['face', 'credential', 'passkey', 'age_pass'] as const
export type ClientMethod = (typeof clientMethods)[number]

export const verificationLevels = ['first_verification', 're_verification'] as const
export type VerificationLevel = (typeof verificationLevels)[number]

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
 * audit row: usage reports and plan limits read a few counter rows instead of the audit log.
 */
export const usageDaily = pgTable(
  'usage_daily',
  {
    clientId: text('client_id')
      .notNull()
      .references(() => clients.id),
    day: date('day', { mode: 'string' }).notNull(),
    total: integer('total').notNull().default(0),
    ageOnly: integer('age_only').notNull().default(0),
    biometric: integer('biometric').notNull().default(0),
    reverification: integer('reverification').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.day] })],
)

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

export const credentialRequestOutcomes = ['approved', 'refused'] as const

/** Why a wallet's answer was refused: one of a closed list, never free text read back. */
export const credentialFailure = pgEnum('credential_failure', CREDENTIAL_FAILURES)

/**
 * A request's own private keys, made for it and forgotten with its outcome: `jwe` opens an OpenID4VP
 * encrypted answer (`direct_post.jwt`, `dc_api.jwt`; ECDH-ES), `hpke` an ISO 18013-7 Annex C one. Two keys,
 * so that no key serves two protocols.
 */
export type ResponseKeys = { jwe: JWK; hpke: JWK }

/**
 * A digital credential request (OpenID4VP) made for one session: the wallet finds it by `state`, the
 * browser by its id. Stored hashed except the nonce, which is signed into the request. The wallet's answer
 * leaves only an outcome and, for an approval, the threshold proven: never the credential, its salts or
 * digests, which would let sites link one person across presentations.
 */
export const credentialRequests = pgTable(
  'credential_requests',
  {
    idHash: text('id_hash').primaryKey(),
    stateHash: text('state_hash').notNull().unique(),
    sessionIdHash: text('session_id_hash')
      .notNull()
      .references(() => verificationSessions.idHash, { onDelete: 'cascade' }),
    nonce: text('nonce').notNull(),
    /** Hash of the `kid` of our encryption key: how an encrypted cross-device answer (`response=<JWE>`) finds its request. */
    responseKeyIdHash: text('response_key_id_hash').unique(),
    /** The private keys of this request's encrypted answers; null once the outcome is recorded. */
    responseKeys: jsonb('response_keys').$type<ResponseKeys>(),
    createdAt: instant('created_at').notNull(),
    expiresAt: instant('expires_at').notNull(),
    /** Set once, by the first answer: a second answer (a replay) finds it set and is refused. */
    answeredAt: instant('answered_at'),
    outcome: text('outcome', { enum: credentialRequestOutcomes }),
    /** Why a refused answer was refused, shown to the visitor in their words. */
    failure: credentialFailure('failure'),
    ageOver: integer('age_over'),
    /** Set when the browser's session completed with this answer: it completes nothing twice. */
    usedAt: instant('used_at'),
  },
  (t) => [index('credential_requests_session').on(t.sessionIdHash)],
)

export const trustSourceKinds = ['vical', 'etsi-tl'] as const
export type TrustSourceKind = (typeof trustSourceKinds)[number]

/**
 * A published list of issuers' roots that the operator imported (`ofage trust import`): an AAMVA VICAL or an
 * ETSI TS 119 612 trusted list, from a file or an https address. Its roots are in `trust_anchors`; every
 * instance reads them, so an import, a refresh or a removal takes effect everywhere without a restart.
 */
export const trustSources = pgTable('trust_sources', {
  id: text('id').primaryKey(),
  kind: text('kind', { enum: trustSourceKinds }).notNull(),
  /** Where the list is read from: an https URL (refreshed on a schedule) or a file path. */
  location: text('location').notNull().unique(),
  /** Who published it, in the list's own words: a VICAL's provider, an ETSI list's territory. */
  publisher: text('publisher').notNull(),
  /** The list's issue date, and its sequence (VICAL issue id, TSLSequenceNumber): a refresh never goes back. */
  issuedAt: instant('issued_at').notNull(),
  sequence: integer('sequence'),
  nextUpdate: instant('next_update'),
  importedAt: instant('imported_at').notNull(),
  /** When the copy in force was read and verified. */
  refreshedAt: instant('refreshed_at').notNull(),
  /** Why the last refresh kept the copy in force (a fetch or a signature failed), and when. */
  lastError: text('last_error'),
  lastErrorAt: instant('last_error_at'),
  /** When a refresh is next due; taken by one instance at a time. */
  nextRefreshAt: instant('next_refresh_at').notNull(),
})

/** A root a trust source vouches for, and for what: credential formats, and for a VICAL's IACA its doc types. */
export const trustAnchors = pgTable(
  'trust_anchors',
  {
    sourceId: text('source_id')
      .notNull()
      .references(() => trustSources.id, { onDelete: 'cascade' }),
    /** SHA-256 of the certificate, hex. */
    fingerprint: text('fingerprint').notNull(),
    /** The certificate, DER in base64. */
    certificate: text('certificate').notNull(),
    formats: text('formats').array().notNull(),
    /** The doc types an mdoc it signs may have; null: any. */
    docTypes: text('doc_types').array(),
    /** What `ofage trust list` shows: the certificate's subject, or the service's name. */
    label: text('label').notNull(),
    notAfter: instant('not_after').notNull(),
  },
  (t) => [primaryKey({ columns: [t.sourceId, t.fingerprint] })],
)

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

/**
 * Where a client hears about events (src/webhooks/): an HTTPS endpoint and its Standard Webhooks signing
 * secret, kept as it is because the service signs with it (docs/security.md).
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id')
      .notNull()
      .references(() => clients.id),
    url: text('url').notNull(),
    secret: text('secret').notNull(),
    /** The event types sent to it. */
    events: text('events').array().notNull(),
    createdAt: instant('created_at').notNull(),
  },
  // Read inside every completion's transaction: which endpoints of this client take the event.
  (t) => [index('webhook_endpoints_client').on(t.clientId)],
)

/**
 * The outbox: one row per event and endpoint, written in the transaction of the event itself, delivered
 * by the worker of any instance. `id` is the message's `webhook-id`, the same on every attempt; a lease
 * makes each attempt one instance's.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    /** The exact body that is signed and sent. */
    payload: text('payload').notNull(),
    createdAt: instant('created_at').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: instant('next_attempt_at').notNull(),
    leaseUntil: instant('lease_until'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    deliveredAt: instant('delivered_at'),
    deadAt: instant('dead_at'),
  },
  (t) => [
    // The worker's one question, "what is due?", reads only the rows still pending.
    index('webhook_deliveries_due').on(t.nextAttemptAt).where(sql`${t.deliveredAt} is null and ${t.deadAt} is null`),
    // The dashboard's list of an endpoint's deliveries, newest first, a page at a time (keyset on created_at,
    // id); and the cascade when an endpoint is removed, which otherwise reads the whole outbox.
    index('webhook_deliveries_endpoint_created').on(t.endpointId, t.createdAt, t.id),
  ],
)

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

const bytea = customType<{ data: Uint8Array<ArrayBuffer>; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => new Uint8Array(value),
})

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
