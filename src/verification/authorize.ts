import type { Database } from '../db/client.ts'
import { OAuthError } from '../errors.ts'
import { checkAuthorizationParameters, type AuthorizationParameters } from '../oauth/authorization-request.ts'
import { findClient } from '../clients/registry.ts'
import { type Client } from '../clients/model.ts'
import { findPushedRequest, type PushedParameters } from '../oauth/pushed-requests.ts'

/** The query of `GET {app_url}/` (SPEC.md §4.1, plus RFC 7636 and RFC 9126), after TypeBox has checked the shapes. */
export type AuthorizationQuery = AuthorizationParameters & { client_id: string; request_uri?: string | undefined }

export type AuthorizationRequest = PushedParameters & { client: Client }

/**
 * The page's authorization request: from a pushed request when the URL names one (its other parameters are
 * then ignored, RFC 9126 §4), else from the URL itself, unless the client pushes all of its requests.
 */
export async function checkAuthorizationRequest(deps: { db: Database; clock: { now(): Date } }, query: AuthorizationQuery): Promise<AuthorizationRequest> {
  const client = await findClient(deps.db, query.client_id)
  if (!client) throw new OAuthError('invalid_client', 'This site is not registered with the age check service.')
  if (query.request_uri !== undefined) {
    const pushed = await findPushedRequest(deps, client.id, query.request_uri)
    // Checked again: the client may have been suspended, or reached its plan's limit, since it pushed.
    const parameters = {
      redirect_uri: pushed.redirectUri,
      state: pushed.state ?? undefined,
      age_required: String(pushed.ageRequired),
      ...(pushed.codeChallenge !== null && { code_challenge: pushed.codeChallenge, code_challenge_method: 'S256' }),
    }
    return { ...(await checkAuthorizationParameters(deps.db, client, parameters, deps.clock.now())), client }
  }
  if (client.requirePushedRequests) {
    throw new OAuthError(
      'invalid_request',
      'This site sends its requests to the service first (pushed authorization requests, RFC 9126): the link needs a request_uri from POST /api/oauth/par.',
      'pushed_request_required',
    )
  }
  return { ...(await checkAuthorizationParameters(deps.db, client, query, deps.clock.now())), client }
}

/**
 * The callback URL: the registered redirect URI with `code`, the `state` when one was sent, and `iss`
 * (RFC 9207), which tells a client talking to several servers which one answered.
 */
export function callbackUrl(redirectUri: string, code: string, state: string | null, issuer: string): string {
  const url = new URL(redirectUri)
  url.searchParams.set('code', code)
  if (state !== null) url.searchParams.set('state', state)
  url.searchParams.set('iss', issuer)
  return url.toString()
}
