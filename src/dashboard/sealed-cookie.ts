import { hkdfSync } from 'node:crypto'
import { EncryptJWT, jwtDecrypt, type JWTPayload } from 'jose'
import { epochSeconds } from '../lib/clock.ts'
import type { Cookies } from '../web/cookies.ts'

/** Longer values are not ours: nothing is decrypted from a cookie header the browser's owner stuffed. */
const MAX_VALUE_LENGTH = 1024

export type SealedCookieOptions = {
  /** The cookie's name; `__Secure-` is put in front over https. */
  name: string
  /** The only pages it is sent to. */
  path: string
  /** Names the key derived for it: a value sealed for one purpose opens for no other. */
  purpose: string
  lifetimeSeconds: number
}

/**
 * A value carried across the redirect after a form (post/redirect/get) to the one page view that shows it,
 * without keeping it anywhere on the server: a cookie sealed with a key only the server holds (JWE, `dir` +
 * A256GCM: encrypted and authenticated), bound to the session that posted (its token's hash, as `sub`),
 * short-lived, sent only under `path`, and cleared by the page that reads it. A new secret that must be shown
 * once (a webhook's, a rotated client secret) travels this way; docs/decisions.md says why not otherwise.
 *
 * Not `__Host-` (that prefix requires `Path=/`): the path keeps it off every other page, and over https the
 * `__Secure-` prefix keeps it from being set over plain http. A sibling subdomain could set one, but could
 * not seal it, and a value that does not open is ignored.
 */
export function createSealedCookie(config: { appUrl: string }, dashboardKey: Uint8Array, cookie: SealedCookieOptions) {
  const key = new Uint8Array(hkdfSync('sha256', dashboardKey, new Uint8Array(0), cookie.purpose, 32))
  const secure = config.appUrl.startsWith('https:')
  const name = secure ? `__Secure-${cookie.name}` : cookie.name
  const options = { httpOnly: true, secure, sameSite: 'strict' as const, path: cookie.path }

  /** Seals `claims` into this answer's cookie, for the session whose token hashes to `sessionTokenHash`. */
  async function write(cookies: Cookies, claims: Record<string, string | null>, sessionTokenHash: string, now: Date): Promise<void> {
    const seconds = epochSeconds(now)
    const sealed = await new EncryptJWT(claims)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setSubject(sessionTokenHash)
      .setIssuedAt(seconds)
      .setExpirationTime(seconds + cookie.lifetimeSeconds)
      .encrypt(key)
    cookies[name]!.set({ value: sealed, ...options, maxAge: cookie.lifetimeSeconds })
  }

  /**
   * Reads the cookie once: clears it whatever it holds, and returns its claims when it was sealed here, for
   * this session, and is still fresh. The caller checks their types and whether they still hold.
   */
  async function take(cookies: Cookies, sessionTokenHash: string, now: Date): Promise<JWTPayload | undefined> {
    const value = cookies[name]?.value
    if (typeof value !== 'string' || value === '') return undefined
    cookies[name]!.set({ value: '', ...options, maxAge: 0 })
    if (value.length > MAX_VALUE_LENGTH) return undefined
    try {
      const { payload } = await jwtDecrypt(value, key, { subject: sessionTokenHash, currentDate: now, keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] })
      return payload
    } catch {
      // Tampered, truncated, expired, another session's or sealed under another key: nothing to show.
      return undefined
    }
  }

  return { write, take }
}
