import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { and, asc, eq, gt, lt } from 'drizzle-orm'
import type { Database, Executor } from '../db/client.ts'
import { dashboardPasskeyChallenges, dashboardPasskeys } from '../db/schema.ts'
import type { Clock } from '../lib/clock.ts'
import { sha256Hex } from '../lib/crypto.ts'
import { answeredChallenge, type AuthenticationResponse, type RegistrationResponse } from '../passkeys/model.ts'
import { PASSKEY_ALGORITHMS, PASSKEY_CHALLENGE_LIFETIME_MS, type RelyingParty } from '../passkeys/relying-party.ts'
import { storedCounter, verifyAssertion, verifyNewCredential } from '../passkeys/webauthn.ts'
import type { AddedFrom } from './added-from.ts'

type PasskeyDeps = { db: Database; clock: Clock }

export type DashboardPasskey = typeof dashboardPasskeys.$inferSelect

/** A user keeps a few passkeys (a phone, a laptop, a security key), not a store of them. */
export const MAX_PASSKEYS_PER_USER = 10

/**
 * What a challenge is bound to: adding a passkey, to the signed-in session; signing in, to the browser's
 * pre-session cookie. An answer made for one cannot be posted for the other, nor from another browser.
 */
export type Ceremony = { kind: 'register'; sessionTokenHash: string } | { kind: 'sign-in'; formCookie: string }

function challengeHash(ceremony: Ceremony, challenge: string): string {
  const binding = ceremony.kind === 'register' ? ceremony.sessionTokenHash : sha256Hex(ceremony.formCookie)
  return sha256Hex(`dashboard-${ceremony.kind}:${binding}:${challenge}`)
}

async function storeChallenge(deps: PasskeyDeps, ceremony: Ceremony, challenge: string): Promise<void> {
  const now = deps.clock.now()
  // Expired challenges go as new ones come: the table holds only the last two minutes' ceremonies.
  await deps.db.delete(dashboardPasskeyChallenges).where(lt(dashboardPasskeyChallenges.expiresAt, now))
  await deps.db.insert(dashboardPasskeyChallenges).values({ challengeHash: challengeHash(ceremony, challenge), expiresAt: new Date(now.getTime() + PASSKEY_CHALLENGE_LIFETIME_MS) })
}

/** Uses up a live challenge of this ceremony: one delete, so of two answers racing with it only one passes. */
async function consumeChallenge(deps: PasskeyDeps, ceremony: Ceremony, challenge: string): Promise<boolean> {
  if (!challenge || challenge.length > 128) return false
  const deleted = await deps.db
    .delete(dashboardPasskeyChallenges)
    .where(and(eq(dashboardPasskeyChallenges.challengeHash, challengeHash(ceremony, challenge)), gt(dashboardPasskeyChallenges.expiresAt, deps.clock.now())))
    .returning({ challengeHash: dashboardPasskeyChallenges.challengeHash })
  return deleted.length === 1
}

export function listDashboardPasskeys(db: Database, userId: string): Promise<DashboardPasskey[]> {
  return db.select().from(dashboardPasskeys).where(eq(dashboardPasskeys.userId, userId)).orderBy(asc(dashboardPasskeys.createdAt))
}

/** Removes one of the user's own passkeys; another user's credential id removes nothing. */
export async function deleteDashboardPasskey(db: Database, userId: string, credentialId: string): Promise<boolean> {
  const deleted = await db
    .delete(dashboardPasskeys)
    .where(and(eq(dashboardPasskeys.userId, userId), eq(dashboardPasskeys.credentialId, credentialId)))
    .returning({ credentialId: dashboardPasskeys.credentialId })
  return deleted.length === 1
}

/**
 * Removes every passkey of a user: a password reset does, and a set-password link or "sign out everywhere"
 * does when the user ticks it, so a passkey planted from a stolen session does not outlive the recovery.
 */
export async function deleteAllDashboardPasskeys(db: Executor, userId: string): Promise<number> {
  const deleted = await db.delete(dashboardPasskeys).where(eq(dashboardPasskeys.userId, userId)).returning({ credentialId: dashboardPasskeys.credentialId })
  return deleted.length
}

/**
 * Options for `navigator.credentials.create()` for a signed-in user who has just typed their password again
 * (the caller checks it: a session alone must not add a way in): discoverable (so signing in needs no
 * email), user verification required, no attestation, and the user's passkeys excluded so one
 * authenticator is not added twice. The user handle is the user's id, never their email.
 */
