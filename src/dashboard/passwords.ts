import type { PasswordCost } from '../config.ts'

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

const dummyHashes = new Map<string, string>()

/**
 * What an unknown email's password is checked against: an argon2id hash in Bun's own form (`$argon2id$v=19$
 * m=…,t=…,p=1$salt$digest`, a 32-byte salt and a 32-byte digest) at the cost a real one has, whose salt and
 * digest are random bytes. No password gives that digest, and verifying it is the same argon2 run as verifying
 * a real hash (the memory, passes, lanes and digest length decide the work), so the time a sign-in takes does
 * not tell whether an email has an account. It is written, not computed: no process spends an argon2 run
 * (64 MiB, for a peak of about 160 MiB a process) making one at start. One per cost and process.
 */
export function dummyHash(cost: PasswordCost): string {
  const key = `${cost.memoryCost}:${cost.timeCost}`
  let dummy = dummyHashes.get(key)
  if (dummy === undefined) {
    const base64 = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('base64').replace(/=+$/, '')
    dummyHashes.set(key, (dummy = `$argon2id$v=19$m=${cost.memoryCost},t=${cost.timeCost},p=1$${base64(32)}$${base64(32)}`))
  }
  return dummy
}

/**
 * Whether `password` matches `hash`. Without a hash (no such account, or one whose password is not set
 * yet) the same argon2 work is done against a dummy hash and the answer is false: the time a sign-in takes
 * does not tell whether an email has an account.
 */
export async function verifyPassword(password: string, hash: string | null | undefined, cost: PasswordCost): Promise<boolean> {
  if (!hash) {
    await Bun.password.verify(password, dummyHash(cost)).catch(() => false)
    return false
  }
  return Bun.password.verify(password, hash).catch(() => false)
}
