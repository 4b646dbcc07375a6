import { OAuthError } from '../errors.ts'
import { constantTimeEqual, sha256Hex } from '../lib/crypto.ts'
import type { Limit } from '../config.ts'
import { checkLimit as refuseIfLimited, recordHit, refuseAtLimit } from '../ratelimit/limits.ts'
import type { Client, ClientDeps } from '../clients/model.ts'
import { findClientWithFailures } from '../clients/registry.ts'
import { hashSecret } from '../clients/secrets.ts'

/**
 * Authenticates a client from an `Authorization: Basic` header (SPEC.md §5). Unknown id and wrong secret
 * are the same `invalid_client`; a suspended client that proves its secret learns `client_suspended`.
 * With `limits`, failures are counted per address and per client id from that address, and an address past
 * its limit gets 429 before any secret is checked. Not per client id alone: anyone could then lock a site
 * out of its own API by failing on purpose, and a 256-bit secret is not guessed by trying.
 */
export async function authenticateClient(
  deps: ClientDeps,
  authorization: string | undefined,
  limits?: { address: string; authFailures: Limit },
  body?: PostedCredentials,
): Promise<Client> {
  const credentials = presentedCredentials(authorization, body)
  const keys = limits && failureKeys(limits.address, credentials)
  // The failure counters are read with the client, in one statement; without a client row to read them
  // beside (no credentials, an unknown id), on their own.
  const found = credentials && (await findClientWithFailures(deps, credentials.clientId, limits && { keys: keys!, limit: limits.authFailures }))
  if (limits) {
    if (found) refuseAtLimit(found.failures, limits.authFailures, deps.clock.now())
    else await refuseIfLimited(deps, keys!, limits.authFailures)
  }
  if (!credentials) {
    await countFailure(deps, keys, limits)
    throw new OAuthError('invalid_client', 'Client authentication failed: send HTTP Basic client_id:client_secret, or client_id and client_secret in the form')
  }
  const client = found?.client
  // Hash even for an unknown id so both failures take the same time.
  const proven = secretMatches(deps, client, credentials.secret)
  if (!client || !proven) return refuseSecret(deps, keys, limits)
  if (client.status !== 'active') throw suspended()
  return client
}

/**
 * The rate-limit keys a client authentication counts its failures under: the address, and the client id
 * from that address when the request names one.
 */
export function failureKeys(address: string, credentials: { clientId: string }): [string, string]
export function failureKeys(address: string, credentials: { clientId: string } | undefined): string[]
export function failureKeys(address: string, credentials: { clientId: string } | undefined): string[] {
  const addressKey = `auth:${address}`
  return credentials ? [addressKey, `${addressKey}:${sha256Hex(credentials.clientId).slice(0, 32)}`] : [addressKey]
}

/** Whether `secret` is the client's (or, during a rotation's overlap, the one it replaced), in constant time. */
export function secretMatches(deps: ClientDeps, client: Client | undefined, secret: string): boolean {
  const presented = hashSecret(deps.keys, secret)
  return client !== undefined && (constantTimeEqual(presented, client.secretHash) || acceptsPreviousSecret(client, presented, deps.clock.now()))
}

/** A failed authentication: counted under each of its keys (with `limits`), and answered `invalid_client`. */
export async function refuseSecret(deps: ClientDeps, keys: string[] | undefined, limits: { authFailures: Limit } | undefined): Promise<never> {
  await countFailure(deps, keys, limits)
  throw new OAuthError('invalid_client', 'Client authentication failed')
}

async function countFailure(deps: ClientDeps, keys: string[] | undefined, limits: { authFailures: Limit } | undefined): Promise<void> {
  if (limits) for (const key of keys!) await recordHit(deps, key, limits.authFailures)
}

export function suspended(): OAuthError {
  return new OAuthError('client_suspended', 'This client is suspended')
}

/** During a rotation's overlap, the secret it replaced. */
function acceptsPreviousSecret(client: Client, presented: string, now: Date): boolean {
  const { previousSecretHash, previousSecretExpiresAt } = client
  return previousSecretHash !== null && previousSecretExpiresAt !== null && now < previousSecretExpiresAt && constantTimeEqual(presented, previousSecretHash)
}

/** `client_id` and `client_secret` as a form body may carry them (RFC 6749 §2.3.1, client_secret_post). */
export type PostedCredentials = { client_id?: string | undefined; client_secret?: string | undefined }

/**
 * The credentials a request presents: HTTP Basic (SPEC.md §5) or, where the route reads a body, the
 * body's `client_id` and `client_secret`. RFC 6749 §2.3: "The client MUST NOT use more than one
 * authentication method in each request", so both at once is `invalid_request`; a `client_id` beside
 * Basic credentials must name the same client.
 */
export function presentedCredentials(authorization: string | undefined, body: PostedCredentials | undefined): { clientId: string; secret: string } | undefined {
  const posted = body?.client_secret !== undefined
  if (authorization !== undefined && posted) throw new OAuthError('invalid_request', 'Use one client authentication method: HTTP Basic or client_secret_post, not both')
  if (posted) return body!.client_id ? { clientId: body!.client_id, secret: body!.client_secret! } : undefined
  const basic = parseBasicAuthorization(authorization)
  if (basic && body?.client_id !== undefined && body.client_id !== basic.clientId) {
    throw new OAuthError('invalid_request', 'client_id in the body differs from the client of the Authorization header')
  }
  return basic
}

/**
 * Splits an HTTP Basic header. RFC 6749 §2.3.1: client id and secret are form-urlencoded before they
 * are joined with ":" and base64-encoded, so each part is decoded after the split ("+" is a space).
 */
export function parseBasicAuthorization(header: string | undefined): { clientId: string; secret: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header ?? '')
  if (!match) return undefined
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon <= 0) return undefined
  try {
    const clientId = formDecode(decoded.slice(0, colon))
    const secret = formDecode(decoded.slice(colon + 1))
    return secret ? { clientId, secret } : undefined
  } catch {
    return undefined
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replaceAll('+', ' '))
}
