/**
 * A rate measured on a sample, with its 95% confidence interval. The Wilson score interval (Wilson,
 * JASA 1927) is used rather than the normal approximation p ± 1.96·√(p(1−p)/n), which collapses to
 * [0, 0] when no false accept is seen and runs past 0 or 1 on the small groups an evaluation splits into.
 */
export type Proportion = {
  /** Youngest and oldest age counted (inclusive); `to` is null when open-ended ("25+"). */
  from: number
  to: number | null
  /** Photos counted (estimated ones in the age range) and, of them, those that went the wrong way. */
  n: number
  count: number
  /** count / n, and the 95% Wilson interval's bounds; all null when n is 0. */
  rate: number | null
  low: number | null
  high: number | null
}

/** The normal quantile for a two-sided 95% interval. */
const Z95 = 1.959963984540054

/** The Wilson score interval of `count` successes in `n` trials, or null when n is 0. */
export function wilsonInterval(count: number, n: number, z = Z95): { low: number; high: number } | null {
  if (n <= 0) return null
  const p = count / n
  const z2 = z * z
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n)
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))
  // Clamp rounding noise: at count 0 or n the exact bound is 0 or 1.
  return { low: count === 0 ? 0 : Math.max(0, centre - half), high: count === n ? 1 : Math.min(1, centre + half) }
}

/** The share of `rows` in the age range [from, to] for which `wrong` holds, with its interval. */
export function measureProportion<T extends { trueAge: number }>(rows: T[], from: number, to: number | null, wrong: (row: T) => boolean): Proportion {
  const inRange = rows.filter((row) => row.trueAge >= from && (to === null || row.trueAge <= to))
  const count = inRange.filter(wrong).length
  const interval = wilsonInterval(count, inRange.length)
  return {
    from,
    to,
    n: inRange.length,
    count,
    rate: inRange.length ? count / inRange.length : null,
    low: interval?.low ?? null,
    high: interval?.high ?? null,
  }
}
