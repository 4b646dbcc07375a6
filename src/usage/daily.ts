import { and, asc, eq, gte, lt, sql } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { usageDaily } from '../db/schema.ts'
import { utcDay } from './counters.ts'
import type { Interval, UsageCounts } from './report.ts'

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
    .select({
      day: usageDaily.day,
      total: sql<number>`sum(${usageDaily.total})::int`,
      ageOnly: sql<number>`sum(${usageDaily.ageOnly})::int`,
      biometric: sql<number>`sum(${usageDaily.biometric})::int`,
      reverification: sql<number>`sum(${usageDaily.reverification})::int`,
    })
    .from(usageDaily)
    .where(and(eq(usageDaily.clientId, clientId), gte(usageDaily.day, utcDay(interval.start)), lt(usageDaily.day, utcDay(interval.end))))
    .groupBy(usageDaily.day)
    .orderBy(asc(usageDaily.day))
  const byDay = new Map(rows.map((row) => [String(row.day), row]))
  const days: DayUsage[] = []
  for (let at = interval.start.getTime(); at < interval.end.getTime(); at += DAY_MS) {
    const day = utcDay(new Date(at))
    const row = byDay.get(day)
    days.push({
      day,
      usage: {
        total_verifications: Number(row?.total ?? 0),
        age_only_count: Number(row?.ageOnly ?? 0),
        biometric_count: Number(row?.biometric ?? 0),
        reverification_count: Number(row?.reverification ?? 0),
      },
    })
  }
  return days
}
