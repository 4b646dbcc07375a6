import type { Database } from '../db/client.ts'
import { OAuthError } from '../errors.ts'
import { countMonthToDate } from '../usage/counters.ts'
import type { Client } from '../clients/model.ts'
import type { AuthorizationParameters as AuthorizationParametersModel } from './model.ts'
import { readCodeChallenge } from './pkce.ts'
import type { PushedParameters } from './pushed-requests.ts'

export const DEFAULT_AGE_REQUIRED = 18

/**
 * The parameters of an authorization request, as the page's URL (SPEC.md §4.1) or a pushed request
 * (RFC 9126) carries them, after TypeBox has checked their shapes (the model in model.ts). `response_type`
 * and PKCE are the standard additions; `scope` is accepted and means nothing here.
 */
export type AuthorizationParameters = typeof AuthorizationParametersModel.static

/**
 * Checks an authorization request against its client's registration and returns what the session keeps.
 * Every failure is an {@link OAuthError} that the page (or the pushed-request endpoint) answers with; none
 * redirects, because an unchecked redirect URI must never receive the visitor (DESIGN.md).
 */
export async function checkAuthorizationParameters(
  db: Database,
  client: Client,
  parameters: AuthorizationParameters,
  now: Date,
  options: { /** The caller reads the month's count itself, in the statement that opens the page's session. */ planLimitLater?: boolean } = {},
): Promise<PushedParameters> {
  if (parameters.redirect_uri === undefined) throw new OAuthError('invalid_request', 'The request has no redirect_uri.')
  // Exact string comparison: scheme, host, port, path and query must all match a registered URI.
  if (!client.redirectUris.includes(parameters.redirect_uri)) {
    throw new OAuthError('invalid_redirect_uri', 'The return address is not registered for this site.')
  }
  if (client.status !== 'active') throw new OAuthError('client_suspended', 'This site is suspended from the age check service.')
  if (parameters.response_type !== undefined && parameters.response_type !== 'code') {
    throw new OAuthError('unsupported_response_type', 'Only response_type=code is supported.')
  }
  const ageRequired = parameters.age_required === undefined ? DEFAULT_AGE_REQUIRED : Number(parameters.age_required)
  if (client.minAge !== null && ageRequired < client.minAge) {
    throw new OAuthError('age_requirement_not_met', `This site requires an age of at least ${client.minAge}.`)
  }
  if (client.verificationLimit !== null && !options.planLimitLater && (await countMonthToDate(db, client.id, now)) >= client.verificationLimit) {
    throw new OAuthError('payment_required', "This site's plan has reached its verification limit for the month.")
  }
  // RFC 6749 §A.5: state is visible ASCII and spaces; control characters (NUL above all, which Postgres
  // refuses in text) are a malformed request, not a server error.
  if (parameters.state !== undefined && /[\u0000-\u001f\u007f]/.test(parameters.state)) {
    throw new OAuthError('invalid_request', 'The state parameter contains control characters.')
  }
  const codeChallenge = readCodeChallenge(parameters.code_challenge, parameters.code_challenge_method)
  if (codeChallenge === null && client.requirePkce) throw new OAuthError('invalid_request', 'This site must send a PKCE code_challenge (S256).')
  return { redirectUri: parameters.redirect_uri, state: parameters.state ?? null, ageRequired, codeChallenge }
}
