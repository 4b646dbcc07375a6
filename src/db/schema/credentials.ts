/** The digital ID: wallet requests and their answers, and the trust lists imported (src/credentials/). */
import type { JWK } from 'jose'
import { CREDENTIAL_FAILURES } from '../../credentials/presentation.ts'
import { index, integer, jsonb, pgEnum, pgTable, primaryKey, text } from 'drizzle-orm/pg-core'
import { instant } from './columns.ts'
import { verificationSessions } from './verifications.ts'

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
