import { and, eq, gte, lt, sql } from 'drizzle-orm'
import type { Executor } from '../db/client.ts'
import { usageDaily, type MethodClass } from '../db/schema.ts'

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

/** Approved verifications of a client in the UTC month containing `now`: at most 31 counter rows read. */
export async function countMonthToDate(db: Executor, clientId: string, now: Date): Promise<number> {
  const { start, end } = utcMonthBounds(now)
  const [row] = await db
    .select({ total: sql<number>`coalesce(sum(${usageDaily.total}), 0)::int` })
    .from(usageDaily)
    .where(and(eq(usageDaily.clientId, clientId), gte(usageDaily.day, utcDay(start)), lt(usageDaily.day, utcDay(end))))
  return Number(row?.total ?? 0)
}

/** Counts one approved verification; runs in the transaction that writes its audit row. */
export async function countVerification(
  db: Executor,
  entry: { clientId: string; at: Date; methodClass: MethodClass; reverification: boolean },
): Promise<void> {
  const ageOnly = entry.methodClass === 'age_only' ? 1 : 0
  const biometric = entry.methodClass === 'biometric' ? 1 : 0
  const reverification = entry.reverification ? 1 : 0
  await db
    .insert(usageDaily)
    .values({ clientId: entry.clientId, day: utcDay(entry.at), total: 1, ageOnly, biometric, reverification })
    .onConflictDoUpdate({
      target: [usageDaily.clientId, usageDaily.day],
      set: {
        total: sql`${usageDaily.total} + 1`,
        ageOnly: sql`${usageDaily.ageOnly} + ${ageOnly}`,
        biometric: sql`${usageDaily.biometric} + ${biometric}`,
        reverification: sql`${usageDaily.reverification} + ${reverification}`,
      },
    })
}
