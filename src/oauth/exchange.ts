import type { ClientCache, VersionedClient } from '../clients/client-cache.ts'
import type { Client } from '../clients/model.ts'
import type { Limit } from '../config.ts'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { refuseAtLimit, windowStart } from '../ratelimit/limits.ts'
import { authenticateClient, failureKeys, presentedCredentials, refuseSecret, secretMatches, suspended } from './client-auth.ts'
import { claimForCopy, redeemCode, type Redemption, type Verification } from './codes.ts'
import type { TokenRequestType } from './model.ts'

export type TokenRequestContext = { authorization: string | undefined; body: TokenRequestType; limits: { address: string; authFailures: Limit } }

/**
 * The token exchange up to the signature (SPEC.md §4.2): the client authenticated, the grant checked, the
 * instance able to sign, and the code redeemed. For a client this instance has a copy of, the database is
 * asked once ({@link exchangeAtOnce}); otherwise, or when that statement cannot decide, step by step.
 */
export async function exchangeCode(deps: AppDeps, copies: ClientCache, request: TokenRequestContext): Promise<{ client: Client; verification: Verification }> {
  return (await exchangeAtOnce(deps, copies, request)) ?? (await exchangeStepByStep(deps, request))
}

/** Each step with its own statements: the client and its failures read, then the code redeemed. */
async function exchangeStepByStep(deps: AppDeps, { authorization, body, limits }: TokenRequestContext) {
  const client = await authenticateClient(deps, authorization, limits, body)
  if (body.grant_type !== 'authorization_code') throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code')
  // An instance that must not sign says so before the code is used up: the client may try again.
  await deps.keys.signing.signer()
  return { client, verification: await redeemCode(deps, client, redemptionOf(body)) }
}

/**
 * The exchange in one statement (issue 34): the secret is checked against this instance's copy of the client
 * (in constant time, as from a read of the row), and one statement then checks that the copy is still the row,
 * reads the failures counted against the address, and claims the code when the secret was proven, the client
 * is active and the failures are under their limit. The answers are then given in the order of the steps: 429
 * past the limit whatever the secret (the statement is the same for a right and a wrong one), then
 * `invalid_client` (counted), `client_suspended`, and a code the claim did not take is judged as the steps
 * judge it. A copy that is no longer the row (a rotated secret, a suspension) is read again and the statement
 * sent once more. Undefined, with nothing written, where the steps must answer: no copy (an unknown id), a plan
 * limit (counted before the claim), another grant type, an instance that cannot sign, or a row that changed
 * again meanwhile.
 */
async function exchangeAtOnce(deps: AppDeps, copies: ClientCache, { authorization, body, limits }: TokenRequestContext) {
  const credentials = presentedCredentials(authorization, body)
  if (!credentials || body.grant_type !== 'authorization_code') return undefined
  const keys = failureKeys(limits.address, credentials)
  const redemption = redemptionOf(body)
  let copy: VersionedClient | undefined = await copies.find(credentials.clientId)
  for (let tries = 0; copy && copy.client.verificationLimit === null && tries < 2; tries++) {
    const { client } = copy
    const proven = secretMatches(deps, client, credentials.secret)
    const allowed = proven && client.status === 'active'
    if (allowed && !(await canSign(deps))) return undefined
    const now = deps.clock.now()
    const outcome = await claimForCopy(deps.db, copy, redemption, now, { keys, start: windowStart(limits.authFailures, now), max: limits.authFailures.max, allowed })
    if (!outcome.current) {
      copy = await copies.read(credentials.clientId)
      continue
    }
    refuseAtLimit(outcome.failures, limits.authFailures, now)
    if (!proven) return refuseSecret(deps, keys, limits)
    if (client.status !== 'active') throw suspended()
    return { client, verification: outcome.verification ?? (await redeemCode(deps, client, redemption, { claimTried: true })) }
  }
  return undefined
}

/** Whether this instance holds the key in force; the steps say why not, in their order. */
async function canSign(deps: AppDeps): Promise<boolean> {
  try {
    await deps.keys.signing.signer()
    return true
  } catch {
    return false
  }
}

function redemptionOf(body: TokenRequestType): Redemption {
  return { code: body.code, redirectUri: body.redirect_uri, state: body.state, codeVerifier: body.code_verifier }
}
