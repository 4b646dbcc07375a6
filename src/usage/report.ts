import { and, eq, gte, lt, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { builtOnce } from '../db/prepared.ts'
import { auditLogs, usageDaily } from '../db/schema.ts'
import { OAuthError } from '../errors.ts'
import { utcDay, utcMonthBounds } from './counters.ts'

export const periods = ['day', 'month', 'all'] as const
export type Period = (typeof periods)[number]

/** A half-open interval of time: `start <= t < end`. */
export type Interval = { start: Date; end: Date }

export type UsageCounts = {
  total_verifications: number
  age_only_count: number
  biometric_count: number
  reverification_count: number
}

export type UsageQuery = { period?: Period; start_date?: string; end_date?: string }

const DAY_MS = 86_400_000

/**
 * Resolves the report's interval (DESIGN.md, "Usage"): `period` is `day`, `month` (default, the current
 * UTC calendar month) or `all`; `start_date`/`end_date` override it. A date-only `end_date` includes
 * that whole day; a timestamp `end_date` is the exclusive end.
 */
export function resolveInterval(query: UsageQuery, context: { now: Date; clientCreatedAt: Date }): Interval {
  const { now, clientCreatedAt } = context
  if (query.start_date !== undefined || query.end_date !== undefined) {
    const start = query.start_date !== undefined ? parseBound('start_date', query.start_date, 'start') : startOfDay(clientCreatedAt)
    const end = query.end_date !== undefined ? parseBound('end_date', query.end_date, 'end') : nextDay(now)
    if (start >= end) throw new OAuthError('invalid_request', 'start_date must be before end_date')
    return { start, end }
  }
  switch (query.period ?? 'month') {
    case 'day':
      return { start: startOfDay(now), end: nextDay(now) }
    case 'month':
      return utcMonthBounds(now)
    case 'all':
      return { start: startOfDay(clientCreatedAt), end: nextDay(now) }
  }
}

const dateOnly = /^(\d{4})-(\d{2})-(\d{2})$/
const timestamp = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i

/** A `YYYY-MM-DD` date (its first instant, or the next day's for an `end`) or an ISO 8601 timestamp; `name` labels the error. */
export function parseBound(name: string, value: string, side: 'start' | 'end'): Date {
  const isDateOnly = dateOnly.test(value)
  const match = isDateOnly ? dateOnly.exec(value) : timestamp.exec(value)
  const instant = new Date(isDateOnly ? `${value}T00:00:00Z` : value)
  // Rejects impossible calendar dates such as 2026-02-30, which Date would roll into March.
  if (!match || Number.isNaN(instant.getTime()) || !isRealDate(match[1]!, match[2]!, match[3]!)) {
    throw new OAuthError('invalid_request', `${name} must be YYYY-MM-DD or an ISO 8601 timestamp with a time zone, got "${value}"`)
  }
  const bound = side === 'end' && isDateOnly ? new Date(instant.getTime() + DAY_MS) : instant
  // Past 9999-12-31 an instant has no four-digit ISO form (nor a Postgres date to compare with): clamp.
  return bound.getTime() > LAST_INSTANT ? new Date(LAST_INSTANT) : bound
}

const LAST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

function isRealDate(year: string, month: string, day: string): boolean {
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)))
  return date.getUTCFullYear() === Number(year) && date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day)
}

function startOfDay(instant: Date): Date {
  return new Date(Math.floor(instant.getTime() / DAY_MS) * DAY_MS)
}

function nextDay(instant: Date): Date {
  return new Date(startOfDay(instant).getTime() + DAY_MS)
}

/**
 * Counts a client's approved verifications in an interval. Whole UTC days come from the daily counters;
 * only the partial days at the edges of a timestamp interval read audit rows, through their
 * (client_id, created_at) index.
 */
