import { and, eq, gt, lt } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { pushedRequests } from '../db/schema.ts'
import { OAuthError } from '../errors.ts'
import type { Clock } from '../lib/clock.ts'
import { randomToken, sha256Hex } from '../lib/crypto.ts'

/**
 * Pushed authorization requests (RFC 9126). The client's backend posts what the page needs; the visitor's
 * URL then carries only `client_id` and a `request_uri`, so no threshold, state or challenge in it can be
 * edited. Only the hash of the reference is stored.
 */

/** RFC 9126 §2.2: the URN prefix of a request_uri the server made up. */
const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:'

/** Long enough to send the visitor's browser on its way; the page's session then lives its own lifetime. */
export const PUSHED_REQUEST_LIFETIME_SECONDS = 90

export type PushedParameters = { redirectUri: string; state: string | null; ageRequired: number; codeChallenge: string | null }

type PushDeps = { db: Database; clock: Clock }

/** Stores the parameters of a checked authorization request and returns the `request_uri` that names them. */
export async function pushAuthorizationRequest(deps: PushDeps, clientId: string, parameters: PushedParameters): Promise<{ requestUri: string; expiresIn: number }> {
  const reference = randomToken(32)
  const now = deps.clock.now()
  await deps.db.insert(pushedRequests).values({
    referenceHash: sha256Hex(reference),
    clientId,
    ...parameters,
    createdAt: now,
    expiresAt: new Date(now.getTime() + PUSHED_REQUEST_LIFETIME_SECONDS * 1000),
  })
  return { requestUri: `${REQUEST_URI_PREFIX}${reference}`, expiresIn: PUSHED_REQUEST_LIFETIME_SECONDS }
}

/**
 * The parameters a `request_uri` names, for the client that pushed them. It may be opened again until it
 * expires (RFC 9126 §4 allows it "due to a user reloading/refreshing their user agent"): each opening is
 * a fresh page session with the same parameters, which only the client could have chosen.
 */
export async function findPushedRequest(deps: PushDeps, clientId: string, requestUri: string): Promise<PushedParameters> {
  const reference = requestUri.startsWith(REQUEST_URI_PREFIX) ? requestUri.slice(REQUEST_URI_PREFIX.length) : ''
  const [row] = reference
    ? await deps.db
        .select()
        .from(pushedRequests)
        .where(and(eq(pushedRequests.referenceHash, sha256Hex(reference)), eq(pushedRequests.clientId, clientId), gt(pushedRequests.expiresAt, deps.clock.now())))
    : []
  if (!row) throw new OAuthError('invalid_request', 'The request_uri is unknown or expired: start again from the site.')
  return { redirectUri: row.redirectUri, state: row.state, ageRequired: row.ageRequired, codeChallenge: row.codeChallenge }
}

/** Deletes pushed requests that expired before `before`. Returns how many went. */
export async function pruneExpiredPushedRequests(db: Database, before: Date): Promise<number> {
  const deleted = await db.delete(pushedRequests).where(lt(pushedRequests.expiresAt, before)).returning({ referenceHash: pushedRequests.referenceHash })
  return deleted.length
}
