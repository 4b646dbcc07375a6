import { and, count, eq, gt, isNotNull, isNull, type SQL } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { credentialRequests, verificationSessions, type ResponseKeys } from '../db/schema.ts'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import { generateResponseEncryptionKey, type ResponseEncryptionPublicKey } from '../credentials/openid4vp/response-encryption-key.ts'
import type { CredentialFailure } from '../credentials/presentation.ts'
import type { Clock } from '../lib/clock.ts'
import { randomToken, sha256Hex } from '../lib/crypto.ts'
import type { VerificationSession } from './sessions.ts'

/** Long enough to find the phone and open the wallet; a stale QR code on a screen stops working. */
export const CREDENTIAL_REQUEST_LIFETIME_MS = 5 * 60_000

/** Requests one session may open: each is a row, and a page reloading in a loop must not grow the table. */
export const MAX_REQUESTS_PER_SESSION = 20

type RequestDeps = { db: Database; clock: Clock }

/** The public halves of a request's keys, for the requests we send: `jwe` carries its `kid`. */
export type RequestPublicKeys = { jwe: ResponseEncryptionPublicKey; hpke: JWK }

export type IssuedRequest = { id: string; state: string; nonce: string; expiresAt: Date; publicKeys: RequestPublicKeys }

export type CredentialRequest = typeof credentialRequests.$inferSelect & {
  /** The session's threshold and client, read with the request so the wallet's answer needs no cookie. */
  ageRequired: number
  clientId: string
}

/**
 * Opens a wallet request for a session. The browser keeps the id (to ask how it went); the wallet gets
 * the state and nonce through the signed request object. Only hashes of id and state are stored.
 */
export async function createCredentialRequest(deps: RequestDeps, session: VerificationSession): Promise<IssuedRequest | undefined> {
  const [open] = await deps.db.select({ n: count() }).from(credentialRequests).where(eq(credentialRequests.sessionIdHash, session.idHash))
  if ((open?.n ?? 0) >= MAX_REQUESTS_PER_SESSION) return undefined
  const now = deps.clock.now()
  const [jwe, hpke] = await Promise.all([generateResponseEncryptionKey(), generateP256Key()])
  const issued = {
    id: randomToken(18),
    state: randomToken(24),
    nonce: randomToken(24),
    expiresAt: new Date(now.getTime() + CREDENTIAL_REQUEST_LIFETIME_MS),
    publicKeys: { jwe: jwe.publicKey, hpke: hpke.publicKey },
  }
  await deps.db.insert(credentialRequests).values({
    idHash: sha256Hex(issued.id),
    stateHash: sha256Hex(issued.state),
    sessionIdHash: session.idHash,
    nonce: issued.nonce,
    responseKeyIdHash: sha256Hex(jwe.publicKey.kid),
    responseKeys: { jwe: jwe.privateKey, hpke: hpke.privateKey } satisfies ResponseKeys,
    createdAt: now,
    expiresAt: issued.expiresAt,
  })
  return issued
}

/** A fresh P-256 key pair (ECDH), private and public as JWKs: the recipient key of an Annex C answer. */
async function generateP256Key(): Promise<{ privateKey: JWK; publicKey: JWK }> {
  const pair = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true })
  return { privateKey: await exportJWK(pair.privateKey), publicKey: await exportJWK(pair.publicKey) }
}

/**
 * The live request a wallet refers to by `state`: not expired, not answered yet, and its session still
 * open. Anything else (a replay, a stale QR code, a completed session) finds nothing.
 */
export async function findOpenRequest(deps: RequestDeps, state: string): Promise<CredentialRequest | undefined> {
  if (!state || state.length > 64) return undefined
  return findOpen(deps, eq(credentialRequests.stateHash, sha256Hex(state)))
}

/**
 * The live request whose encryption key has this `kid`: an encrypted cross-device answer (`response=<JWE>`)
 * names our key in its header, its `state` is inside the ciphertext.
 */
export async function findOpenRequestByKeyId(deps: RequestDeps, keyId: string): Promise<CredentialRequest | undefined> {
  if (!keyId || keyId.length > 64) return undefined
  return findOpen(deps, eq(credentialRequests.responseKeyIdHash, sha256Hex(keyId)))
}

async function findOpen(deps: RequestDeps, match: SQL): Promise<CredentialRequest | undefined> {
  const now = deps.clock.now()
  const [row] = await deps.db
    .select({ request: credentialRequests, ageRequired: verificationSessions.ageRequired, clientId: verificationSessions.clientId })
    .from(credentialRequests)
    .innerJoin(verificationSessions, eq(verificationSessions.idHash, credentialRequests.sessionIdHash))
    .where(
      and(
        match,
        gt(credentialRequests.expiresAt, now),
        isNull(credentialRequests.answeredAt),
        isNull(verificationSessions.completedAt),
        gt(verificationSessions.expiresAt, now),
      ),
    )
  return row && { ...row.request, ageRequired: row.ageRequired, clientId: row.clientId }
}

