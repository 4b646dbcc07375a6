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

/** argon2id with Bun's defaults (64 MiB, 2 passes): slow on purpose, unlike the client secrets' HMAC. */
export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: 'argon2id' })
}

let dummyHash: Promise<string> | undefined

/** A hash of nothing anyone knows, made once: what an unknown email is checked against. */
export function warmDummyHash(): Promise<string> {
  dummyHash ??= hashPassword(randomToken(24))
  return dummyHash
}

/**
 * Whether `password` matches `hash`. Without a hash (no such account, or one whose password is not set
 * yet) the same argon2 work is done against a dummy hash and the answer is false: the time a sign-in takes
 * does not tell whether an email has an account.
 */
export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  if (!hash) {
    await Bun.password.verify(password, await warmDummyHash()).catch(() => false)
    return false
  }
  return Bun.password.verify(password, hash).catch(() => false)
}
