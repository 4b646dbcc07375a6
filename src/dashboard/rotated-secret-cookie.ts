import { constantTimeEqual } from '../lib/crypto.ts'
import type { Cookies } from '../web/cookies.ts'
import { createSealedCookie } from './sealed-cookie.ts'

/**
 * Carries a client secret just rotated across the redirect after the rotation's form, to the one view of the
 * settings page that shows it and puts it in the integration snippet (sealed-cookie.ts), for five minutes.
 */
const COOKIE = { name: 'ofage_rotated_secret', path: '/dashboard/settings', purpose: 'ofage dashboard: rotated client secret cookie', lifetimeSeconds: 300 }

/** A secret just rotated, and until when the one it replaced still works (null: it stopped at once). */
export type RotatedSecret = { secret: string; previousUntil: Date | null }

export function createRotatedSecretCookie(config: { appUrl: string }, dashboardKey: Uint8Array) {
  const sealed = createSealedCookie(config, dashboardKey, COOKIE)

  /**
   * Sets the cookie for this session (its token's hash), with the secret's HMAC as the client now stores it:
   * a second rotation before the page is read makes it stale.
   */
  function write(cookies: Cookies, rotated: RotatedSecret & { sessionTokenHash: string; secretHash: string }, now: Date): Promise<void> {
    const claims = { sec: rotated.secret, prev: rotated.previousUntil?.toISOString() ?? null, sh: rotated.secretHash }
    return sealed.write(cookies, claims, rotated.sessionTokenHash, now)
  }

  /**
   * Reads the cookie once (clearing it): the secret when it was sealed here, for this session, is still fresh,
   * and still is the client's secret (`secretHash`, as stored now).
   */
  async function take(cookies: Cookies, current: { sessionTokenHash: string; secretHash: string }, now: Date): Promise<RotatedSecret | undefined> {
    const claims = await sealed.take(cookies, current.sessionTokenHash, now)
    const { sec, prev, sh } = claims ?? {}
    if (typeof sec !== 'string' || typeof sh !== 'string' || (prev !== null && typeof prev !== 'string')) return undefined
    if (!constantTimeEqual(sh, current.secretHash)) return undefined
    return { secret: sec, previousUntil: prev === null ? null : new Date(prev) }
  }

  return { write, take }
}
