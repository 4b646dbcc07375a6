import { and, eq, gt, isNotNull, isNull, lt, or, sql, type SQL } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { clientVersionIs } from '../clients/client-cache.ts'
import { builtOnce, sqlBuiltOnce } from '../db/prepared.ts'
import { rowsOf } from '../db/rows.ts'
import { hitsInWindow } from '../ratelimit/limits.ts'
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
 * A client with a plan limit takes the second way, since the month's count is read before the claim; so does a
 * request whose claim was already tried (`claimTried`, by {@link claimForCopy}).
 */
export async function redeemCode(deps: CodeDeps, client: Client, request: Redemption, options: { claimTried?: boolean } = {}): Promise<Verification> {
  const now = deps.clock.now()
  const codeHash = sha256Hex(request.code)
  // With a plan limit, the month's count is read between the checks and the claim (below).
  if (client.verificationLimit === null && !options.claimTried) {
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
  const { claimable, values } = claimValues(client, request, codeHash, now)
  if (!claimable) return undefined
  const rows = await preparedClaim(db).execute(values)
  return rows[0]
}

/**
 * The values of {@link claimRules}' placeholders for a request, and whether a claim can take it at all: a
 * redirect URI the client does not have or a verifier of the wrong shape is judged by the read.
 */
function claimValues(client: Client, request: Redemption, codeHash: string, now: Date) {
  const verifier = request.codeVerifier
  return {
    claimable: client.redirectUris.includes(request.redirectUri) && (verifier === undefined || isCodeVerifier(verifier)),
    values: {
      codeHash,
      clientId: client.id,
      now: now.toISOString(),
      redirectUri: request.redirectUri,
      challenge: verifier === undefined ? null : s256(verifier),
      state: request.state ?? null,
      minAge: client.minAge,
    },
  }
}

/**
 * The claim of {@link claimAtOnce}, one statement for every kind of request: a missing verifier, state or
 * minimum age is a null value.
 */
const preparedClaim = builtOnce((db) =>
  db
    .update(authCodes)
    .set({ usedAt: sql`${sql.placeholder('now')}::timestamptz` })
    .from(auditLogs)
    .where(claimRules())
    .returning(claimedColumns)
    .prepare('claim_code'),
)

/**
 * `checkRedemption`'s rules over a code joined to its audit row, with placeholders for the request's values.
 * Without a verifier the code must have no challenge; without a state, the code must have none unless PKCE
 * binds it (in the same order).
 */
function claimRules(): SQL {
  const value = (name: string) => sql.placeholder(name)
  const now = sql`${value('now')}::timestamptz`
  const state = sql`${value('state')}::text`
  const minAge = sql`${value('minAge')}::integer`
  return and(
    eq(authCodes.codeHash, value('codeHash')),
    eq(auditLogs.transactionId, authCodes.transactionId),
    eq(authCodes.clientId, value('clientId')),
    isNull(authCodes.usedAt),
    gt(authCodes.expiresAt, now),
    eq(authCodes.redirectUri, value('redirectUri')),
    sql`${authCodes.codeChallenge} is not distinct from ${value('challenge')}::text`,
    sql`(case when ${state} is null then ${or(isNull(authCodes.state), isNotNull(authCodes.codeChallenge))} else ${authCodes.state} = ${state} end)`,
    sql`(${minAge} is null or ${auditLogs.ageOver} >= ${minAge})`,
  )!
}

const claimedColumns = {
  transactionId: auditLogs.transactionId,
  clientId: auditLogs.clientId,
  subject: auditLogs.subject,
  ageOver: auditLogs.ageOver,
  methodClass: auditLogs.methodClass,
  verificationLevel: auditLogs.verificationLevel,
}

/** What {@link claimForCopy} learnt: whether the copy was current, the failures counted, and the claim if it was made. */
export type ClaimForCopy = { current: boolean; failures: number | null; verification: Verification | undefined }

/**
 * {@link claimAtOnce} for a client known from this instance's copy (src/clients/client-cache.ts), in the one
 * statement that also reads what authenticating it needs: that the copy is still the client's row, and the
 * failures counted under `authentication.keys` (the address, and the client id from it). The code is claimed
 * only when the copy is current, `allowed` (the caller proved the secret on the copy, and the copy is active) and
 * the failures are under their limit: the same rules, in the same order of precedence, as authenticating from
 * a read of the row and then claiming (src/oauth/exchange.ts).
 */
export async function claimForCopy(
  db: Database,
  copy: { client: Client; version: string },
  request: Redemption,
  now: Date,
  authentication: { keys: [string, string]; start: string; max: number; allowed: boolean },
): Promise<ClaimForCopy> {
  const { claimable, values } = claimValues(copy.client, request, sha256Hex(request.code), now)
  const [row] = rowsOf<{ current: boolean; hits: number | string | null } & Partial<Verification>>(
    await preparedClaimForCopy(db).execute({
      ...values,
      clientVersion: copy.version,
      key1: authentication.keys[0],
      key2: authentication.keys[1],
      windowStart: authentication.start,
      maxFailures: authentication.max,
      allowed: authentication.allowed && claimable,
    }),
  )
  const verification = row!.transactionId === null || row!.transactionId === undefined ? undefined : describeVerification(row as Verification)
  return { current: row!.current, failures: row!.hits === null ? null : Number(row!.hits), verification }
}

const preparedClaimForCopy = sqlBuiltOnce('claim_code_for_copy', () => {
  const value = (name: string) => sql.placeholder(name)
  return sql`with guard as (select ${clientVersionIs(value('clientId'), value('clientVersion'))} as current),
    failures as (select ${hitsInWindow([value('key1'), value('key2')], value('windowStart'))} as hits),
    claimed as (
      update ${authCodes} set used_at = ${value('now')}::timestamptz from ${auditLogs}, guard, failures
      where ${claimRules()} and guard.current and ${value('allowed')}::boolean and coalesce(failures.hits, 0) < ${value('maxFailures')}::integer
      returning ${sql.join(
        Object.entries(claimedColumns).map(([name, column]) => sql`${column} as ${sql.identifier(name)}`),
        sql`, `,
      )}
    )
    select guard.current, failures.hits, claimed.* from guard cross join failures left join claimed on true`
})

function describeVerification(row: Verification): Verification {
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
