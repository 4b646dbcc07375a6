import { hkdfSync } from 'node:crypto'
import { EncryptJWT, jwtDecrypt } from 'jose'
import type { Cookies } from '../web/cookies.ts'

/**
 * Carries a webhook endpoint's new signing secret across the redirect after the form that added it
 * (post-redirect-get), to the one page view that shows it, without keeping it anywhere but in the endpoint's
 * row: a cookie sealed with a key only the server holds (JWE, `dir` + A256GCM: encrypted and authenticated),
 * bound to the session that added it, living five minutes, sent only to the webhooks pages, and cleared by
 * the page that reads it. docs/decisions.md says why not the alternatives.
 */
const COOKIE = 'ofage_new_webhook_secret'
const PATH = '/dashboard/webhooks'
const LIFETIME_S = 300
/** Longer values are not ours: nothing is decrypted from a cookie header the browser's owner stuffed. */
const MAX_VALUE_LENGTH = 1024

export type NewSecret = { endpointId: string; secret: string }

/** A key of its own, derived from the dashboard's: a value sealed here opens nowhere else. */
function sealingKey(dashboardKey: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', dashboardKey, new Uint8Array(0), 'ofage dashboard: new webhook secret cookie', 32))
}

/**
 * The cookie's options. Not `__Host-` (that prefix requires `Path=/`): its path keeps it off every other
 * page, and over https the `__Secure-` prefix keeps it from being set over plain http. A sibling subdomain
 * could set one, but could not seal it, and a value that does not open is ignored.
 */
function cookieOf(appUrl: string) {
  const secure = appUrl.startsWith('https:')
  return { name: secure ? `__Secure-${COOKIE}` : COOKIE, options: { httpOnly: true, secure, sameSite: 'strict' as const, path: PATH } }
}

export function createNewSecretCookie(config: { appUrl: string }, dashboardKey: Uint8Array) {
  const key = sealingKey(dashboardKey)
  const { name, options } = cookieOf(config.appUrl)

  /** Sets the cookie: the secret of `endpointId`, for this session (its token's hash) only. */
  async function write(cookies: Cookies, value: NewSecret & { sessionTokenHash: string }, now: Date): Promise<void> {
    const seconds = Math.floor(now.getTime() / 1000)
    const sealed = await new EncryptJWT({ eid: value.endpointId, sec: value.secret })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setSubject(value.sessionTokenHash)
      .setIssuedAt(seconds)
      .setExpirationTime(seconds + LIFETIME_S)
      .encrypt(key)
    cookies[name]!.set({ value: sealed, ...options, maxAge: LIFETIME_S })
  }

  /**
   * Reads the cookie once: clears it whatever it holds, and returns the secret when it was sealed here, for
   * this session, and is still fresh.
   */
  async function take(cookies: Cookies, sessionTokenHash: string, now: Date): Promise<NewSecret | undefined> {
    const value = cookies[name]?.value
    if (typeof value !== 'string' || value === '') return undefined
    cookies[name]!.set({ value: '', ...options, maxAge: 0 })
    if (value.length > MAX_VALUE_LENGTH) return undefined
    try {
      const { payload } = await jwtDecrypt(value, key, { subject: sessionTokenHash, currentDate: now, keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] })
      return typeof payload.eid === 'string' && typeof payload.sec === 'string' ? { endpointId: payload.eid, secret: payload.sec } : undefined
    } catch {
      return undefined
    }
  }

  return { write, take }
}

export type NewSecretCookie = ReturnType<typeof createNewSecretCookie>
