import type { DecisionRow, Evaluation, GroupTable } from './evaluate.ts'
import type { Proportion } from './proportion.ts'

/** The text form of `ofage estimator eval`: the same figures as --json, laid out to read. */
export function formatEvaluation(evaluation: Evaluation, minFaceScore: number): string {
  const lines = [
    `photos: ${evaluation.samples}, estimated: ${evaluation.estimated}, ` +
      `without exactly one face (detector score >= ${minFaceScore}): ${evaluation.noSingleFace}`,
    `mean absolute error: ${years(evaluation.mae)} years`,
    '',
    'age band    n     MAE',
    ...evaluation.bands.map((band) => `${band.label.padEnd(10)} ${String(band.n).padStart(3)}  ${years(band.mae).padStart(6)}`),
    '',
    'Decisions: approved when the estimate >= cut-off (threshold + buffer); per photo, 95% Wilson intervals.',
    ...evaluation.decisions.flatMap(formatDecision),
  ]
  if (evaluation.groups) {
    lines.push('', 'By gender and group: approved of the 5 years under the threshold, refused of threshold + 7 and over.')
    lines.push(...evaluation.groups.flatMap(formatGroups))
  }
  return lines.join('\n')
}

function formatDecision(row: DecisionRow): string[] {
  const { falseAccepts: fa, falseRejects: fr } = row
  const line = (heading: string, p: Proportion) => `  ${heading.padEnd(22)} ${ages(p).padEnd(9)} ${share(p)}`
  return [
    '',
    `threshold ${row.threshold}, buffer ${row.buffer}, cut-off ${row.cutoff}`,
    line(`approved, under ${row.threshold}`, fa.fiveYearsUnder),
    line('', fa.allUnder),
    line(`refused, ${row.threshold} or over`, fr.allOver),
    line('', fr.nearThreshold),
    line('', fr.sevenYearsOver),
    line('', fr.twelveYearsOver),
  ]
}

function formatGroups(table: GroupTable): string[] {
  const under = table.rows[0]!.falseAccepts
  const over = table.rows[0]!.falseRejects
  const head = `threshold ${table.threshold}, cut-off ${table.cutoff}`
  return [
    '',
    `${head.padEnd(26)}${`approved ${ages(under)}`.padEnd(32)}${`refused ${ages(over)}`.padEnd(32)}   n    MAE`,
    ...table.rows.map(
      (row) =>
        `  ${row.label.padEnd(24)}${share(row.falseAccepts).padEnd(32)}${share(row.falseRejects).padEnd(32)}` +
        `${String(row.n).padStart(4)}  ${years(row.mae).padStart(5)}`,
    ),
  ]
}

const years = (value: number | null) => (value === null ? '-' : value.toFixed(2))
const percent = (value: number) => `${(value * 100).toFixed(1)}%`

/** "13-17", "under 18", "25+". */
function ages(p: Proportion): string {
  if (p.to === null) return `${p.from}+`
  if (p.from === 0) return `under ${p.to + 1}`
  return `${p.from}-${p.to}`
}

/** "9/198   4.5% (2.4-8.4%)", or "0/0" when nobody was in the range. */
function share(p: Proportion): string {
  const counts = `${p.count}/${p.n}`.padEnd(8)
  if (p.rate === null) return counts.trimEnd()
  return `${counts}${percent(p.rate).padStart(6)} (${(p.low! * 100).toFixed(1)}-${percent(p.high!)})`
}
