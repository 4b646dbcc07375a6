import { and, eq, gt, isNull, lt, sql } from 'drizzle-orm'
import type { Database, Executor } from '../db/client.ts'
import { verificationSessions } from '../db/schema.ts'
import type { Clock } from '../lib/clock.ts'
import { constantTimeEqual, hmacHex, randomToken, sha256Hex } from '../lib/crypto.ts'
import type { ServerKeys } from '../keys/server-keys.ts'
import type { AuthorizationRequest } from './authorize.ts'

/** Long enough to find an ID card or a well-lit spot; short enough that an abandoned tab goes stale. */
export const SESSION_LIFETIME_MS = 30 * 60_000

/** Failed checks allowed in one session before the visitor must start again from the site. */
export const MAX_FAILED_ATTEMPTS = 5

export type VerificationSession = typeof verificationSessions.$inferSelect & { id: string }

type SessionDeps = { db: Database; clock: Clock; keys: Pick<ServerKeys, 'agePassKey'> }

/**
 * The session's CSRF token, derived from its id under a server key rather than stored: the database holds
 * only its hash, so a copy of the table gives no one a token to forge a form post with.
 */
function csrfTokenFor(keys: SessionDeps['keys'], id: string): string {
  return Buffer.from(hmacHex(keys.agePassKey, `csrf:${id}`), 'hex').subarray(0, 24).toString('base64url')
}

/** Opens a session for a checked authorization request, bound to the browser holding `browserId`. */
export async function createSession(deps: SessionDeps, request: AuthorizationRequest, browserId: string): Promise<VerificationSession> {
  const id = randomToken(24)
  const now = deps.clock.now()
  const [row] = await deps.db
    .insert(verificationSessions)
    .values({
      idHash: sha256Hex(id),
      browserHash: sha256Hex(browserId),
      csrfToken: sha256Hex(csrfTokenFor(deps.keys, id)),
      clientId: request.client.id,
      redirectUri: request.redirectUri,
      state: request.state,
      ageRequired: request.ageRequired,
      codeChallenge: request.codeChallenge,
      createdAt: now,
      expiresAt: new Date(now.getTime() + SESSION_LIFETIME_MS),
    })
    .returning()
  return { ...row!, id, csrfToken: csrfTokenFor(deps.keys, id) }
}

/**
 * Finds a live session by its id, only for the browser it is bound to: a session id copied to another
 * browser (a shared link, a leaked log line) opens nothing.
 */
export async function findSession(deps: SessionDeps, id: string, browserId: string | undefined): Promise<VerificationSession | undefined> {
  if (!browserId || typeof id !== 'string' || id.length > 64) return undefined
  const [row] = await deps.db
    .select()
    .from(verificationSessions)
    .where(and(eq(verificationSessions.idHash, sha256Hex(id)), gt(verificationSessions.expiresAt, deps.clock.now())))
  if (!row || !constantTimeEqual(row.browserHash, sha256Hex(browserId))) return undefined
  return { ...row, id, csrfToken: csrfTokenFor(deps.keys, id) }
}

export function checkCsrfToken(session: VerificationSession, presented: unknown): boolean {
  return typeof presented === 'string' && constantTimeEqual(presented, session.csrfToken)
}

/**
 * Takes one of the session's attempts before a check runs, atomically: of any number of posts racing, at
 * most the attempts left get one, so a burst cannot run more checks than the limit allows. Returns the
 * attempts used with this one, or undefined when none is left. A check that must not count gives it back.
 */
export async function reserveAttempt(db: Database, session: VerificationSession): Promise<number | undefined> {
  const [row] = await db
    .update(verificationSessions)
    .set({ failedAttempts: sql`${verificationSessions.failedAttempts} + 1` })
    .where(and(eq(verificationSessions.idHash, session.idHash), lt(verificationSessions.failedAttempts, MAX_FAILED_ATTEMPTS)))
    .returning({ failedAttempts: verificationSessions.failedAttempts })
  return row?.failedAttempts
}

/** Gives back an attempt taken for a check that does not count (an unreadable picture, a busy estimator). */
export async function refundAttempt(db: Database, session: VerificationSession): Promise<void> {
  await db
    .update(verificationSessions)
    .set({ failedAttempts: sql`greatest(${verificationSessions.failedAttempts} - 1, 0)` })
    .where(eq(verificationSessions.idHash, session.idHash))
}

/**
 * Marks the session complete, once: of two submissions racing (a double click), only one gets `true`
 * and goes on to issue a code. Run inside the code's transaction (`deps.db` a transaction), so the mark
 * and the code commit together or not at all.
 */
export async function claimSession(deps: { db: Executor; clock: Clock }, session: VerificationSession): Promise<boolean> {
  const claimed = await deps.db
    .update(verificationSessions)
    .set({ completedAt: deps.clock.now() })
    .where(and(eq(verificationSessions.idHash, session.idHash), isNull(verificationSessions.completedAt)))
    .returning({ idHash: verificationSessions.idHash })
  return claimed.length === 1
}

export async function pruneExpiredSessions(db: Database, before: Date): Promise<number> {
  const deleted = await db
    .delete(verificationSessions)
    .where(lt(verificationSessions.expiresAt, before))
    .returning({ idHash: verificationSessions.idHash })
  return deleted.length
}
