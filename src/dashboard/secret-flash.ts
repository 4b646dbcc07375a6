import { hkdfSync } from 'node:crypto'
import { EncryptJWT, jwtDecrypt } from 'jose'
import { constantTimeEqual } from '../lib/crypto.ts'
import { epochSeconds, type Clock } from '../lib/clock.ts'
import type { Cookies } from '../web/cookies.ts'

/** Long enough for the redirect after the rotation to land; a reload afterwards no longer shows the secret. */
const FLASH_SECONDS = 120
/** The settings page only: no other page's request carries it. */
const FLASH_PATH = '/dashboard/settings'

/** A secret just rotated, and until when the one it replaced still works (null: it stopped at once). */
export type RotatedSecret = { secret: string; previousUntil: Date | null }
/** What a flash is bound to: the session that rotated, and the client's secret as it then was (its HMAC). */
export type FlashBinding = { sessionTokenHash: string; secretHash: string }

/**
 * The new client secret carried across the redirect after a rotation (post/redirect/get), without storing it:
 * encrypted (JWE, `dir` + A256GCM, under a key derived from the dashboard's server key) in a cookie that is
 * HttpOnly, SameSite=Strict, scoped to the settings page and two minutes long, read once and cleared by that
 * read. It opens only for the session that rotated, and only while it is still the client's secret: a second
 * rotation in between shows no stale secret. docs/decisions.md says why a cookie and not a table.
 */
export function createSecretFlash(deps: { appUrl: string; dashboardKey: Uint8Array; clock: Clock }) {
  const secure = deps.appUrl.startsWith('https:')
  // `__Host-` requires Path=/; `__Secure-` still keeps a plain-http page of a sibling from setting it.
  const name = secure ? '__Secure-ofage_secret_flash' : 'ofage_secret_flash'
  const options = { httpOnly: true, sameSite: 'strict' as const, secure, path: FLASH_PATH }
  const key = new Uint8Array(hkdfSync('sha256', deps.dashboardKey, new Uint8Array(0), 'ofage dashboard secret flash', 32))

  /** Seals the secret into this answer's cookie. */
  async function write(cookies: Cookies, rotated: RotatedSecret, binding: FlashBinding): Promise<void> {
    const now = epochSeconds(deps.clock.now())
    const sealed = await new EncryptJWT({ secret: rotated.secret, previous_until: rotated.previousUntil?.toISOString() ?? null, sid: binding.sessionTokenHash, sh: binding.secretHash })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setIssuedAt(now)
      .setExpirationTime(now + FLASH_SECONDS)
      .encrypt(key)
    cookies[name]!.set({ value: sealed, ...options, maxAge: FLASH_SECONDS })
  }

  /**
   * The secret of this request's flash, clearing it: undefined when there is none, or when it is not ours,
   * has expired, belongs to another session, or no longer is the client's secret.
   */
  async function take(cookies: Cookies, binding: FlashBinding): Promise<RotatedSecret | undefined> {
    const value = cookies[name]?.value
    if (typeof value !== 'string' || value === '') return undefined
    cookies[name]!.set({ value: '', ...options, maxAge: 0 })
    try {
      const { payload } = await jwtDecrypt(value, key, { currentDate: deps.clock.now(), keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] })
      const { secret, previous_until: previousUntil, sid, sh } = payload
      if (typeof secret !== 'string' || typeof sid !== 'string' || typeof sh !== 'string' || (previousUntil !== null && typeof previousUntil !== 'string')) return undefined
      if (!constantTimeEqual(sid, binding.sessionTokenHash) || !constantTimeEqual(sh, binding.secretHash)) return undefined
      return { secret, previousUntil: previousUntil === null ? null : new Date(previousUntil) }
    } catch {
      // Tampered, truncated, expired or sealed under another key: nothing to show.
      return undefined
    }
  }

  return { write, take }
}
