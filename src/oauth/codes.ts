import { and, eq, gt, isNotNull, isNull, lt, or, sql } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { builtOnce } from '../db/prepared.ts'
import { auditLogs, authCodes, type MethodClass, type VerificationLevel } from '../db/schema.ts'
import { OAuthError } from '../errors.ts'
import type { Clock } from '../lib/clock.ts'
import { sha256Hex } from '../lib/crypto.ts'
import type { ServerKeys } from '../keys/server-keys.ts'
import { countMonthToDate } from '../usage/counters.ts'
import type { Client } from '../clients/model.ts'
import { checkCodeVerifier, isCodeVerifier, s256 } from './pkce.ts'
import { announceRevocation, type RevocationCache } from './revocations.ts'
import { enqueueEvent } from '../webhooks/events.ts'

/** SPEC.md §2.1 and §8: a code lives 60 seconds and is used once. */
export const CODE_LIFETIME_MS = 60_000

export type CodeDeps = { db: Database; keys: ServerKeys; clock: Clock; revocations?: RevocationCache | undefined }

export type Redemption = { code: string; redirectUri: string; state?: string | undefined; codeVerifier?: string | undefined }

export type Verification = {
  transactionId: string
  clientId: string
  subject: string
  ageOver: number
  methodClass: MethodClass
  verificationLevel: VerificationLevel
}

/**
 * Redeems a code for the authenticated client and returns the verification it was issued for.
 * The claim is a single conditional update, so among any number of concurrent requests (on any number of
 * instances) exactly one gets the verification. A good request is claimed in that one statement, with every
 * binding checked in it (`claimAtOnce`); anything it leaves unclaimed is read back and judged by
 * `checkRedemption`, which names the error. The two apply the same rules (test/oauth/redeem-rules.test.ts).
 * A client with a plan limit takes the second way, since the month's count is read before the claim.
 */
export async function redeemCode(deps: CodeDeps, client: Client, request: Redemption): Promise<Verification> {
  const now = deps.clock.now()
  const codeHash = sha256Hex(request.code)
  // With a plan limit, the month's count is read between the checks and the claim (below).
  if (client.verificationLimit === null) {
    const claimed = await claimAtOnce(deps.db, client, request, codeHash, now)
    if (claimed) return claimed
  }

  const [found] = await deps.db
    .select({ code: authCodes, verification: auditLogs })
    .from(authCodes)
    .innerJoin(auditLogs, eq(auditLogs.transactionId, authCodes.transactionId))
    .where(eq(authCodes.codeHash, codeHash))
  if (!found) throw invalidCode()
  if (found.code.usedAt && found.code.clientId === client.id) return rejectReplay(deps, found.code.transactionId)
  checkRedemption(found, client, request, now)
  // Completions never pass the limit; a count above it means the operator lowered the plan since.
  if (client.verificationLimit !== null && (await countMonthToDate(deps.db, client.id, now)) > client.verificationLimit) {
    throw new OAuthError('payment_required', "This client's plan is over its verification limit for the month")
  }
  // Every rule holds, and no single-statement claim was tried, or it missed because the code changed in
  // between (a race the conditional update settles).
  const late = await deps.db
    .update(authCodes)
    .set({ usedAt: now })
    .where(and(eq(authCodes.codeHash, codeHash), isNull(authCodes.usedAt), gt(authCodes.expiresAt, now)))
    .returning({ codeHash: authCodes.codeHash })
  if (late.length === 0) {
    // Lost a race: another request redeemed it, or it expired between the read and the update.
    if (found.code.expiresAt <= deps.clock.now()) throw expiredCode()
    return rejectReplay(deps, found.code.transactionId)
  }
  return describeVerification(found.verification)
}

type StoredCode = { code: typeof authCodes.$inferSelect; verification: typeof auditLogs.$inferSelect }

/**
 * The rules of a redemption, in the order their errors are reported: the code is the client's, unused,
 * unexpired, for the same redirect URI, answered by its PKCE verifier, with the same state, and its age
 * meets the client's minimum. Throws the first rule broken (a used code is the caller's to revoke).
 */
export function checkRedemption({ code, verification }: StoredCode, client: Client, request: Redemption, now: Date): void {
  // A code issued to another client is reported exactly like an unknown one.
  if (code.clientId !== client.id) throw invalidCode()
  if (code.usedAt) throw new OAuthError('code_already_used', 'The authorization code has already been used')
  if (code.expiresAt <= now) throw expiredCode()
  if (request.redirectUri !== code.redirectUri || !client.redirectUris.includes(request.redirectUri)) {
    throw new OAuthError('invalid_redirect_uri', 'redirect_uri differs from the one used at authorization')
  }
  checkCodeVerifier(code.codeChallenge, request.codeVerifier)
  // SPEC.md §4.2 asks for the state again; with PKCE the verifier binds the exchange to the request, and
  // standard clients never send state there, so it may be left out (issue 11). Sent, it must match.
  if (code.state !== null && request.state === undefined && code.codeChallenge === null) {
    throw new OAuthError('invalid_request', 'state is required: it was sent at authorization')
  }
  if (request.state !== undefined && request.state !== code.state) throw new OAuthError('invalid_state', 'state differs from the one sent at authorization')
  if (client.minAge !== null && verification.ageOver < client.minAge) {
    throw new OAuthError('age_requirement_not_met', `The verified age ${verification.ageOver} is below this client's minimum of ${client.minAge}`)
  }
}

