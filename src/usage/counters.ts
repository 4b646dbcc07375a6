import { sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { Executor } from '../db/client.ts'
import { queryRows } from '../db/rows.ts'
import { USAGE_SHARDS, type MethodClass } from '../db/schema.ts'

/** The UTC calendar day of an instant, as Postgres `date` text (YYYY-MM-DD). */
export function utcDay(instant: Date): string {
  return instant.toISOString().slice(0, 10)
}

/** First day of the UTC month containing `instant`, and of the month after. */
export function utcMonthBounds(instant: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), 1))
  const end = new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth() + 1, 1))
  return { start, end }
}

/** Approved verifications of a client in the UTC month containing `now`: at most 31 days of counter rows read. */
export async function countMonthToDate(db: Executor, clientId: string, now: Date): Promise<number> {
  const [row] = await queryRows<{ total: number }>(db, sql`select ${monthToDate(clientId, now)} as total`)
  return Number(row?.total ?? 0)
}

/**
 * {@link countMonthToDate} as an expression of a larger statement, read as of that statement's snapshot.
 * Not for the plan limit's own check: that is read after the client's row is locked (src/oauth/issue-code.ts).
 */
export function monthToDate(clientId: string, now: Date): SQL {
  const { start, end } = monthDays(now)
  return monthToDateIn(clientId, start, end)
}

/** {@link monthToDate} for a statement built once: the client and {@link monthDays}' bounds may be placeholders. */
export function monthToDateIn(clientId: string | Placeholder, start: string | Placeholder, end: string | Placeholder): SQL {
  return sql`(select coalesce(sum(total), 0)::integer from usage_daily
    where client_id = ${clientId}::text and day >= ${start}::date and day < ${end}::date)`
}

/**
 * The month's count read with a snapshot of its own (migration 0021), so that, called after the client's row
 * is locked, it sees every completion that held the lock before. `start` and `end` are {@link monthDays}'
 * (placeholders in the completion's statement, which is built once).
 */
export function monthToDateAfterLock(clientId: SQL, start: string | Placeholder, end: string | Placeholder): SQL {
  return sql`ofage_counted_verifications(${clientId}, ${start}::date, ${end}::date)`
}

/** The first day of the UTC month of `now` and of the month after, as Postgres `date` text. */
export function monthDays(now: Date): { start: string; end: string } {
  const { start, end } = utcMonthBounds(now)
  return { start: utcDay(start), end: utcDay(end) }
}

/** One counter row's increments, as {@link countVerification} adds them: the day, and 1 or 0 in each column. */
export type VerificationCount<V = string | number> = { clientId: V; day: V; ageOnly: V; biometric: V; reverification: V }

/** The values of {@link countVerification} for one approved verification. */
export function verificationCount(entry: { clientId: string; at: Date; methodClass: MethodClass; reverification: boolean }): VerificationCount {
  return {
    clientId: entry.clientId,
    day: utcDay(entry.at),
    ageOnly: entry.methodClass === 'age_only' ? 1 : 0,
    biometric: entry.methodClass === 'biometric' ? 1 : 0,
    reverification: entry.reverification ? 1 : 0,
  }
}

/**
 * Counts one approved verification for the row of `source` (the completion's approval, at most one row): the
 * part of the statement that writes its audit row and its code (src/oauth/issue-code.ts), so that usage
 * always equals the approved audit rows. The values are {@link verificationCount}'s, or placeholders for them.
 *
 * The row is the day's shard numbered by the connection's backend: `pg_backend_pid()` modulo
 * {@link USAGE_SHARDS}. A row updated by one completion stays locked until it commits, so with one row a day
 * every completion of a client waited for the previous one's commit. A connection runs one transaction at a
 * time, so completions committing at once on different connections share a row only when their backends'
 * process ids are equal modulo the shards. Every reader sums the shards; the plan limit does not lean on these
 * rows' locks (it locks the client's row, src/oauth/issue-code.ts).
 */
export function countVerification(source: SQL, count: VerificationCount<string | number | Placeholder>): SQL {
  return sql`insert into usage_daily (client_id, day, shard, total, age_only, biometric, reverification)
    select ${count.clientId}::text, ${count.day}::date, (pg_backend_pid() % ${sql.raw(String(USAGE_SHARDS))})::smallint, 1,
      ${count.ageOnly}::integer, ${count.biometric}::integer, ${count.reverification}::integer from ${source}
    on conflict (client_id, day, shard) do update set total = usage_daily.total + 1, age_only = usage_daily.age_only + excluded.age_only,
      biometric = usage_daily.biometric + excluded.biometric, reverification = usage_daily.reverification + excluded.reverification`
}
