import { constantTimeEqual, hmacHex } from '../lib/crypto.ts'

/**
 * CSRF tokens of the dashboard's forms, derived under a server key rather than stored (as the hosted page
 * does): a signed-in form carries HMAC(session token), a synchronizer token that only this session's pages
 * hold; the sign-in and set-password forms, shown before any session, carry HMAC(a random cookie), a
 * signed double submit that a page on another site can neither read nor forge.
 */
function derive(key: Uint8Array, purpose: string, value: string): string {
  return Buffer.from(hmacHex(key, `dashboard-${purpose}:${value}`), 'hex').subarray(0, 24).toString('base64url')
}

export function sessionCsrfToken(key: Uint8Array, sessionToken: string): string {
  return derive(key, 'session', sessionToken)
}

export function preSessionCsrfToken(key: Uint8Array, cookieValue: string): string {
  return derive(key, 'pre-session', cookieValue)
}

/** Whether a form's token is the expected one, compared in constant time. */
export function csrfMatches(expected: string | undefined, presented: unknown): boolean {
  return expected !== undefined && typeof presented === 'string' && constantTimeEqual(presented, expected)
}
