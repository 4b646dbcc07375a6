/**
 * Measures the estimator on an operator's labelled photos (`ofage estimator eval`): mean absolute
 * error overall and by age band, and for each threshold and buffer the false-accept rate (people under
 * the threshold whose estimate clears threshold + buffer) and the false-reject rate (people at or over
 * it who do not). Pure arithmetic over (true age, estimate) pairs; photos without exactly one face are
 * counted apart, since the live check would refuse them before any age decision.
 */

export type Sample = { trueAge: number; estimate: number | null }

export type Band = { label: string; from: number; to: number }

export const AGE_BANDS: Band[] = [
  { label: 'under 13', from: 0, to: 13 },
  { label: '13-17', from: 13, to: 18 },
  { label: '18-24', from: 18, to: 25 },
  { label: '25-34', from: 25, to: 35 },
  { label: '35-54', from: 35, to: 55 },
  { label: '55+', from: 55, to: 200 },
]

export type BandError = { label: string; n: number; mae: number | null }
export type RateRow = { threshold: number; buffer: number; under: number; falseAccepts: number; far: number | null; over: number; falseRejects: number; frr: number | null }

export type Evaluation = {
  samples: number
  estimated: number
  noSingleFace: number
  mae: number | null
  bands: BandError[]
  rates: RateRow[]
}

export function evaluateEstimates(samples: Sample[], thresholds: number[], buffers: number[]): Evaluation {
  const estimated = samples.filter((s): s is { trueAge: number; estimate: number } => s.estimate !== null)
  const mae = (rows: { trueAge: number; estimate: number }[]) =>
    rows.length === 0 ? null : rows.reduce((sum, row) => sum + Math.abs(row.estimate - row.trueAge), 0) / rows.length
  const bands = AGE_BANDS.map((band) => {
    const rows = estimated.filter((row) => row.trueAge >= band.from && row.trueAge < band.to)
    return { label: band.label, n: rows.length, mae: mae(rows) }
  })
  const rates: RateRow[] = []
  for (const threshold of thresholds) {
    const under = estimated.filter((row) => row.trueAge < threshold)
    const over = estimated.filter((row) => row.trueAge >= threshold)
    for (const buffer of buffers) {
      const falseAccepts = under.filter((row) => row.estimate >= threshold + buffer).length
      const falseRejects = over.filter((row) => row.estimate < threshold + buffer).length
      rates.push({
        threshold,
        buffer,
        under: under.length,
        falseAccepts,
        far: under.length ? falseAccepts / under.length : null,
        over: over.length,
        falseRejects,
        frr: over.length ? falseRejects / over.length : null,
      })
    }
  }
  return { samples: samples.length, estimated: estimated.length, noSingleFace: samples.length - estimated.length, mae: mae(estimated), bands, rates }
}

/** Reads `path,age` lines (a header line is skipped; paths relative to the dataset folder). */
export function parseLabels(csv: string): { path: string; age: number }[] {
  const rows: { path: string; age: number }[] = []
  for (const [index, line] of csv.split(/\r?\n/).entries()) {
    const trimmed = line.trim()
    if (!trimmed || trimmed.startsWith('#')) continue
    const comma = trimmed.lastIndexOf(',')
    const path = trimmed.slice(0, comma).trim().replace(/^"|"$/g, '')
    const age = Number(trimmed.slice(comma + 1).trim())
    if (comma <= 0 || !Number.isFinite(age)) {
      if (index === 0) continue
      throw new Error(`line ${index + 1}: expected "path,age", got "${trimmed}"`)
    }
    rows.push({ path, age })
  }
  return rows
}

export function formatEvaluation(evaluation: Evaluation): string {
  const pct = (value: number | null) => (value === null ? '   -  ' : `${(value * 100).toFixed(1).padStart(5)}%`)
  const years = (value: number | null) => (value === null ? '-' : value.toFixed(2))
  const lines = [
    `photos: ${evaluation.samples}, estimated: ${evaluation.estimated}, without exactly one face: ${evaluation.noSingleFace}`,
    `mean absolute error: ${years(evaluation.mae)} years`,
    '',
    'age band    n     MAE',
    ...evaluation.bands.map((band) => `${band.label.padEnd(10)} ${String(band.n).padStart(3)}  ${years(band.mae).padStart(6)}`),
    '',
    'threshold  buffer  under  false accepts     FAR   over  false rejects     FRR',
    ...evaluation.rates.map(
      (r) =>
        `${String(r.threshold).padStart(9)}  ${String(r.buffer).padStart(6)}  ${String(r.under).padStart(5)}  ${String(r.falseAccepts).padStart(13)}  ${pct(r.far)}  ${String(r.over).padStart(5)}  ${String(r.falseRejects).padStart(13)}  ${pct(r.frr)}`,
    ),
  ]
  return lines.join('\n')
}
