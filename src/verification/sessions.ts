import { and, eq, gt, lt, sql, type SQL } from 'drizzle-orm'
import type { LogoVersion } from '../branding/branding.ts'
import { clientVersionIs } from '../clients/client-cache.ts'
import type { Limit } from '../config.ts'
import type { Database } from '../db/client.ts'
import type { PgSelect } from 'drizzle-orm/pg-core'
import { builtOnce, commitWithoutWaitingForDisk, sqlBuiltOnce } from '../db/prepared.ts'
import { rowsOf } from '../db/rows.ts'
import { clientLogos, clients, verificationSessions } from '../db/schema.ts'
import { OAuthError } from '../errors.ts'
import type { Clock } from '../lib/clock.ts'
import { constantTimeEqual, hmacHex, randomToken, sha256Hex } from '../lib/crypto.ts'
import type { ServerKeys } from '../keys/server-keys.ts'
import type { ApprovalClaim } from '../oauth/issue-code.ts'
import { countHitIn, refuseOverLimit, windowStart } from '../ratelimit/limits.ts'
import { monthDays, monthToDateIn } from '../usage/counters.ts'
import type { AuthorizationRequest } from './authorize.ts'

/** Long enough to find an ID card or a well-lit spot; short enough that an abandoned tab goes stale. */
export const SESSION_LIFETIME_MS = 30 * 60_000

/** Failed checks allowed in one session before the visitor must start again from the site. */
export const MAX_FAILED_ATTEMPTS = 5

export type VerificationSession = typeof verificationSessions.$inferSelect & { id: string }

type SessionDeps = { db: Database; clock: Clock; keys: Pick<ServerKeys, 'agePassKey'> }

/**
 * The session's CSRF token, derived from its id under a server key rather than stored: the database holds
 * only its hash, so a copy of the table gives no one a token to forge a form post with.
 */
function csrfTokenFor(keys: SessionDeps['keys'], id: string): string {
  return Buffer.from(hmacHex(keys.agePassKey, `csrf:${id}`), 'hex').subarray(0, 24).toString('base64url')
}

/** Where the page's statements count the address's hits (src/ratelimit/limits.ts). */
export type HitGuard = { key: string; limit: Limit }

export type OpenedSession =
  | { outcome: 'opened'; session: VerificationSession; logo: LogoVersion | undefined }
  /** The copy of the client the request was checked against is no longer the row: check again with a fresh one. */
  | { outcome: 'client_changed' }
  /** The client's plan has no verification left this month. */
  | { outcome: 'plan_limit' }

/**
 * Opens a session for a checked authorization request, bound to the browser holding `browserId`, in one
 * statement (issue 34): only while the client's row is still the version the request was checked against,
 * and its plan has a verification left this month (a hint: the completion counts exactly), counting a hit for
 * the address (refused with 429 past its limit, and then no session). The logo's version comes back with it.
 * Its commit does not wait for the disk (`commitWithoutWaitingForDisk`): a session lost in a crash of Postgres
 * is a page to open again.
 */
export async function openSession(
  deps: SessionDeps,
  request: AuthorizationRequest,
  browserId: string,
  guard: { clientVersion: string; hit: HitGuard },
): Promise<OpenedSession> {
  const id = randomToken(24)
  const now = deps.clock.now()
  const clientId = request.client.id
  const limit = request.client.verificationLimit
  const { start, end } = monthDays(now)
  const [row] = rowsOf<{ current: boolean; used: number | null; hits: number | null; opened: number } & LogoColumns>(
    await (limit === null ? openingOpen : openingLimited)(deps.db).execute({
      clientId,
      clientVersion: guard.clientVersion,
      limit,
      monthStart: start,
      monthEnd: end,
      hitKey: guard.hit.key,
      windowStart: windowStart(guard.hit.limit, now),
      hitMax: guard.hit.limit.max,
      idHash: sha256Hex(id),
      browserHash: sha256Hex(browserId),
      csrfHash: sha256Hex(csrfTokenFor(deps.keys, id)),
      redirectUri: request.redirectUri,
      state: request.state,
      ageRequired: request.ageRequired,
      codeChallenge: request.codeChallenge,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + SESSION_LIFETIME_MS).toISOString(),
    }),
  )
  if (!row!.current) return { outcome: 'client_changed' }
  if (limit !== null && row!.used! >= limit) return { outcome: 'plan_limit' }
  refuseOverLimit(row!.hits, guard.hit.limit, now)
  if (row!.opened !== 1) throw new Error('the session was not opened')
  const session: VerificationSession = {
    id,
    idHash: sha256Hex(id),
    browserHash: sha256Hex(browserId),
    csrfToken: csrfTokenFor(deps.keys, id),
    clientId,
    redirectUri: request.redirectUri,
    state: request.state,
    ageRequired: request.ageRequired,
    codeChallenge: request.codeChallenge,
    failedAttempts: 0,
    createdAt: now,
    expiresAt: new Date(now.getTime() + SESSION_LIFETIME_MS),
    completedAt: null,
    challengeHash: null,
    challengeTurns: null,
    challengeExpiresAt: null,
    closedMethods: [],
    passkeyChallengeHash: null,
    passkeyChallengeExpiresAt: null,
  }
  return { outcome: 'opened', session, logo: readLogo(row!) }
}

