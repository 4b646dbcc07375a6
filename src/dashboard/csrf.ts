import { OAuthError } from '../errors.ts'
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

/**
 * Refuses a post from another site before anything else is read: a foreign Origin, or a browser's
 * `Sec-Fetch-Site` saying cross-site or same-site (a sibling subdomain is another site to the dashboard).
 * `Origin: null` says nothing: under `Referrer-Policy: no-referrer` browsers send it for our own forms.
 */
export function refuseForeignPost(request: Request, ownOrigins: ReadonlySet<string>): void {
  const origin = request.headers.get('origin')
  const fetchSite = request.headers.get('sec-fetch-site')
  if ((origin !== null && origin !== 'null' && !ownOrigins.has(origin)) || fetchSite === 'cross-site' || fetchSite === 'same-site') {
    throw new OAuthError('forbidden', 'Cross-site form post')
  }
}
