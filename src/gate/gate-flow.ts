import type { Database } from '../db/client.ts'
import { OAuthError } from '../errors.ts'
import type { Clock } from '../lib/clock.ts'
import { constantTimeEqual, randomToken } from '../lib/crypto.ts'
import type { ServerKeys } from '../keys/server-keys.ts'
import { checkAuthorizationParameters } from '../oauth/authorization-request.ts'
import { findClient } from '../clients/registry.ts'
import { type Client } from '../clients/model.ts'
import { redeemCode, type CodeDeps, type Verification } from '../oauth/codes.ts'
import { s256 } from '../oauth/pkce.ts'
import { pushAuthorizationRequest } from '../oauth/pushed-requests.ts'
import { openGateFlow, sealGateFlow, sealGatePass } from './gate-cookie.ts'
import { gateCallbackUri, loadGateHosts, type GateHost } from './gate-hosts.ts'
import { matchGateHost, type GateMatch, type GateRequest } from './gate-match.ts'

/** Long enough to finish a check on the page (its session lives 30 minutes), short enough to go stale. */
export const GATE_FLOW_LIFETIME_SECONDS = 30 * 60

export type GateFlowDeps = CodeDeps & { db: Database; keys: ServerKeys; clock: Clock; config: { appUrl: string; issuerUrl: string } }

/** A gated host and its client, read from the database (the start and the callback never use a cached copy). */
export type GateTarget = { host: GateHost; client: Client }

export type GateTargetMatch = { outcome: 'found'; target: GateTarget } | Exclude<GateMatch<GateHost>, { outcome: 'found' }>

/** The gated host and client a proxy's request to a gate page is for, by the same rules as `/gate/auth` (gate-match.ts). */
export async function findGateTarget(db: Database, request: GateRequest): Promise<GateTargetMatch> {
  const match = matchGateHost(await loadGateHosts(db), request)
  if (match.outcome !== 'found') return match
  const client = await findClient(db, match.host.clientId)
  return client ? { outcome: 'found', target: { host: match.host, client } } : { outcome: 'unknown_host' }
}

/**
 * Starts a check for a visitor of a gated host: an ordinary authorization request of the host's client,
 * pushed (RFC 9126) so the page's URL carries nothing to edit, with PKCE and a fresh state that the flow
 * cookie carries to the callback with the path to return to. The client's own rules apply as for any
 * request: suspended, plan limit, minimum age.
 */
export async function startGateCheck(deps: GateFlowDeps, target: GateTarget, returnTo: string): Promise<{ location: string; flowCookie: string }> {
  const { host, client } = target
  if (!host.active) throw new OAuthError('client_suspended', 'This site is suspended from the age check service.')
  const state = randomToken(16)
  const codeVerifier = randomToken(32)
  const now = deps.clock.now()
  const parameters = await checkAuthorizationParameters(
    deps.db,
    client,
    { redirect_uri: gateCallbackUri(host.origin), state, age_required: String(host.ageRequired), response_type: 'code', code_challenge: s256(codeVerifier), code_challenge_method: 'S256' },
    now,
  )
  const { requestUri } = await pushAuthorizationRequest(deps, client.id, parameters)
  const expiresAt = Math.floor(now.getTime() / 1000) + GATE_FLOW_LIFETIME_SECONDS
  return {
    location: `${deps.config.appUrl}/?${new URLSearchParams({ client_id: client.id, request_uri: requestUri })}`,
    flowCookie: sealGateFlow(deps.keys.gateKey, { origin: host.origin, state, codeVerifier, returnTo, expiresAt }),
  }
}

export type GateCallback = { code?: string | undefined; state?: string | undefined; iss?: string | undefined }

/**
 * Finishes a check at the gated host's callback: the flow cookie this browser got at the start must carry
 * the callback's state (no other browser's code is ever redeemed here), the code is redeemed inside the
 * service with the PKCE verifier, and the verified age must still meet the host's. Returns the gate cookie's
 * value and where to send the visitor.
 */
export async function finishGateCheck(
  deps: GateFlowDeps,
  target: GateTarget,
  flowValues: string[],
  callback: GateCallback,
): Promise<{ passCookie: string; returnTo: string; verification: Verification }> {
  const { host, client } = target
  const now = Math.floor(deps.clock.now().getTime() / 1000)
  const flow = flowValues
    .map((value) => openGateFlow(deps.keys.gateKey, value))
    .find((f) => f !== undefined && f.origin === host.origin && now < f.expiresAt && callback.state !== undefined && constantTimeEqual(f.state, callback.state))
  if (!flow) throw new OAuthError('session_expired', 'The check was started in another browser, or too long ago.')
  // RFC 9207: an answer that names another issuer was not ours.
  if (callback.iss !== undefined && callback.iss !== deps.config.issuerUrl) throw new OAuthError('invalid_request', 'The answer names another issuer.')
  if (!callback.code) throw new OAuthError('invalid_request', 'The answer carries no code.')
  if (client.status !== 'active') throw new OAuthError('client_suspended', 'This site is suspended from the age check service.')
  const verification = await redeemCode(deps, client, { code: callback.code, redirectUri: gateCallbackUri(host.origin), state: flow.state, codeVerifier: flow.codeVerifier })
  if (verification.ageOver < host.ageRequired) {
    throw new OAuthError('age_requirement_not_met', `This site now asks for ${host.ageRequired}; the check was for ${verification.ageOver}.`)
  }
  const passCookie = sealGatePass(deps.keys.gateKey, {
    clientId: client.id,
    origin: host.origin,
    ageOver: verification.ageOver,
    verificationId: verification.transactionId,
    issuedAt: now,
    expiresAt: now + host.ttlSeconds,
  })
  return { passCookie, returnTo: flow.returnTo, verification }
}
