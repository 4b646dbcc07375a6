import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadGraphModel, type GraphModel } from '@tensorflow/tfjs-converter'
import * as tf from '@tensorflow/tfjs-core'
import { faceAssetFolders } from '../../src/estimator/embedded-assets.ts'
import { HUMAN_MODELS, runHumanModelsInOnnx } from '../../src/estimator/human-models.ts'
import { loadOnnxRuntime, type OnnxRuntime } from '../../src/estimator/onnxruntime.ts'
import { readPngPixels } from '../../src/images/png-pixels.ts'
import { closeUpJpeg, readSample } from './sample-photos.ts'
import { sharedHumanEngine } from './shared-engine.ts'

/**
 * Human's detector and mesh in onnxruntime (src/estimator/human-models.ts) against the same files in tfjs:
 * each model gets its own GraphModel here, so the shared engine's models are left as they are.
 */
const { modelsDir } = faceAssetFolders()
let ort: OnnxRuntime
const load = async (name: keyof typeof HUMAN_MODELS) => loadGraphModel(`file://${join(modelsDir, HUMAN_MODELS[name])}`)

beforeAll(async () => {
  // The shared engine sets up tfjs' WASM backend, which the reference runs on.
  await sharedHumanEngine()
  ort = await loadOnnxRuntime()
}, 120_000)

/** A photo as `side` × `side` RGB, as a [1, side, side, 3] tensor of `scale(sample)`. */
async function photo(bytes: Uint8Array, side: number, scale: (x: tf.Tensor) => tf.Tensor): Promise<tf.Tensor4D> {
  const png = await new Bun.Image(bytes).resize(side, side, { fit: 'fill' }).png({ compressionLevel: 0 }).bytes()
  const pixels = readPngPixels(png)!
  return tf.tidy(() => scale(tf.tensor4d(Float32Array.from(pixels.data), [1, side, side, 3])) as tf.Tensor4D)
}

/** The largest difference between two runs' outputs, output by output (same order, same shapes). */
function largestDifference(got: tf.Tensor[], want: tf.Tensor[]): number {
  expect(got.map((t) => t.shape)).toEqual(want.map((t) => t.shape))
  let largest = 0
  got.forEach((tensor, i) => {
    const [a, b] = [tensor.dataSync(), want[i]!.dataSync()]
    for (let j = 0; j < a.length; j++) largest = Math.max(largest, Math.abs(a[j]! - b[j]!))
  })
  return largest
}

describe("Human's detector and mesh in onnxruntime", () => {
  let models: Record<keyof typeof HUMAN_MODELS, GraphModel>
  let restore: () => void
  const reference = (model: GraphModel, input: tf.Tensor) => [Object.getPrototypeOf(model).execute.call(model, input)].flat() as tf.Tensor[]
  const converted = (model: GraphModel, input: tf.Tensor) => [model.execute(input)].flat() as tf.Tensor[]

  beforeAll(async () => {
    models = { blazeface: await load('blazeface'), facemesh: await load('facemesh') }
    restore = runHumanModelsInOnnx(tf, models, modelsDir, ort)
  })
  afterAll(() => restore?.())

  test('the detector gives what tfjs gives on real photos: the same outputs, in the same order and shapes', async () => {
    for (const bytes of [await readSample('sample1.jpg'), await readSample('sample6.jpg'), await closeUpJpeg('olderLooking')]) {
      // As Human feeds it: 256 × 256, scaled to -1..1.
      const input = await photo(bytes, 256, (x) => tf.sub(tf.div(x, 127.5), 1))
      const [got, want] = [converted(models.blazeface, input), reference(models.blazeface, input)]
      expect(got).toHaveLength(4)
      // Box offsets and key points are in pixels of the 256 px input (up to about 200), scores are logits.
      expect(largestDifference(got, want)).toBeLessThan(5e-3)
      tf.dispose([input, ...got, ...want])
    }
  })

  test('the mesh gives what tfjs gives on face photos: 468 points, the face score and the contours', async () => {
    for (const which of ['olderLooking', 'youngerLooking'] as const) {
      // As Human feeds it: the face's crop at 192 px, 0..1.
      const input = await photo(await closeUpJpeg(which), 192, (x) => tf.div(x, 255))
      const [got, want] = [converted(models.facemesh, input), reference(models.facemesh, input)]
      expect(got.map((t) => t.shape.at(-1))).toEqual([1404, 1, 266])
      // Points in pixels of the 192 px crop; the weights are float16, widened the same way by both.
      expect(largestDifference(got, want)).toBeLessThan(2e-3)
      tf.dispose([input, ...got, ...want])
    }
  })

  test('takes one float32 tensor, as Human passes it', () => {
    const ints = tf.zeros([1, 192, 192, 3], 'int32')
    expect(() => models.facemesh.execute(ints)).toThrow('the model takes one float32 tensor')
    expect(() => models.facemesh.execute([ints, ints])).toThrow('the model takes one float32 tensor')
    ints.dispose()
  })
})

describe('runHumanModelsInOnnx', () => {
  test('puts tfjs back when asked, and leaves both models on tfjs when one of them cannot be converted', async () => {
    const models = { blazeface: await load('blazeface'), facemesh: await load('facemesh') }
    const tfjs = Object.getPrototypeOf(models.blazeface).execute
    runHumanModelsInOnnx(tf, models, modelsDir, ort)()
    expect([models.blazeface.execute, models.facemesh.execute]).toEqual([tfjs, tfjs])

    // A mesh whose graph has an operation the conversion does not read.
    const dir = mkdtempSync(join(tmpdir(), 'ofage-human-models-'))
    try {
      cpSync(modelsDir, dir, { recursive: true })
      const json = JSON.parse(readFileSync(join(dir, HUMAN_MODELS.facemesh), 'utf8'))
      json.modelTopology.node.find((node: { op: string }) => node.op === 'MaxPool').op = 'AvgPool'
      writeFileSync(join(dir, HUMAN_MODELS.facemesh), JSON.stringify(json))
      expect(() => runHumanModelsInOnnx(tf, models, dir, ort)).toThrow(/^facemesh: the operation AvgPool \(.*\) is not converted$/)
      expect([models.blazeface.execute, models.facemesh.execute]).toEqual([tfjs, tfjs])
      expect(() => runHumanModelsInOnnx(tf, { blazeface: models.blazeface }, dir, ort)).toThrow("Human's facemesh model is not loaded")

      // A mesh whose output is an image (a convolution's, before the reshape): it would come out in NCHW.
      json.modelTopology.node.find((node: { op: string }) => node.op === 'AvgPool').op = 'MaxPool'
      const mesh = json.modelTopology.node.find((node: { name: string }) => node.name === 'Identity_2')
      mesh.input = [json.modelTopology.node.find((node: { name: string; input?: string[] }) => node.name === 'StatefulPartitionedCall/model_1/output_mesh/Reshape').input[0]]
      writeFileSync(join(dir, HUMAN_MODELS.facemesh), JSON.stringify(json))
      expect(() => runHumanModelsInOnnx(tf, models, dir, ort)).toThrow('facemesh: its output Identity_2 is an image, which is not converted back to NHWC')
      expect([models.blazeface.execute, models.facemesh.execute]).toEqual([tfjs, tfjs])
    } finally {
      rmSync(dir, { recursive: true, force: true })
      tf.dispose([...Object.values(models)] as never)
    }
  })
})
