import { and, eq, gt } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { verificationSessions } from '../db/schema.ts'
import type { Clock } from '../lib/clock.ts'
import { sha256Hex } from '../lib/crypto.ts'
import { PASSKEY_CHALLENGE_LIFETIME_MS } from './relying-party.ts'

type ChallengeDeps = { db: Database; clock: Clock }

/**
 * What a challenge was issued for. It is hashed with the challenge, so an answer made for one ceremony
 * cannot be posted to another (a "use" assertion to the delete route), and a registration is bound to the
 * age pass whose person key went into the passkey's user handle.
 */
export type ChallengePurpose = { kind: 'verify' } | { kind: 'delete' } | { kind: 'register'; passId: string }

function challengeHash(purpose: ChallengePurpose, challenge: string): string {
  const scope = purpose.kind === 'register' ? `register:${purpose.passId}` : purpose.kind
  return sha256Hex(`${scope}:${challenge}`)
}

/**
 * Stores the session's passkey challenge (a base64url string from the options), replacing any earlier one:
 * one ceremony at a time per page. Only its hash is kept, with a two-minute expiry.
 */
export async function storePasskeyChallenge(deps: ChallengeDeps, sessionIdHash: string, purpose: ChallengePurpose, challenge: string): Promise<void> {
  await deps.db
    .update(verificationSessions)
    .set({
      passkeyChallengeHash: challengeHash(purpose, challenge),
      passkeyChallengeExpiresAt: new Date(deps.clock.now().getTime() + PASSKEY_CHALLENGE_LIFETIME_MS),
    })
    .where(eq(verificationSessions.idHash, sessionIdHash))
}

/**
 * Uses up the session's challenge: true only when `challenge` is this session's live one, issued for this
 * purpose. One conditional update, so of two answers racing with the same challenge only one passes, and
 * an answer posted again finds nothing.
 */
export async function consumePasskeyChallenge(deps: ChallengeDeps, sessionIdHash: string, purpose: ChallengePurpose, challenge: string): Promise<boolean> {
  if (!challenge || challenge.length > 128) return false
  const rows = await deps.db
    .update(verificationSessions)
    .set({ passkeyChallengeHash: null, passkeyChallengeExpiresAt: null })
    .where(
      and(
        eq(verificationSessions.idHash, sessionIdHash),
        eq(verificationSessions.passkeyChallengeHash, challengeHash(purpose, challenge)),
        gt(verificationSessions.passkeyChallengeExpiresAt, deps.clock.now()),
      ),
    )
    .returning({ idHash: verificationSessions.idHash })
  return rows.length === 1
}
