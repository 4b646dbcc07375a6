import { and, eq, gt, sql } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { verificationSessions } from '../db/schema.ts'
import type { Clock } from '../lib/clock.ts'
import { randomToken, sha256Hex } from '../lib/crypto.ts'
import { CHALLENGE_LIFETIME_MS, formatChallenge, parseChallenge, pickChallenge, type Challenge } from '../liveness/challenge.ts'
import type { VerificationSession } from './sessions.ts'

type ChallengeDeps = { db: Database; clock: Clock; pickChallenge?: () => Challenge }

export type IssuedChallenge = { id: string; challenge: Challenge; expiresAt: Date }

/** A challenge as answered: what it asked, and how long after it was issued the answer came. */
export type AnsweredChallenge = { challenge: Challenge; elapsedMs: number }

/**
 * Issues the session's live challenge, replacing any earlier one: the page asks for one each time the
 * visitor starts a capture. Only the hash of its id is stored; the poses and their timing are chosen here, never by the page.
 * Replacing a challenge that was never answered counts as a failed attempt: otherwise anyone holding a
 * recording of one sequence could draw challenges for free until that sequence came up.
 */
export async function issueFaceChallenge(deps: ChallengeDeps, session: VerificationSession): Promise<IssuedChallenge> {
  const id = randomToken(18)
  const challenge = deps.pickChallenge?.() ?? pickChallenge()
  const expiresAt = new Date(deps.clock.now().getTime() + CHALLENGE_LIFETIME_MS)
  const unanswered = sql`case when ${verificationSessions.challengeHash} is null then 0 else 1 end`
  await deps.db
    .update(verificationSessions)
    .set({
      challengeHash: sha256Hex(id),
      challengeTurns: formatChallenge(challenge),
      challengeExpiresAt: expiresAt,
      failedAttempts: sql`${verificationSessions.failedAttempts} + ${unanswered}`,
    })
    .where(eq(verificationSessions.idHash, session.idHash))
  return { id, challenge, expiresAt }
}

/**
 * Uses up the session's challenge and returns it with the time since it was issued (its expiry less
 * the lifetime), or undefined when `id` is not this session's live challenge (unknown, another
 * session's, expired, already answered). One conditional update, so of two captures racing with the
 * same id only one gets it.
 */
export async function consumeFaceChallenge(deps: ChallengeDeps, session: VerificationSession, id: string): Promise<AnsweredChallenge | undefined> {
  if (!id || id.length > 64) return undefined
  const [row] = await deps.db
    .update(verificationSessions)
    .set({ challengeHash: null })
    .where(
      and(
        eq(verificationSessions.idHash, session.idHash),
        eq(verificationSessions.challengeHash, sha256Hex(id)),
        gt(verificationSessions.challengeExpiresAt, deps.clock.now()),
      ),
    )
    .returning({ stored: verificationSessions.challengeTurns, expiresAt: verificationSessions.challengeExpiresAt })
  // Only the hash is cleared, which alone makes the challenge unusable: the expiry read back is the issued one.
  const challenge = parseChallenge(row?.stored)
  if (!challenge || !row) return undefined
  return { challenge, elapsedMs: deps.clock.now().getTime() - (row.expiresAt ?? new Date(0)).getTime() + CHALLENGE_LIFETIME_MS }
}

/** Stops offering a method in this session (a face that could not be placed will not place on a retry). */
export async function closeMethod(db: Database, session: VerificationSession, method: string): Promise<void> {
  await db
    .update(verificationSessions)
    .set({ closedMethods: sql`array_append(${verificationSessions.closedMethods}, ${method})` })
    .where(and(eq(verificationSessions.idHash, session.idHash), sql`not (${method} = any(${verificationSessions.closedMethods}))`))
}
