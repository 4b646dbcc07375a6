import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseLabels, parseUtkFaceFields, type LabelledPhoto } from './eval-labels.ts'
import { formatEvaluation } from './eval-report.ts'
import { evaluateEstimates, gridCutoffs, policyCutoffs, type Evaluation, type Sample } from './evaluate.ts'
import { createAgeEstimator } from './pool.ts'
import type { AgeEstimator } from './types.ts'

export type EvalOptions = {
  dataset: string
  thresholds: number[]
  /** A grid of buffers to try at every threshold; when absent, each threshold gets `bufferFor(threshold)`. */
  buffers?: number[]
  /** The live check's buffer for a threshold: the decision policy's, passed in by the command layer. */
  bufferFor: (threshold: number) => number
  /** The live check's detector confidence bound: a photo counts when exactly one face reaches it. */
  minFaceScore: number
  workers: number
}

/** The --json document: the evaluation, and how it was taken. */
export type EvalReport = { mode: 'policy' | 'grid'; minFaceScore: number } & Evaluation

/**
 * Runs the estimator (`ofage estimator eval`) over an operator's labelled photos, spread over the
 * worker pool, and reports its error and decision rates (src/estimator/evaluate.ts).
 */
export async function evaluateDataset(options: EvalOptions, progress: (line: string) => void = () => {}): Promise<{ report: EvalReport; text: string }> {
  const labelsFile = join(options.dataset, 'labels.csv')
  if (!existsSync(labelsFile)) throw new Error(`${labelsFile} not found: put "path,age" lines in DIR/labels.csv`)
  const labels = parseLabels(readFileSync(labelsFile, 'utf8'))
  const inFlight = Math.max(1, options.workers) * 2
  const estimator = createAgeEstimator({ workers: options.workers, maxQueue: inFlight })
  try {
    await estimator.ready
    const samples = await estimateAll(estimator, labels, options, inFlight, progress)
    const policy = policyCutoffs(options.thresholds, options.bufferFor)
    const cutoffs = options.buffers ? gridCutoffs(options.thresholds, options.buffers) : policy
    const report: EvalReport = {
      mode: options.buffers ? 'grid' : 'policy',
      minFaceScore: options.minFaceScore,
      ...evaluateEstimates(samples, cutoffs, policy),
    }
    return { report, text: formatEvaluation(report, options.minFaceScore) }
  } finally {
    await estimator.close()
  }
}

/** Keeps `inFlight` photos with the pool at a time, so every worker stays busy and memory stays bounded. */
async function estimateAll(
  estimator: AgeEstimator,
  labels: LabelledPhoto[],
  options: EvalOptions,
  inFlight: number,
  progress: (line: string) => void,
): Promise<Sample[]> {
  const samples: Sample[] = new Array(labels.length)
  const started = performance.now()
  let next = 0
  let done = 0
  async function runner() {
    while (next < labels.length) {
      const index = next++
      const label = labels[index]!
      const bytes = new Uint8Array(readFileSync(resolve(options.dataset, label.path)))
      const analysis = await estimator.analyze(bytes).catch(() => undefined)
      const faces = analysis?.faces.filter((face) => face.faceScore >= options.minFaceScore) ?? []
      samples[index] = { trueAge: label.age, estimate: faces.length === 1 ? faces[0]!.age : null, ...parseUtkFaceFields(label.path) }
      if (++done % 50 === 0) progress(`${done}/${labels.length} photos, ${((performance.now() - started) / 1000).toFixed(0)} s`)
    }
  }
  await Promise.all(Array.from({ length: Math.min(inFlight, labels.length) }, runner))
  return samples
}
