import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { DEFAULT_FACE_POLICY } from '../verification/methods/face-policy.ts'
import { evaluateEstimates, formatEvaluation, parseLabels, type Sample } from './evaluate.ts'
import { createAgeEstimator } from './pool.ts'

export type EvalOptions = { dataset: string; thresholds: number[]; buffers: number[]; workers: number }

/**
 * `ofage estimator eval`: runs the estimator over an operator's labelled photos (DIR/labels.csv, lines
 * of "path,age") and reports its error and false-accept rates. A photo counts as estimated when the
 * detector finds exactly one face above the policy's confidence bound, as the live check requires.
 */
export async function evaluateDataset(options: EvalOptions, progress: (line: string) => void = () => {}) {
  const labelsFile = join(options.dataset, 'labels.csv')
  if (!existsSync(labelsFile)) throw new Error(`${labelsFile} not found: put "path,age" lines in DIR/labels.csv`)
  const labels = parseLabels(readFileSync(labelsFile, 'utf8'))
  const estimator = createAgeEstimator({ workers: options.workers, maxQueue: labels.length })
  try {
    await estimator.ready
    const samples: Sample[] = []
    for (const [index, label] of labels.entries()) {
      const bytes = new Uint8Array(readFileSync(resolve(options.dataset, label.path)))
      const analysis = await estimator.analyze(bytes).catch(() => undefined)
      const faces = analysis?.faces.filter((face) => face.faceScore >= DEFAULT_FACE_POLICY.minFaceScore) ?? []
      samples.push({ trueAge: label.age, estimate: faces.length === 1 ? faces[0]!.age : null })
      if ((index + 1) % 25 === 0) progress(`${index + 1}/${labels.length} photos`)
    }
    const evaluation = evaluateEstimates(samples, options.thresholds, options.buffers)
    return { evaluation, text: formatEvaluation(evaluation) }
  } finally {
    await estimator.close()
  }
}