/**
 * Claims a request for one answer, before that answer is verified: one conditional update, so that of
 * any number of answers posted at once exactly one goes on to verification and the rest are refused
 * without it (issue 19: up to 98 of 300–600 concurrent posts were verified before the state closed, RSS
 * 129 → 211 MiB). The claim sets `answered_at`; the outcome follows with {@link recordOutcome}. Until
 * then the request reads as pending to the page, and cannot be taken for a completion.
 */
export async function claimRequest(deps: RequestDeps, request: CredentialRequest): Promise<boolean> {
  const now = deps.clock.now()
  const claimed = await deps.db
    .update(credentialRequests)
    .set({ answeredAt: now })
    .where(and(eq(credentialRequests.idHash, request.idHash), isNull(credentialRequests.answeredAt), gt(credentialRequests.expiresAt, now)))
    .returning({ idHash: credentialRequests.idHash })
  return claimed.length === 1
}

/** Gives a claim back when its answer could not be verified at all (an internal failure, not a refusal). */
export async function releaseClaim(deps: RequestDeps, request: CredentialRequest): Promise<void> {
  await deps.db
    .update(credentialRequests)
    .set({ answeredAt: null })
    .where(and(eq(credentialRequests.idHash, request.idHash), isNull(credentialRequests.outcome)))
}

/**
 * Records the verified answer of a claimed request: an approval keeps only the threshold proven; a
 * refusal, why.
 */
export async function recordOutcome(
  deps: RequestDeps,
  request: CredentialRequest,
  answer: { outcome: 'approved'; ageOver: number } | { outcome: 'refused'; failure: CredentialFailure },
): Promise<void> {
  await deps.db
    .update(credentialRequests)
    .set({
      outcome: answer.outcome,
      ageOver: answer.outcome === 'approved' ? answer.ageOver : null,
      failure: answer.outcome === 'refused' ? answer.failure : null,
      // Its answer is in: nothing is left for the keys to open.
      responseKeys: null,
    })
    .where(and(eq(credentialRequests.idHash, request.idHash), isNotNull(credentialRequests.answeredAt), isNull(credentialRequests.outcome)))
}

export type RequestStatus = { status: 'pending' | 'expired' } | { status: 'answered'; outcome: 'approved' | 'refused'; failure: CredentialFailure | null }

/** How a request of this session stands, for the page's script (the browser holds the request id). */
export async function requestStatus(deps: RequestDeps, session: VerificationSession, id: string): Promise<RequestStatus | undefined> {
  const row = await findForSession(deps, session, id)
  if (!row) return undefined
  if (row.answeredAt && row.outcome) return { status: 'answered', outcome: row.outcome, failure: row.failure }
  return { status: row.expiresAt > deps.clock.now() ? 'pending' : 'expired' }
}

/**
 * Takes the answer of a request for this session's completion, once: two tabs posting the same request
 * id cannot complete twice. Undefined when it is not this session's, not answered, or already used.
 */
export async function takeAnswer(deps: RequestDeps, session: VerificationSession, id: string): Promise<CredentialRequest | undefined> {
  if (!id || id.length > 64) return undefined
  const [row] = await deps.db
    .update(credentialRequests)
    .set({ usedAt: deps.clock.now() })
    .where(
      and(
        eq(credentialRequests.idHash, sha256Hex(id)),
        eq(credentialRequests.sessionIdHash, session.idHash),
        isNotNull(credentialRequests.answeredAt),
        // Claimed but still being verified is not answered yet.
        isNotNull(credentialRequests.outcome),
        isNull(credentialRequests.usedAt),
      ),
    )
    .returning()
  return row && { ...row, ageRequired: session.ageRequired, clientId: session.clientId }
}

async function findForSession(deps: RequestDeps, session: VerificationSession, id: string) {
  if (!id || id.length > 64) return undefined
  const [row] = await deps.db
    .select()
    .from(credentialRequests)
    .where(and(eq(credentialRequests.idHash, sha256Hex(id)), eq(credentialRequests.sessionIdHash, session.idHash)))
  return row
}

/** The open request of this session with this id, for an answer the page's script brings (same device). */
export async function findSessionRequest(deps: RequestDeps, session: VerificationSession, id: string): Promise<CredentialRequest | undefined> {
  const row = await findForSession(deps, session, id)
  if (!row || row.answeredAt || row.expiresAt <= deps.clock.now()) return undefined
  return { ...row, ageRequired: session.ageRequired, clientId: session.clientId }
}