/**
 * The rules of `checkRedemption` as one conditional update that claims the code and returns its
 * verification, or nothing when any rule fails: the token exchange's single round trip.
 */
export async function claimAtOnce(db: Database, client: Client, request: Redemption, codeHash: string, now: Date): Promise<Verification | undefined> {
  if (!client.redirectUris.includes(request.redirectUri)) return undefined
  const verifier = request.codeVerifier
  if (verifier !== undefined && !isCodeVerifier(verifier)) return undefined
  const rows = await preparedClaim(db).execute({
    codeHash,
    clientId: client.id,
    now: now.toISOString(),
    redirectUri: request.redirectUri,
    challenge: verifier === undefined ? null : s256(verifier),
    state: request.state ?? null,
    minAge: client.minAge,
  })
  return rows[0]
}

/**
 * The claim of {@link claimAtOnce}, one statement for every kind of request: a missing verifier, state or
 * minimum age is a null value. Without a verifier the code must have no challenge; without a state, the
 * code must have none unless PKCE binds it (`checkRedemption`'s rules, in the same order).
 */
const preparedClaim = builtOnce((db) => {
  const value = (name: string) => sql.placeholder(name)
  const now = sql`${value('now')}::timestamptz`
  const state = sql`${value('state')}::text`
  const minAge = sql`${value('minAge')}::integer`
  return db
    .update(authCodes)
    .set({ usedAt: now })
    .from(auditLogs)
    .where(
      and(
        eq(authCodes.codeHash, value('codeHash')),
        eq(auditLogs.transactionId, authCodes.transactionId),
        eq(authCodes.clientId, value('clientId')),
        isNull(authCodes.usedAt),
        gt(authCodes.expiresAt, now),
        eq(authCodes.redirectUri, value('redirectUri')),
        sql`${authCodes.codeChallenge} is not distinct from ${value('challenge')}::text`,
        sql`(case when ${state} is null then ${or(isNull(authCodes.state), isNotNull(authCodes.codeChallenge))} else ${authCodes.state} = ${state} end)`,
        sql`(${minAge} is null or ${auditLogs.ageOver} >= ${minAge})`,
      ),
    )
    .returning({
      transactionId: auditLogs.transactionId,
      clientId: auditLogs.clientId,
      subject: auditLogs.subject,
      ageOver: auditLogs.ageOver,
      methodClass: auditLogs.methodClass,
      verificationLevel: auditLogs.verificationLevel,
    })
    .prepare('claim_code')
})

function describeVerification(row: typeof auditLogs.$inferSelect): Verification {
  return {
    transactionId: row.transactionId,
    clientId: row.clientId,
    subject: row.subject,
    ageOver: row.ageOver,
    methodClass: row.methodClass,
    verificationLevel: row.verificationLevel,
  }
}

function invalidCode(): OAuthError {
  return new OAuthError('invalid_grant', 'The authorization code is invalid')
}

/**
 * RFC 6749 §4.1.2: "If an authorization code is used more than once, the authorization server MUST deny
 * the request and SHOULD revoke (when possible) all tokens previously issued based on that authorization
 * code." Revoking the verification makes every token from it fail validation.
 */
async function rejectReplay(deps: CodeDeps, transactionId: string): Promise<never> {
  const now = deps.clock.now()
  await deps.db.transaction(async (tx) => {
    const revoked = await tx
      .update(auditLogs)
      .set({ revokedAt: now })
      .where(and(eq(auditLogs.transactionId, transactionId), isNull(auditLogs.revokedAt)))
      .returning({ clientId: auditLogs.clientId })
    // The first replay revokes, is announced to every instance's validation cache, and is reported; later
    // ones change nothing.
    if (revoked[0]) {
      await announceRevocation(tx, transactionId)
      await enqueueEvent(tx, revoked[0].clientId, 'code.replayed', { client_id: revoked[0].clientId, transaction_id: transactionId, revoked: true }, now)
    }
  })
  // This instance forgets at once; the others when the notice reaches them, milliseconds later.
  deps.revocations?.forget(transactionId)
  throw new OAuthError('code_already_used', 'The authorization code has already been used')
}

function expiredCode(): OAuthError {
  return new OAuthError('expired_code', 'The authorization code has expired: start a new verification')
}

/** Deletes codes that expired before `before`; their audit rows stay. Returns how many went. */
export async function pruneExpiredCodes(db: Database, before: Date): Promise<number> {
  const deleted = await db.delete(authCodes).where(lt(authCodes.expiresAt, before)).returning({ codeHash: authCodes.codeHash })
  return deleted.length
}
