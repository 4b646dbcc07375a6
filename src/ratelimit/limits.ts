import { and, eq, inArray, lt, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { queryRows } from '../db/rows.ts'
import { rateLimits } from '../db/schema.ts'
import type { Limit } from '../config.ts'
import { OAuthError } from '../errors.ts'

export type LimitDeps = { db: Database; clock: { now(): Date } }

/** Thrown when a key is over its limit: the error body's status is 429, and `retryAfter` goes into the header. */
export class RateLimitedError extends OAuthError {
  constructor(readonly retryAfterSeconds: number) {
    super('too_many_requests', `Too many requests; try again in ${retryAfterSeconds} seconds`)
  }
}

function windowOf(limit: Limit, now: Date): { start: Date; retryAfterSeconds: number } {
  const start = Math.floor(now.getTime() / limit.windowMs) * limit.windowMs
  return { start: new Date(start), retryAfterSeconds: Math.max(1, Math.ceil((start + limit.windowMs - now.getTime()) / 1000)) }
}

/**
 * Counts one hit and refuses it when the key is past its limit. One statement, so every instance on the
 * database shares the count and parallel hits each count (fixed windows: simple, and at worst twice the
 * rate across a window's edge).
 */
export async function takeHit(deps: LimitDeps, key: string, limit: Limit): Promise<void> {
  const [row] = await queryRows<{ hits: number }>(deps.db, countHit(sql`(select 1) as one`, key, limit, deps.clock.now()))
  refuseOverLimit(row?.hits ?? null, limit, deps.clock.now())
}

/**
 * {@link takeHit}'s count as part of a larger statement: one hit for the key when `source` yields a row, and
 * `RETURNING hits`, which the caller hands to {@link refuseOverLimit}. The hosted page counts its hits in the
 * statement that opens a session or reads one (src/verification/sessions.ts).
 */
export function countHit(source: SQL, key: string, limit: Limit, now: Date): SQL {
  return countHitIn(source, key, windowStart(limit, now))
}

/**
 * {@link countHit} for a prepared statement: the key and the window's start may be placeholders, the
 * start's value given by {@link windowStart}.
 */
export function countHitIn(source: SQL, key: string | Placeholder, start: string | Placeholder): SQL {
  return sql`insert into rate_limits (key, window_start, hits) select ${key}::text, ${start}::timestamptz, 1 from ${source}
    on conflict (key) do update set hits = case when rate_limits.window_start = excluded.window_start then rate_limits.hits + 1 else 1 end, window_start = excluded.window_start
    returning hits`
}

/** Refuses a hit counted with {@link countHit} that took the key past its limit. */
export function refuseOverLimit(hits: number | null, limit: Limit, now: Date): void {
  if ((hits ?? 0) > limit.max) throw new RateLimitedError(windowOf(limit, now).retryAfterSeconds)
}

/**
 * Refuses when any of the keys is already past its limit in this window, without counting (for failures
 * counted later). One query however many keys: it runs before every client authentication.
 */
export async function checkLimit(deps: LimitDeps, keys: string[], limit: Limit): Promise<void> {
  const [row] = await deps.db.select({ hits: windowHits(keys, limit, deps.clock.now()) }).from(sql`(select 1) as one`)
  refuseAtLimit(row?.hits ?? null, limit, deps.clock.now())
}

/**
 * The highest count among `keys` in the current window, as a scalar subquery: selected beside another
 * row (the client being authenticated), the check costs no statement of its own.
 */
export function windowHits(keys: string[], limit: Limit, now: Date) {
  return hitsInWindow(keys, windowStart(limit, now))
}

/**
 * {@link windowHits} for a prepared statement: the keys and the window's start may be placeholders, the
 * start's value given by {@link windowStart}.
 */
export function hitsInWindow(keys: (string | Placeholder)[], start: string | Placeholder) {
  return sql<number | null>`(select max(${rateLimits.hits}) from ${rateLimits} where ${and(inArray(rateLimits.key, keys), sql`${rateLimits.windowStart} = ${start}::timestamptz`)})`
}

/** The start of the window of `limit` that `now` falls in, as the text Postgres reads. */
export function windowStart(limit: Limit, now: Date): string {
  return windowOf(limit, now).start.toISOString()
}

/** Refuses when a count read with {@link windowHits} has reached the limit. */
export function refuseAtLimit(hits: number | string | null, limit: Limit, now: Date): void {
  if (Number(hits ?? 0) >= limit.max) throw new RateLimitedError(windowOf(limit, now).retryAfterSeconds)
}

/** How many hits a key has taken in the current window (0 in a new one). */
export async function readHits(deps: LimitDeps, key: string, limit: Limit): Promise<number> {
  const [row] = await deps.db.select({ hits: windowHits([key], limit, deps.clock.now()) }).from(sql`(select 1) as one`)
  return Number(row?.hits ?? 0)
}

/** Forgets a key's hits: what a success does to the count of tries that led to it. */
export async function clearHits(deps: LimitDeps, key: string): Promise<void> {
  await deps.db.delete(rateLimits).where(eq(rateLimits.key, key))
}

/** Counts a hit without refusing: a failure that has already been answered. */
export async function recordHit(deps: LimitDeps, key: string, limit: Limit): Promise<void> {
  await takeHit(deps, key, { ...limit, max: Number.MAX_SAFE_INTEGER })
}

export async function pruneRateLimits(db: Database, before: Date): Promise<number> {
  const deleted = await db.delete(rateLimits).where(lt(rateLimits.windowStart, before)).returning({ key: rateLimits.key })
  return deleted.length
}
