import type { PasswordCost } from '../config.ts'
import { randomToken } from '../lib/crypto.ts'

/**
 * NIST SP 800-63B §5.1.1.2 asks for at least 8 characters; a dashboard shows every verification of a site,
 * so we ask 12. Long passphrases are welcome; past the upper bound a body is refused before any hashing.
 */
export const MIN_PASSWORD_LENGTH = 12
export const MAX_PASSWORD_LENGTH = 256

export type PasswordProblem = 'too_short' | 'too_long'

/** Why a new password is refused, or undefined when it is acceptable. Counted in characters, not bytes. */
export function checkNewPassword(password: string): PasswordProblem | undefined {
  const length = [...password].length
  if (length < MIN_PASSWORD_LENGTH) return 'too_short'
  if (length > MAX_PASSWORD_LENGTH) return 'too_long'
  return undefined
}

/**
 * argon2id at PASSWORD_HASH_MEMORY_KIB (Bun's default, 64 MiB) and 2 passes: slow on purpose, unlike the
 * client secrets' HMAC. The hash names its cost, so a hash made at another cost still verifies.
 */
export function hashPassword(password: string, cost: PasswordCost): Promise<string> {
  return Bun.password.hash(password, { algorithm: 'argon2id', memoryCost: cost.memoryCost, timeCost: cost.timeCost })
}

const dummyHashes = new Map<string, Promise<string>>()

/** A hash of nothing anyone knows, made once per cost: what an unknown email is checked against, at the cost a real one has. */
export function warmDummyHash(cost: PasswordCost): Promise<string> {
  const key = `${cost.memoryCost}:${cost.timeCost}`
  let dummy = dummyHashes.get(key)
  if (!dummy) dummyHashes.set(key, (dummy = hashPassword(randomToken(24), cost)))
  return dummy
}

/**
 * Whether `password` matches `hash`. Without a hash (no such account, or one whose password is not set
 * yet) the same argon2 work is done against a dummy hash and the answer is false: the time a sign-in takes
 * does not tell whether an email has an account.
 */
export async function verifyPassword(password: string, hash: string | null | undefined, cost: PasswordCost): Promise<boolean> {
  if (!hash) {
    await Bun.password.verify(password, await warmDummyHash(cost)).catch(() => false)
    return false
  }
  return Bun.password.verify(password, hash).catch(() => false)
}
