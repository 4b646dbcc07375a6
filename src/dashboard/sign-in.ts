import type { Database } from '../db/client.ts'
import type { Clock } from '../lib/clock.ts'
import { sha256Hex } from '../lib/crypto.ts'
import type { Limit } from '../config.ts'
import { takeHit } from '../ratelimit/limits.ts'
import { verifyPassword } from './passwords.ts'
import { createDashboardSession } from './sessions.ts'
import { findUserByEmail, normaliseEmail } from './users.ts'

export type SignInDeps = { db: Database; clock: Clock; limits: { signInAccount: Limit; signInAddress: Limit } }

export type SignInResult = { ok: true; token: string; expiresAt: Date } | { ok: false }

/**
 * Checks an email and password and opens a session. Every attempt counts against the address and against
 * the account, atomically and before the password is checked, so a burst cannot get more guesses than the
 * limits allow (a RateLimitedError past them). The account key is the email's hash, counted alike whether
 * or not it has an account, and a wrong email costs the same argon2 work as a wrong password: neither the
 * answer, its timing nor the limit tells whether an email has an account.
 */
export async function signIn(deps: SignInDeps, input: { email: string; password: string; address: string }): Promise<SignInResult> {
  const email = normaliseEmail(input.email)
  await countSignInAttempt(deps, { address: input.address, email })
  const user = email === '' ? undefined : await findUserByEmail(deps.db, email)
  const matches = await verifyPassword(input.password, user?.passwordHash)
  if (!user || !matches) return { ok: false }
  return { ok: true, ...(await createDashboardSession(deps, user.id)) }
}

/**
 * Asks a signed-in user for their password again before a change that hands out a secret (rotating the
 * client secret): a session cookie alone, left on a shared machine or stolen, is not enough. Counted
 * against the same limits as sign-in, so a stolen session cannot guess the password faster than a sign-in form.
 */
export async function confirmPassword(deps: SignInDeps, input: { email: string; password: string; address: string }): Promise<boolean> {
  const email = normaliseEmail(input.email)
  await countSignInAttempt(deps, { address: input.address, email })
  const user = await findUserByEmail(deps.db, email)
  return verifyPassword(input.password, user?.passwordHash)
}

/**
 * Counts one sign-in attempt against the address and, when it names one, against the account (the
 * normalised email's hash, whether or not it has an account); past either limit a RateLimitedError. A
 * passkey names no account until it is checked, so its attempts count against the address only.
 */
export async function countSignInAttempt(deps: SignInDeps, input: { address: string; email?: string }): Promise<void> {
  await takeHit(deps, `dashboard-sign-in:address:${input.address}`, deps.limits.signInAddress)
  if (input.email !== undefined) await takeHit(deps, `dashboard-sign-in:account:${sha256Hex(input.email)}`, deps.limits.signInAccount)
}
