import { asc } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { usageDaily } from '../db/schema.ts'
import { utcDay } from './counters.ts'
import { counterDays, counterSums, normalise, type Interval, type UsageCounts } from './report.ts'

/** One UTC day's approved verifications, as the usage report counts them. */
export type DayUsage = { day: string; usage: UsageCounts }

const DAY_MS = 86_400_000

/**
 * A client's counts for every UTC day of a day-aligned interval, days without verifications included as
 * zeros. Reads only the daily counters (a few rows a day), the same rows `countUsage` sums for whole days.
 */
export async function countUsageByDay(db: Database, clientId: string, interval: Interval): Promise<DayUsage[]> {
  // A day's count may be spread over several rows (its shards, src/usage/counters.ts).
  const rows = await db
    .select({ day: usageDaily.day, ...counterSums })
    .from(usageDaily)
    .where(counterDays(clientId, utcDay(interval.start), utcDay(interval.end)))
    .groupBy(usageDaily.day)
    .orderBy(asc(usageDaily.day))
  const byDay = new Map(rows.map((row) => [String(row.day), row]))
  const days: DayUsage[] = []
  for (let at = interval.start.getTime(); at < interval.end.getTime(); at += DAY_MS) {
    const day = utcDay(new Date(at))
    days.push({ day, usage: normalise(byDay.get(day)) })
  }
  return days
}
