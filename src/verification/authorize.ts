import type { Database } from '../db/client.ts'
import { OAuthError } from '../errors.ts'
import { checkAuthorizationParameters, type AuthorizationParameters } from '../oauth/authorization-request.ts'
import type { ClientCache, VersionedClient } from '../clients/client-cache.ts'
import { type Client } from '../clients/model.ts'
import { findPushedRequest, type PushedParameters } from '../oauth/pushed-requests.ts'

/** The query of `GET {app_url}/` (SPEC.md §4.1, plus RFC 7636 and RFC 9126), after TypeBox has checked the shapes. */
export type AuthorizationQuery = AuthorizationParameters & { client_id: string; request_uri?: string | undefined }

/** A checked request, with the version of the client's row it was checked against (src/clients/client-cache.ts). */
export type AuthorizationRequest = PushedParameters & { client: Client; clientVersion: string }

/**
 * The page's authorization request: from a pushed request when the URL names one (its other parameters are
 * then ignored, RFC 9126 §4), else from the URL itself, unless the client pushes all of its requests. Checked
 * against this instance's copy of the client; a refusal is checked again against the row as it is now, and
 * `fresh` reads the row first (the copy was found out of date). The plan limit is left to the statement that
 * opens the session (sessions.ts `openSession`).
 */
export async function checkAuthorizationRequest(
  deps: { db: Database; clock: { now(): Date } },
  query: AuthorizationQuery,
  clients: ClientCache,
  fresh = false,
): Promise<AuthorizationRequest> {
  const found = fresh ? await clients.read(query.client_id) : await clients.find(query.client_id)
  try {
    return await checkAgainst(deps, query, found)
  } catch (cause) {
    if (!(cause instanceof OAuthError) || fresh || !found || ('fresh' in found && found.fresh)) throw cause
    return checkAgainst(deps, query, await clients.read(query.client_id))
  }
}

async function checkAgainst(deps: { db: Database; clock: { now(): Date } }, query: AuthorizationQuery, found: VersionedClient | undefined): Promise<AuthorizationRequest> {
  if (!found) throw new OAuthError('invalid_client', 'This site is not registered with the age check service.')
  const { client, version } = found
  const options = { planLimitLater: true }
  if (query.request_uri !== undefined) {
    const pushed = await findPushedRequest(deps, client.id, query.request_uri)
    // Checked again: the client may have been suspended, or reached its plan's limit, since it pushed.
    const parameters = {
      redirect_uri: pushed.redirectUri,
      state: pushed.state ?? undefined,
      age_required: String(pushed.ageRequired),
      ...(pushed.codeChallenge !== null && { code_challenge: pushed.codeChallenge, code_challenge_method: 'S256' }),
    }
    return { ...(await checkAuthorizationParameters(deps.db, client, parameters, deps.clock.now(), options)), client, clientVersion: version }
  }
  if (client.requirePushedRequests) {
    throw new OAuthError(
      'invalid_request',
      'This site sends its requests to the service first (pushed authorization requests, RFC 9126): the link needs a request_uri from POST /api/oauth/par.',
      'pushed_request_required',
    )
  }
  return { ...(await checkAuthorizationParameters(deps.db, client, query, deps.clock.now(), options)), client, clientVersion: version }
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
