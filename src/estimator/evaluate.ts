/**
 * Measures the estimator on labelled photos (`ofage estimator eval`): mean absolute error overall and
 * by age band; for each threshold and buffer, how often people under the threshold clear the cut-off
 * (threshold + buffer: false accepts) and how often people over it do not (false rejects), each with a
 * 95% interval; and, when the photos carry gender and group, the same two rates per gender and group.
 * Pure arithmetic over (true age, estimate) pairs. Photos without exactly one face are counted apart,
 * since the live check would refuse them before any age decision.
 */
import { GENDERS, GROUPS, type Gender, type Group } from './eval-labels.ts'
import { measureProportion, type Proportion } from './proportion.ts'

export type Sample = { trueAge: number; estimate: number | null; gender?: Gender; group?: Group }
type Estimated = Sample & { estimate: number }

export type Band = { label: string; from: number; to: number }

export const AGE_BANDS: Band[] = [
  { label: 'under 13', from: 0, to: 13 },
  { label: '13-17', from: 13, to: 18 },
  { label: '18-24', from: 18, to: 25 },
  { label: '25-34', from: 25, to: 35 },
  { label: '35-54', from: 35, to: 55 },
  { label: '55+', from: 55, to: 200 },
]

/** A decision rule: approve when the estimate is at least threshold + buffer (the cut-off). */
export type Cutoff = { threshold: number; buffer: number }

export type BandError = { label: string; n: number; mae: number | null }

/**
 * The age ranges each rate is taken over, relative to the threshold t: false accepts of t−5..t−1 (the
 * minors a buffer is for: 13–17 at 18) and of everyone under t; false rejects of everyone at or over t,
 * of t..t+6 (young adults: 18–24 at 18), of t+7 and over (25+ at 18) and of t+12 and over (30+ at 18).
 */
export type DecisionRow = Cutoff & {
  cutoff: number
  falseAccepts: { fiveYearsUnder: Proportion; allUnder: Proportion }
  falseRejects: { allOver: Proportion; nearThreshold: Proportion; sevenYearsOver: Proportion; twelveYearsOver: Proportion }
}

/** One gender or group at one cut-off: false accepts of t−5..t−1, false rejects of t+7 and over. */
export type GroupRow = {
  dimension: 'all' | 'gender' | 'group'
  label: string
  n: number
  mae: number | null
  falseAccepts: Proportion
  falseRejects: Proportion
}

export type GroupTable = Cutoff & { cutoff: number; rows: GroupRow[] }

export type Evaluation = {
  samples: number
  estimated: number
  noSingleFace: number
  mae: number | null
  bands: BandError[]
  decisions: DecisionRow[]
  /** Null when no photo carries a gender and group (only UTKFace-style file names do). */
  groups: GroupTable[] | null
}

/** One row per threshold, each with the buffer the policy gives it (the live check's defaults). */
export function policyCutoffs(thresholds: number[], bufferFor: (threshold: number) => number): Cutoff[] {
  return thresholds.map((threshold) => ({ threshold, buffer: bufferFor(threshold) }))
}

/** Every threshold with every buffer, to choose a buffer from. */
export function gridCutoffs(thresholds: number[], buffers: number[]): Cutoff[] {
  return thresholds.flatMap((threshold) => buffers.map((buffer) => ({ threshold, buffer })))
}

/**
 * Rates for each of `cutoffs`; the per-gender and per-group table for each of `groupCutoffs` (the
 * policy's rows, so that a grid of buffers does not multiply it).
 */
export function evaluateEstimates(samples: Sample[], cutoffs: Cutoff[], groupCutoffs: Cutoff[] = cutoffs): Evaluation {
  const estimated = samples.filter((s): s is Estimated => s.estimate !== null)
  const bands = AGE_BANDS.map((band) => {
    const rows = estimated.filter((row) => row.trueAge >= band.from && row.trueAge < band.to)
    return { label: band.label, n: rows.length, mae: meanAbsoluteError(rows) }
  })
  const withGroups = estimated.some((row) => row.gender !== undefined || row.group !== undefined)
  return {
    samples: samples.length,
    estimated: estimated.length,
    noSingleFace: samples.length - estimated.length,
    mae: meanAbsoluteError(estimated),
    bands,
    decisions: cutoffs.map((cutoff) => decisionRow(estimated, cutoff)),
    groups: withGroups ? groupCutoffs.map((cutoff) => groupTable(estimated, cutoff)) : null,
  }
}

/**
 * The interval rule for choosing a buffer (issue 22): the smallest whole buffer, from 0 up to `max`, at
 * which the upper end of the 95% Wilson interval of false accepts of the five years under the threshold
 * is at most `bound`. Bounding the interval rather than the point estimate keeps a buffer chosen on one
 * sample from failing on the next (21's, chosen on the dev set's 4.1%, measured 8.3% on held-out faces).
 * Null when no buffer up to `max` meets it, or no photo of those ages was estimated.
 */
export function intervalRuleBuffer(samples: Sample[], threshold: number, bound = 0.05, max = 20): number | null {
  const estimated = samples.filter((s): s is Estimated => s.estimate !== null)
  for (let buffer = 0; buffer <= max; buffer++) {
    const high = decisionRow(estimated, { threshold, buffer }).falseAccepts.fiveYearsUnder.high
    if (high === null) return null
    if (high <= bound) return buffer
  }
  return null
}

function decisionRow(rows: Estimated[], { threshold, buffer }: Cutoff): DecisionRow {
  const cutoff = threshold + buffer
  const accepted = (row: Estimated) => row.estimate >= cutoff
  const refused = (row: Estimated) => row.estimate < cutoff
  return {
    threshold,
    buffer,
    cutoff,
    falseAccepts: {
      fiveYearsUnder: measureProportion(rows, Math.max(0, threshold - 5), threshold - 1, accepted),
      allUnder: measureProportion(rows, 0, threshold - 1, accepted),
    },
    falseRejects: {
      allOver: measureProportion(rows, threshold, null, refused),
      nearThreshold: measureProportion(rows, threshold, threshold + 6, refused),
      sevenYearsOver: measureProportion(rows, threshold + 7, null, refused),
      twelveYearsOver: measureProportion(rows, threshold + 12, null, refused),
    },
  }
}

function groupTable(rows: Estimated[], { threshold, buffer }: Cutoff): GroupTable {
  const cutoff = threshold + buffer
  const row = (dimension: GroupRow['dimension'], label: string, members: Estimated[]): GroupRow => ({
    dimension,
    label,
    n: members.length,
    mae: meanAbsoluteError(members),
    falseAccepts: measureProportion(members, Math.max(0, threshold - 5), threshold - 1, (m) => m.estimate >= cutoff),
    falseRejects: measureProportion(members, threshold + 7, null, (m) => m.estimate < cutoff),
  })
  return {
    threshold,
    buffer,
    cutoff,
    rows: [
      row('all', 'all', rows.filter((r) => r.gender !== undefined || r.group !== undefined)),
      ...GENDERS.map((gender) => row('gender', gender, rows.filter((r) => r.gender === gender))),
      ...GROUPS.map((group) => row('group', group, rows.filter((r) => r.group === group))),
    ],
  }
}

function meanAbsoluteError(rows: Estimated[]): number | null {
  return rows.length === 0 ? null : rows.reduce((sum, row) => sum + Math.abs(row.estimate - row.trueAge), 0) / rows.length
}