/**
 * {@link openSession}'s statement, built once per database (src/db/prepared.ts) for clients with a plan limit
 * and for those without: the values are placeholders.
 */
function openingSql(limited: boolean): SQL {
  const value = (name: string) => sql.placeholder(name)
  const used = limited ? monthToDateIn(value('clientId'), value('monthStart'), value('monthEnd')) : sql`null::integer`
  const ready = sql`guard where guard.current and ${limited ? sql`guard.used < ${value('limit')}::integer` : sql`true`}`
  return sql`with guard as (select ${clientVersionIs(value('clientId'), value('clientVersion'))} as current, ${used} as used),
    hit as (${countHitIn(ready, value('hitKey'), value('windowStart'))}),
    opened as (
      insert into verification_sessions (id_hash, browser_hash, csrf_token, client_id, redirect_uri, state, age_required, code_challenge, created_at, expires_at)
      select ${value('idHash')}::text, ${value('browserHash')}::text, ${value('csrfHash')}::text, ${value('clientId')}::text,
        ${value('redirectUri')}::text, ${value('state')}::text, ${value('ageRequired')}::integer, ${value('codeChallenge')}::text,
        ${value('createdAt')}::timestamptz, ${value('expiresAt')}::timestamptz
      from hit where hit.hits <= ${value('hitMax')}::integer
      returning 1
    )
    select guard.current, guard.used, (select hits from hit) as hits, (select count(*)::integer from opened) as opened, ${logoColumns},
      ${commitWithoutWaitingForDisk} as commit
    from guard left join client_logos logo on logo.client_id = ${value('clientId')}::text`
}

const openingOpen = sqlBuiltOnce('open_session', () => openingSql(false))
const openingLimited = sqlBuiltOnce('open_session_limited', () => openingSql(true))

/** A live session, the version of its client's row (src/clients/client-cache.ts) and its logo's. */
export type FoundSession = { session: VerificationSession; clientVersion: string | null; logo: LogoVersion | undefined }

/**
 * Finds a live session by its id, only for the browser it is bound to: a session id copied to another
 * browser (a shared link, a leaked log line) opens nothing. With `check` (a method's post), the same
 * statement also counts the address's hit and takes one of the session's attempts, atomically: of any
 * number of posts racing, at most the attempts left get one, so a burst cannot run more checks than the
 * limit allows. Neither happens for a session that is unknown, another browser's, completed or out of
 * attempts, nor the attempt when the hit is over its limit. A post that then turns out not to be a check
 * (a wrong token, a malformed form) gives the attempt back ({@link refundAttempt}).
 */
export async function findSession(
  deps: SessionDeps,
  id: string,
  browserId: string | undefined,
  check?: { hit: HitGuard },
): Promise<(FoundSession & { hits: number | null; attempt: number | null }) | undefined> {
  if (!browserId || typeof id !== 'string' || id.length > 64) return undefined
  const now = deps.clock.now()
  const idHash = sha256Hex(id)
  const browserHash = sha256Hex(browserId)
  // Placeholders reach the driver as they are (no column encoder): the instant as the text Postgres reads.
  const values = { idHash, browserHash, nowText: now.toISOString() }
  const [row] = check
    ? await sessionWithCheck(deps.db).execute({ ...values, hitKey: check.hit.key, windowStart: windowStart(check.hit.limit, now), hitMax: check.hit.limit.max })
    : await sessionAlone(deps.db).execute(values)
  if (!row || !constantTimeEqual(row.session.browserHash, browserHash)) return undefined
  return {
    session: { ...row.session, id, csrfToken: csrfTokenFor(deps.keys, id) },
    clientVersion: row.clientVersion,
    logo: row.logo ?? undefined,
    hits: row.hits === null ? null : Number(row.hits),
    attempt: row.attempt === null ? null : Number(row.attempt),
  }
}

/** What a session's read returns, with its client's row version and its logo's (both statements below). */
const sessionColumns = {
  session: verificationSessions,
  clientVersion: sql<string | null>`${clients}.xmin::text`,
  logo: { sha256: clientLogos.sha256, width: clientLogos.width, height: clientLogos.height },
}

