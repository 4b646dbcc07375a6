/**
 * Evaluates candidate estimators (a model, a test-time augmentation, a weighted mean of models) on the
 * cached per-photo estimates, with the buffer each gets by the interval rule. Aggregates only.
 */
import { evaluateEstimates, intervalRuleBuffer, type Sample } from '../../src/estimator/evaluate.ts'
import { GROUPS, type Gender, type Group } from '../../src/estimator/eval-labels.ts'
import type { Proportion } from '../../src/estimator/proportion.ts'
import type { Cache } from './compute.ts'

export type Estimates = Record<string, number>
/** A way to read one photo's age from its cached model outputs. */
export type Candidate = { name: string; read: (est: Estimates) => number }

export const THRESHOLDS = [18, 21, 25] as const
/** The interval rule's bound: the upper end of the 95% interval of false accepts of the five years under. */
const FALSE_ACCEPT_BOUND = 0.05
const MAX_BUFFER = 20

export type ThresholdResult = { threshold: number; buffer: number; approvedUnder: Proportion; refusedOver: Proportion }
export type GroupRates = { label: string; approvedUnder: Proportion; refusedOver: Proportion }
export type CandidateResult = {
  name: string
  mae: number
  thresholds: ThresholdResult[]
  /** At 18 with its interval-rule buffer: 13–17 approved and 25+ refused per gender and per group. */
  groups: GroupRates[]
  /** Worst group's rate over the best group's, among UTKFace's five groups (Infinity when the best is 0). */
  ratioApproved: number
  ratioRefused: number
}

export function samplesOf(cache: Cache, read: Candidate['read']): Sample[] {
  return Object.values(cache).map((record) => ({
    trueAge: record.age,
    estimate: record.faces === 1 && Object.keys(record.est).length ? read(record.est) : null,
    gender: record.gender as Gender | undefined,
    group: record.group as Group | undefined,
  }))
}


export function evaluateCandidate(cache: Cache, candidate: Candidate): CandidateResult {
  const samples = samplesOf(cache, candidate.read)
  const thresholds = THRESHOLDS.map((threshold) => {
    const buffer = intervalRuleBuffer(samples, threshold, FALSE_ACCEPT_BOUND, MAX_BUFFER) ?? MAX_BUFFER
    const row = evaluateEstimates(samples, [{ threshold, buffer }], []).decisions[0]!
    return { threshold, buffer, approvedUnder: row.falseAccepts.fiveYearsUnder, refusedOver: row.falseRejects.sevenYearsOver }
  })
  const at18 = thresholds[0]!
  const evaluation = evaluateEstimates(samples, [at18], [at18])
  const groups = evaluation.groups![0]!.rows.map((row) => ({ label: row.label, approvedUnder: row.falseAccepts, refusedOver: row.falseRejects }))
  const ratio = (pick: (g: GroupRates) => Proportion) => {
    const rates = groups.filter((g) => (GROUPS as readonly string[]).includes(g.label)).map((g) => pick(g).rate ?? 0)
    const best = Math.min(...rates)
    const worst = Math.max(...rates)
    return worst === 0 ? 1 : best === 0 ? Infinity : worst / best
  }
  return {
    name: candidate.name,
    mae: evaluation.mae ?? NaN,
    thresholds,
    groups,
    ratioApproved: ratio((g) => g.approvedUnder),
    ratioRefused: ratio((g) => g.refusedOver),
  }
}

const pct = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`)
export const formatProportion = (p: Proportion) => `${pct(p.rate)} (${pct(p.low).replace('%', '')}–${pct(p.high)}) ${p.count}/${p.n}`
const ratioText = (r: number) => (Number.isFinite(r) ? `${r.toFixed(1)}×` : '∞')

/** One line a candidate: MAE, then per threshold its buffer, approved under, refused over; then the group ratios at 18. */
export function formatSummary(result: CandidateResult): string {
  const cells = result.thresholds.map((t) => `${t.threshold}+${t.buffer}: ${formatProportion(t.approvedUnder)} | ${formatProportion(t.refusedOver)}`)
  return `${result.name.padEnd(44)} MAE ${result.mae.toFixed(2)}  ${cells.join('  ')}  groups at 18: approved ${ratioText(result.ratioApproved)}, refused ${ratioText(result.ratioRefused)}`
}

export function formatGroups(result: CandidateResult): string {
  const lines = [`${result.name}, threshold 18, buffer ${result.thresholds[0]!.buffer}: 13–17 approved | 25+ refused`]
  for (const g of result.groups) lines.push(`  ${g.label.padEnd(8)} ${formatProportion(g.approvedUnder).padEnd(28)} ${formatProportion(g.refusedOver)}`)
  return lines.join('\n')
}