export async function countUsage(db: Database, clientId: string, interval: Interval): Promise<UsageCounts> {
  const firstWholeDay = startOfDay(interval.start).getTime() === interval.start.getTime() ? interval.start : nextDay(interval.start)
  const endOfWholeDays = startOfDay(interval.end)
  if (firstWholeDay >= endOfWholeDays) return countAuditRows(db, clientId, interval)
  const parts = await Promise.all([
    countAuditRows(db, clientId, { start: interval.start, end: firstWholeDay }),
    countDays(db, clientId, { start: firstWholeDay, end: endOfWholeDays }),
    countAuditRows(db, clientId, { start: endOfWholeDays, end: interval.end }),
  ])
  return parts.reduce(addCounts)
}

async function countDays(db: Database, clientId: string, interval: Interval): Promise<UsageCounts> {
  const [row] = await daysStatement(db).execute({ clientId, start: utcDay(interval.start), end: utcDay(interval.end) })
  return normalise(row)
}

async function countAuditRows(db: Database, clientId: string, interval: Interval): Promise<UsageCounts> {
  if (interval.start >= interval.end) return normalise(undefined)
  const [row] = await auditRowsStatement(db).execute({ clientId, start: interval.start.toISOString(), end: interval.end.toISOString() })
  return normalise(row)
}

// Both counts are built once (src/db/prepared.ts): Drizzle's builder filled a profile of the bench's usage load,
// and with it built once a process answered 26–83% more reports and peaked 13–14 MiB lower (docs/performance.md).
const daysStatement = builtOnce((db) =>
  db
    .select(counterSums)
    .from(usageDaily)
    .where(counterDays(sql.placeholder('clientId'), sql.placeholder('start'), sql.placeholder('end')))
    .prepare('usage_days'),
)

/** The daily counters' columns summed, as a report's counts: over whole days here, a day at a time in src/usage/daily.ts. */
export const counterSums = {
  total_verifications: sql<number>`coalesce(sum(${usageDaily.total}), 0)::int`,
  age_only_count: sql<number>`coalesce(sum(${usageDaily.ageOnly}), 0)::int`,
  biometric_count: sql<number>`coalesce(sum(${usageDaily.biometric}), 0)::int`,
  reverification_count: sql<number>`coalesce(sum(${usageDaily.reverification}), 0)::int`,
}

/** A client's counter rows for the days from `start` up to `end` (Postgres `date` text, end excluded). */
export function counterDays(clientId: string | Placeholder, start: string | Placeholder, end: string | Placeholder): SQL | undefined {
  return and(eq(usageDaily.clientId, clientId), gte(usageDaily.day, start), lt(usageDaily.day, end))
}

const auditRowsStatement = builtOnce((db) =>
  db
    .select({
      total_verifications: sql<number>`count(*)::int`,
      age_only_count: sql<number>`(count(*) filter (where ${auditLogs.methodClass} = 'age_only'))::int`,
      biometric_count: sql<number>`(count(*) filter (where ${auditLogs.methodClass} = 'biometric'))::int`,
      reverification_count: sql<number>`(count(*) filter (where ${auditLogs.verificationLevel} = 're_verification'))::int`,
    })
    .from(auditLogs)
    .where(
      and(
        eq(auditLogs.clientId, sql.placeholder('clientId')),
        gte(auditLogs.createdAt, sql`${sql.placeholder('start')}::timestamptz`),
        lt(auditLogs.createdAt, sql`${sql.placeholder('end')}::timestamptz`),
      ),
    )
    .prepare('usage_audit_rows'),
)

export function normalise(row: Partial<UsageCounts> | undefined): UsageCounts {
  return {
    total_verifications: Number(row?.total_verifications ?? 0),
    age_only_count: Number(row?.age_only_count ?? 0),
    biometric_count: Number(row?.biometric_count ?? 0),
    reverification_count: Number(row?.reverification_count ?? 0),
  }
}

function addCounts(a: UsageCounts, b: UsageCounts): UsageCounts {
  return {
    total_verifications: a.total_verifications + b.total_verifications,
    age_only_count: a.age_only_count + b.age_only_count,
    biometric_count: a.biometric_count + b.biometric_count,
    reverification_count: a.reverification_count + b.reverification_count,
  }
}