/** The session's read, built once (src/db/prepared.ts): Drizzle took 150 µs to build the check's when it was built per request. */
const sessionAlone = builtOnce((db) =>
  liveSession(db.select({ ...sessionColumns, hits: sql<null>`null`, attempt: sql<null>`null` }).from(verificationSessions).$dynamic()).prepare('find_session'),
)

/** Both reads' rows: the live session by its id's hash, with its client's row and its logo. */
function liveSession<T extends PgSelect>(query: T) {
  return query
    .leftJoin(clients, eq(clients.id, verificationSessions.clientId))
    .leftJoin(clientLogos, eq(clientLogos.clientId, verificationSessions.clientId))
    .where(and(eq(verificationSessions.idHash, sql.placeholder('idHash')), gt(verificationSessions.expiresAt, sql.placeholder('nowText'))))
}

/**
 * The check's hit and attempt, as CTEs of the session's read: both only for a live, open session of this
 * browser with attempts left, and the attempt only when the hit is within its limit. The update re-reads a
 * row that a racing post changed meanwhile, so the attempts taken never pass the limit. The commit does not
 * wait for the disk (`commitWithoutWaitingForDisk`): the race is settled by the row's lock, not by the flush, and
 * what a crash of Postgres could lose is an attempt taken in its last few hundred milliseconds.
 */
const sessionWithCheck = builtOnce((db) => {
  const open = sql`id_hash = ${sql.placeholder('idHash')}::text and expires_at > ${sql.placeholder('nowText')}::timestamptz
    and browser_hash = ${sql.placeholder('browserHash')}::text and completed_at is null and failed_attempts < ${MAX_FAILED_ATTEMPTS}::integer`
  const hit = db.$with('hit', { hits: sql<number>`hits` }).as(
    countHitIn(sql`(select 1) as one where exists (select 1 from verification_sessions where ${open})`, sql.placeholder('hitKey'), sql.placeholder('windowStart')),
  )
  const reserved = db.$with('reserved', { attempt: sql<number>`failed_attempts` }).as(
    sql`update verification_sessions set failed_attempts = failed_attempts + 1
      where ${open} and (select hits from hit) <= ${sql.placeholder('hitMax')}::integer returning failed_attempts`,
  )
  const selected = {
    ...sessionColumns,
    hits: sql<number | null>`(select hits from ${hit})`,
    attempt: sql<number | null>`(select failed_attempts from ${reserved})`,
    commit: commitWithoutWaitingForDisk,
  }
  return liveSession(db.with(hit, reserved).select(selected).from(verificationSessions).$dynamic()).prepare('find_session_check')
})

export function checkCsrfToken(session: VerificationSession, presented: unknown): boolean {
  return typeof presented === 'string' && constantTimeEqual(presented, session.csrfToken)
}

/** Gives back an attempt taken for a check that does not count (an unreadable picture, a busy estimator). */
export async function refundAttempt(db: Database, session: VerificationSession): Promise<void> {
  await db
    .update(verificationSessions)
    .set({ failedAttempts: sql`greatest(${verificationSessions.failedAttempts} - 1, 0)` })
    .where(eq(verificationSessions.idHash, session.idHash))
}

/**
 * Marks the session complete, once, as part of the statement that issues its code (src/oauth/issue-code.ts):
 * of two submissions racing (a double click), only one changes the row and gets a code; the mark and the code
 * commit together or not at all, so a refused code (a plan at its limit) leaves the session open.
 */
export function claimSession(session: VerificationSession, now: Date): ApprovalClaim {
  return {
    kind: 'session',
    update: (approved) =>
      sql`update verification_sessions set completed_at = ${sql.placeholder('claimAt')}::timestamptz from ${approved}
        where id_hash = ${sql.placeholder('claimIdHash')}::text and completed_at is null returning 1`,
    values: { claimAt: now.toISOString(), claimIdHash: session.idHash },
    refused: () => new OAuthError('session_expired', 'The verification session was already completed'),
  }
}

type LogoColumns = { logo_sha256: string | null; logo_width: number | null; logo_height: number | null }
const logoColumns = sql`logo.sha256 as logo_sha256, logo.width as logo_width, logo.height as logo_height`

function readLogo(row: LogoColumns): LogoVersion | undefined {
  return row.logo_sha256 === null ? undefined : { sha256: row.logo_sha256, width: Number(row.logo_width), height: Number(row.logo_height) }
}

export async function pruneExpiredSessions(db: Database, before: Date): Promise<number> {
  const deleted = await db
    .delete(verificationSessions)
    .where(lt(verificationSessions.expiresAt, before))
    .returning({ idHash: verificationSessions.idHash })
  return deleted.length
}
