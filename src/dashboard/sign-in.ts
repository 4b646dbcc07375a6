import type { PasswordCost } from '../config.ts'
import type { Database } from '../db/client.ts'
import type { Clock } from '../lib/clock.ts'
import { sha256Hex } from '../lib/crypto.ts'
import type { Limit } from '../config.ts'
import { clearHits, readHits, recordHit, takeHit } from '../ratelimit/limits.ts'
import { verifyPassword } from './passwords.ts'
import { createDashboardSession } from './sessions.ts'
import { findDashboardUser, findUserByEmail, normaliseEmail } from './users.ts'

export type SignInLimits = { signInAccount: Limit; signInAccountCeiling: Limit; signInAddress: Limit }
export type SignInDeps = { db: Database; clock: Clock; limits: SignInLimits; passwordHash: PasswordCost }

export type SignInResult = { ok: true; token: string; expiresAt: Date } | { ok: false }

/**
 * Checks an email and password and opens a session. Every attempt counts against the address and against
 * the account from that address, atomically and before the password is checked, so a burst cannot get more
 * guesses than the limits allow (a RateLimitedError past them). The account is the email's hash, counted
 * alike whether or not it has an account, and a wrong email costs the same argon2 work as a wrong password:
 * neither the answer, its timing nor the limit tells whether an email has an account.
 */
export async function signIn(deps: SignInDeps, input: { email: string; password: string; address: string }): Promise<SignInResult> {
  const email = normaliseEmail(input.email)
  await countSignInAttempt(deps, { address: input.address, email })
  const user = email === '' ? undefined : await findUserByEmail(deps.db, email)
  const matches = await verifyPassword(input.password, user?.passwordHash, deps.passwordHash)
  const keys = accountKeys(email, input.address)
  if (!user || !matches) {
    await recordHit(deps, keys.failures, deps.limits.signInAccountCeiling)
    return { ok: false }
  }
  // The password was known from here: this address has not failed, whatever it tried before.
  await clearHits(deps, keys.tries)
  return { ok: true, ...(await createDashboardSession(deps, user.id)) }
}

/**
 * Counts one sign-in attempt against the address and, when it names one, against the account from that
 * address (the normalised email's hash, whether or not it has an account); past either limit a
 * RateLimitedError. Not against the account alone, as client authentication is not counted per client id
 * alone: anyone could then hold any account's sign-in by failing on purpose. What stops guessing from many
 * addresses is the account's ceiling of failures from all of them: past it, each address gets one try a
 * window, so an address that failed is refused and one that has not (the owner's) still signs in.
 * A passkey names no account until it is checked, so its attempts count against the address only.
 */
export async function countSignInAttempt(deps: SignInDeps, input: { address: string; email?: string }): Promise<void> {
  await takeHit(deps, `dashboard-sign-in:address:${input.address}`, deps.limits.signInAddress)
  if (input.email === undefined) return
  const keys = accountKeys(input.email, input.address)
  const crowded = (await readHits(deps, keys.failures, deps.limits.signInAccountCeiling)) >= deps.limits.signInAccountCeiling.max
  await takeHit(deps, keys.tries, crowded ? { ...deps.limits.signInAccount, max: 1 } : deps.limits.signInAccount)
}

function accountKeys(email: string, address: string) {
  const account = sha256Hex(email)
  return { tries: `dashboard-sign-in:account-address:${account}:${address}`, failures: `dashboard-sign-in:account-failures:${account}` }
}

/**
 * Asks a signed-in user for their password again before a change that hands out a secret or a way in
 * (rotating the client secret, adding a passkey): a session cookie alone, left on a shared machine or
 * stolen, is not enough. Counted per session and per user and address, with the sign-in limit of an account
 * from one address, so a stolen session cannot guess faster than a sign-in form; never against the
 * account's sign-in counters, which strangers can fill, so their failures cannot block it.
 */
export async function confirmPassword(
  deps: SignInDeps,
  input: { userId: string; sessionTokenHash: string; password: string; address: string },
): Promise<boolean> {
  const keys = [`dashboard-confirm:session:${input.sessionTokenHash}`, `dashboard-confirm:user-address:${input.userId}:${input.address}`]
  for (const key of keys) await takeHit(deps, key, deps.limits.signInAccount)
  const user = await findDashboardUser(deps.db, input.userId)
  const matches = await verifyPassword(input.password, user?.passwordHash, deps.passwordHash)
  // As at sign-in, a right password ends the count of the tries before it.
  if (matches) for (const key of keys) await clearHits(deps, key)
  return matches
}