export async function createPasskeyRegistrationOptions(
  deps: PasskeyDeps,
  input: { rp: RelyingParty; user: { id: string; email: string }; sessionTokenHash: string },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await listDashboardPasskeys(deps.db, input.user.id)
  // Loaded at first use, as on the hosted page.
  const { generateRegistrationOptions } = await import('@simplewebauthn/server')
  const options = await generateRegistrationOptions({
    rpName: input.rp.name,
    rpID: input.rp.id,
    userID: new TextEncoder().encode(input.user.id),
    userName: input.user.email,
    userDisplayName: `${input.user.email} (ofage dashboard)`,
    timeout: PASSKEY_CHALLENGE_LIFETIME_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((passkey) => ({ id: passkey.credentialId })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  })
  await storeChallenge(deps, { kind: 'register', sessionTokenHash: input.sessionTokenHash }, options.challenge)
  return options
}

export type RegistrationOutcome = 'saved' | 'challenge_expired' | 'invalid_response' | 'already_saved' | 'too_many'

/**
 * Checks a new passkey against the session's challenge and saves its public key for the user, with where it
 * was added from. The challenge exists only if the password was confirmed when it was made, two minutes at
 * most before.
 */
export async function registerDashboardPasskey(
  deps: PasskeyDeps,
  input: { rp: RelyingParty; userId: string; sessionTokenHash: string; response: RegistrationResponse; addedFrom: AddedFrom },
): Promise<RegistrationOutcome> {
  const challenge = answeredChallenge(input.response.response.clientDataJSON)
  if (!challenge) return 'invalid_response'
  if (!(await consumeChallenge(deps, { kind: 'register', sessionTokenHash: input.sessionTokenHash }, challenge))) return 'challenge_expired'
  const credential = await verifyNewCredential(input.rp, challenge, input.response)
  if (!credential) return 'invalid_response'
  if ((await listDashboardPasskeys(deps.db, input.userId)).length >= MAX_PASSKEYS_PER_USER) return 'too_many'
  const inserted = await deps.db
    .insert(dashboardPasskeys)
    .values({
      credentialId: credential.id,
      userId: input.userId,
      publicKey: credential.publicKey,
      signCount: storedCounter(credential.counter),
      createdAt: deps.clock.now(),
      addedDevice: input.addedFrom.device,
      addedNetwork: input.addedFrom.network,
    })
    .onConflictDoNothing()
    .returning({ credentialId: dashboardPasskeys.credentialId })
  return inserted.length === 1 ? 'saved' : 'already_saved'
}

/** Options for `navigator.credentials.get()` on the sign-in page: no list, so the browser offers every passkey it holds for us. */
export async function createPasskeySignInOptions(deps: PasskeyDeps, input: { rp: RelyingParty; formCookie: string }): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { generateAuthenticationOptions } = await import('@simplewebauthn/server')
  const options = await generateAuthenticationOptions({ rpID: input.rp.id, allowCredentials: [], userVerification: 'required', timeout: PASSKEY_CHALLENGE_LIFETIME_MS })
  await storeChallenge(deps, { kind: 'sign-in', formCookie: input.formCookie }, options.challenge)
  return options
}

/**
 * Checks a sign-in assertion: this browser's live challenge (used up here), a saved dashboard passkey, its
 * signature with user verification, and a counter that moved forward (synced passkeys report 0). Returns
 * the user it signs in. The user handle is not signed (WebAuthn §6.3.3), so the credential id decides.
 */
export async function verifyPasskeySignIn(deps: PasskeyDeps, input: { rp: RelyingParty; formCookie: string; response: AuthenticationResponse }): Promise<string | undefined> {
  const { response } = input
  const challenge = answeredChallenge(response.response.clientDataJSON)
  if (!challenge || !(await consumeChallenge(deps, { kind: 'sign-in', formCookie: input.formCookie }, challenge))) return undefined
  const [passkey] = await deps.db.select().from(dashboardPasskeys).where(eq(dashboardPasskeys.credentialId, response.id))
  if (!passkey) return undefined
  const counter = await verifyAssertion(input.rp, challenge, response, passkey)
  if (counter === undefined) return undefined
  // Only if nobody moved the counter meanwhile: of two assertions racing from a cloned authenticator, one fails.
  const advanced = await deps.db
    .update(dashboardPasskeys)
    .set({ signCount: storedCounter(counter), lastUsedAt: deps.clock.now() })
    .where(and(eq(dashboardPasskeys.credentialId, passkey.credentialId), eq(dashboardPasskeys.signCount, passkey.signCount)))
    .returning({ userId: dashboardPasskeys.userId })
  return advanced[0]?.userId
}
