import type { Database } from '../db/client.ts'
import { OAuthError } from '../errors.ts'
import { findClient, type Client } from '../oauth/clients.ts'
import { countMonthToDate } from '../usage/counters.ts'

export const DEFAULT_AGE_REQUIRED = 18

/** The query of `GET {app_url}/` (SPEC.md §4.1), after TypeBox has checked the shapes. */
export type AuthorizationQuery = { client_id: string; redirect_uri: string; state?: string; age_required?: string }

export type AuthorizationRequest = {
  client: Client
  redirectUri: string
  state: string | null
  ageRequired: number
}

/**
 * Checks an authorization request against the client's registration. Every failure is an
 * {@link OAuthError} that the page shows; none of them redirects, because an unchecked redirect URI
 * must never receive the visitor (DESIGN.md "Authorization errors stay on the page").
 */
export async function checkAuthorizationRequest(db: Database, query: AuthorizationQuery, now: Date): Promise<AuthorizationRequest> {
  const client = await findClient(db, query.client_id)
  if (!client) throw new OAuthError('invalid_client', 'This site is not registered with the age check service.')
  // Exact string comparison: scheme, host, port, path and query must all match a registered URI.
  if (!client.redirectUris.includes(query.redirect_uri)) {
    throw new OAuthError('invalid_redirect_uri', 'The return address is not registered for this site.')
  }
  if (client.status !== 'active') throw new OAuthError('client_suspended', 'This site is suspended from the age check service.')
  const ageRequired = query.age_required === undefined ? DEFAULT_AGE_REQUIRED : Number(query.age_required)
  if (client.minAge !== null && ageRequired < client.minAge) {
    throw new OAuthError('age_requirement_not_met', `This site requires an age of at least ${client.minAge}.`)
  }
  if (client.verificationLimit !== null && (await countMonthToDate(db, client.id, now)) >= client.verificationLimit) {
    throw new OAuthError('payment_required', "This site's plan has reached its verification limit for the month.")
  }
  // RFC 6749 §A.5: state is visible ASCII and spaces; control characters (NUL above all, which Postgres
  // refuses in text) are a malformed request, not a server error.
  if (query.state !== undefined && /[\u0000-\u001f\u007f]/.test(query.state)) {
    throw new OAuthError('invalid_request', 'The state parameter contains control characters.')
  }
  return { client, redirectUri: query.redirect_uri, state: query.state ?? null, ageRequired }
}

/** The callback URL: the registered redirect URI with `code` and, when one was sent, `state`. */
export function callbackUrl(redirectUri: string, code: string, state: string | null): string {
  const url = new URL(redirectUri)
  url.searchParams.set('code', code)
  if (state !== null) url.searchParams.set('state', state)
  return url.toString()
}
