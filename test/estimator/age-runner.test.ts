import { beforeAll, describe, expect, test } from 'bun:test'
import { loadGraphModel } from '@tensorflow/tfjs-converter'
import * as tf from '@tensorflow/tfjs-core'
import { estimateAge, loadAgeRunner, type AgeRunner } from '../../src/estimator/age-model.ts'
import { faceAssetFolders } from '../../src/estimator/embedded-assets.ts'
import { appendTfGraph, OnnxGraph, type TfWeights } from '../../src/estimator/onnx.ts'
import { loadOnnxRuntime } from '../../src/estimator/onnxruntime.ts'
import type { GraphNode } from '../../src/estimator/relu6.ts'
import { readPngPixels } from '../../src/images/png-pixels.ts'
import { closeUpJpeg } from './sample-photos.ts'
import { sharedHumanEngine } from './shared-engine.ts'

/**
 * The age model in onnxruntime (src/estimator/onnx.ts converts the carried TensorFlow.js graph) against the
 * same model in tfjs, the second library: what the service runs must say what the model says.
 */
const { ageModelDir } = faceAssetFolders()
const tfWithLoader = { ...tf, loadGraphModel } as never
let onnx: AgeRunner
let reference: AgeRunner

beforeAll(async () => {
  // The shared engine sets up tfjs' WASM backend, which the reference runs on.
  await sharedHumanEngine()
  onnx = await loadAgeRunner(tfWithLoader, ageModelDir)
  reference = await loadAgeRunner(tfWithLoader, ageModelDir, { runtime: 'tfjs-wasm' })
}, 120_000)

/** A face crop as Human's detector gives it: [h, w, 3] RGB in 0..1, here from a real photo. */
async function faceCrop(which: 'olderLooking' | 'youngerLooking', side: number): Promise<tf.Tensor3D> {
  const image = new Bun.Image(await closeUpJpeg(which)).resize(side, side, { fit: 'fill' }).png({ compressionLevel: 0 })
  const pixels = readPngPixels(await image.bytes())!
  return tf.tidy(() => tf.div(tf.tensor3d(Int32Array.from(pixels.data), [pixels.height, pixels.width, 3], 'int32'), 255)) as tf.Tensor3D
}

describe('the age model in onnxruntime', () => {
  test('loads in onnxruntime here (the package has a library for this platform)', () => {
    expect(onnx.runtime).toEqual({ name: 'onnxruntime' })
    expect(reference.runtime).toEqual({ name: 'tfjs-wasm', reason: 'chosen' })
  })

  test('gives the age and descriptor tfjs gives, on real faces, each view, and crops of other sizes', async () => {
    // 192 is what Human's detector hands over; 150 × 150 and 240 × 240 check the scaling to 224 both ways.
    for (const [which, side] of [['olderLooking', 192], ['youngerLooking', 192], ['olderLooking', 150], ['youngerLooking', 240]] as const) {
      const crop = await faceCrop(which, side)
      try {
        for (const views of ['both', 'original', 'mirror'] as const) {
          const [got, want] = [await estimateAge(onnx, crop, views), await estimateAge(reference, crop, views)]
          expect(Math.abs(got.age - want.age)).toBeLessThanOrEqual(0.1)
          const cosine = got.descriptor.reduce((sum, value, i) => sum + value * want.descriptor[i]!, 0)
          expect(cosine).toBeGreaterThan(0.99999)
        }
      } finally {
        crop.dispose()
      }
    }
  }, 120_000)

  test('where onnxruntime cannot load, the same model runs on tfjs and says why', async () => {
    const fallback = await loadAgeRunner(tfWithLoader, ageModelDir, {
      loadOnnxRuntime: () => Promise.reject(new Error('libonnxruntime.so.1: failed to map segment from shared object')),
    })
    const crop = await faceCrop('youngerLooking', 192)
    try {
      expect(fallback.runtime).toEqual({ name: 'tfjs-wasm', reason: 'libonnxruntime.so.1: failed to map segment from shared object' })
      expect(await estimateAge(fallback, crop)).toEqual(await estimateAge(reference, crop))
    } finally {
      crop.dispose()
      fallback.dispose()
    }
  }, 60_000)

  test('reads a crop with a batch dimension of one as the same face, and refuses two faces in one crop', async () => {
    const crop = await faceCrop('olderLooking', 192)
    const [batched, two] = [tf.expandDims(crop, 0) as tf.Tensor4D, tf.stack([crop, crop]) as tf.Tensor4D]
    try {
      expect(await estimateAge(onnx, batched)).toEqual(await estimateAge(onnx, crop))
      await expect(estimateAge(onnx, two)).rejects.toThrow('the age model takes one face crop, not 2 × 192 × 192 × 3')
    } finally {
      tf.dispose([crop, batched, two])
    }
  })

  test('tells the two faces apart as tfjs does: the older-looking face is estimated older', async () => {
    const [older, younger] = [await faceCrop('olderLooking', 192), await faceCrop('youngerLooking', 192)]
    try {
      const [a, b] = [await estimateAge(onnx, older), await estimateAge(onnx, younger)]
      expect(a.age).toBeGreaterThan(b.age + 3)
      // Two people: their descriptors are far apart; one person's two views are close.
      const cosine = (x: number[], y: number[]) => x.reduce((sum, value, i) => sum + value * y[i]!, 0)
      expect(cosine(a.descriptor, b.descriptor)).toBeLessThan(cosine(a.descriptor, (await estimateAge(onnx, older, 'mirror')).descriptor))
    } finally {
      tf.dispose([older, younger])
    }
  }, 60_000)
})

describe('appendTfGraph', () => {
  const input: GraphNode = { name: 'x', op: 'Placeholder', attr: { shape: { shape: { dim: [{ size: '-1' }, { size: '-1' }, { size: '-1' }, { size: '3' }] } } } }
  const b64 = (text: string) => Buffer.from(text).toString('base64')
  const conv = (name: string, from: string, op: string, stride: number, padding: string): GraphNode => ({
    name,
    op,
    input: [from, `${name}/w`],
    attr: { strides: { list: { i: ['1', String(stride), String(stride), '1'] } }, padding: { s: b64(padding) }, data_format: { s: b64('NHWC') }, dilations: { list: { i: ['1', '1', '1', '1'] } } },
  })
  const random = (size: number, seed: number) => Float32Array.from({ length: size }, (_, i) => Math.sin(seed * 7919 + i * 12.9898) * 0.5)

  async function runConverted(nodes: GraphNode[], weights: TfWeights, output: string, x: tf.Tensor4D): Promise<Float32Array> {
    const graph = new OnnxGraph()
    const nchw = graph.node('Transpose', [graph.input('x', ['n', 'h', 'w', 3])], 'x/nchw', [{ name: 'perm', ints: [0, 3, 1, 2] }])
    appendTfGraph(graph, nodes, weights, nchw)
    graph.output(output, ['n', 'c', 'h', 'w'])
    const session = (await loadOnnxRuntime()).createSession(graph.model())
    const result = session.run({ x: { data: x.dataSync() as Float32Array, dims: x.shape } })
    session.release()
    return result[output]!.data
  }

  test('convolutions with SAME padding at strides 1 and 2, on odd and even sides, equal tfjs (NCHW against NHWC)', async () => {
    await sharedHumanEngine()
    const weights = new Map([
      ['a/w', { shape: [3, 3, 3, 4], values: random(3 * 3 * 3 * 4, 1) }],
      ['b/w', { shape: [3, 3, 4, 1], values: random(3 * 3 * 4, 2) }],
      ['c/w', { shape: [1, 1, 4, 2], values: random(4 * 2, 3) }],
      ['d/w', { shape: [2], values: Float32Array.of(0.5, -1) }],
    ])
    const nodes: GraphNode[] = [
      input,
      conv('a', 'x', 'Conv2D', 2, 'SAME'),
      { name: 'a/relu6', op: 'Relu6', input: ['a'] },
      conv('b', 'a/relu6', 'DepthwiseConv2dNative', 2, 'SAME'),
      conv('c', 'b', 'Conv2D', 1, 'VALID'),
      { name: 'd', op: 'Add', input: ['c', 'd/w'] },
    ]
    for (const side of [9, 10, 17]) {
      const x = tf.tensor4d(random(side * (side + 1) * 3, side), [1, side, side + 1, 3])
      const want = tf.tidy(() => {
        const a = tf.clipByValue(tf.conv2d(x, tf.tensor4d(weights.get('a/w')!.values, [3, 3, 3, 4]), 2, 'same'), 0, 6)
        const b = tf.depthwiseConv2d(a, tf.tensor4d(weights.get('b/w')!.values, [3, 3, 4, 1]), 2, 'same')
        const c = tf.conv2d(b, tf.tensor4d(weights.get('c/w')!.values, [1, 1, 4, 2]), 1, 'valid')
        return tf.transpose(tf.add(c, tf.tensor1d(weights.get('d/w')!.values)), [0, 3, 1, 2])
      })
      const got = await runConverted(nodes, weights, 'd', x)
      expect(got.length).toBe(want.size)
      const expected = want.dataSync()
      for (let i = 0; i < got.length; i++) expect(got[i]!).toBeCloseTo(expected[i]!, 5)
      tf.dispose([x, want])
    }
  })

  test("the detector's and the mesh's operations (fused convolutions with ReLU or PReLU, max pooling, channel padding, residual sums, a reshape) equal tfjs", async () => {
    await sharedHumanEngine()
    const fused = (name: string, from: string, stride: number, padding: string, activation?: 'Relu' | 'Prelu'): GraphNode => {
      const node = conv(name, from, '_FusedConv2D', stride, padding)
      const ops = ['BiasAdd', ...(activation ? [activation] : [])]
      return { ...node, input: [...node.input!, `${name}/b`, ...(activation === 'Prelu' ? [`${name}/alpha`] : [])], attr: { ...node.attr, fused_ops: { list: { s: ops.map(b64) } }, num_args: { i: activation === 'Prelu' ? '2' : '1' }, explicit_paddings: { list: {} } } }
    }
    const pool = (name: string, from: string, padding: string): GraphNode => ({ name, op: 'MaxPool', input: [from], attr: { ksize: { list: { i: ['1', '2', '2', '1'] } }, strides: { list: { i: ['1', '2', '2', '1'] } }, padding: { s: b64(padding) }, data_format: { s: b64('NHWC') } } })
    const weights = new Map<string, { shape: number[]; values: Float32Array | Int32Array }>([
      ['a/w', { shape: [3, 3, 3, 4], values: random(3 * 3 * 3 * 4, 4) }],
      ['a/b', { shape: [4], values: random(4, 5) }],
      ['b/w', { shape: [3, 3, 4, 1], values: random(3 * 3 * 4, 6) }],
      ['d/pads', { shape: [4, 2], values: Int32Array.of(0, 0, 0, 0, 0, 0, 0, 2) }],
      ['e/w', { shape: [1, 1, 6, 6], values: random(36, 7) }],
      ['e/b', { shape: [6], values: random(6, 8) }],
      ['e/alpha', { shape: [1, 1, 6], values: random(6, 9) }],
      ['g/alpha', { shape: [1, 1, 6], values: random(6, 10) }],
      ['h/shape', { shape: [3], values: Int32Array.of(1, -1, 2) }],
    ])
    const nodes: GraphNode[] = [
      input,
      fused('a', 'x', 2, 'SAME', 'Relu'),
      conv('b', 'a', 'DepthwiseConv2dNative', 1, 'SAME'),
      { name: 'sum', op: 'AddV2', input: ['a', 'b'] },
      pool('c', 'sum', 'SAME'),
      { name: 'd', op: 'Pad', input: ['c', 'd/pads'] },
      fused('e', 'd', 1, 'VALID', 'Prelu'),
      { name: 'f', op: 'AddV2', input: ['e', 'd'] },
      { name: 'g', op: 'Prelu', input: ['f', 'g/alpha'] },
      pool('p', 'g', 'VALID'),
      { name: 'h', op: 'Reshape', input: ['p', 'h/shape'] },
      { name: 'i', op: 'Sigmoid', input: ['h'] },
      { name: 'out', op: 'Identity', input: ['i'] },
    ]
    const w = (name: string) => weights.get(name)!.values as Float32Array
    for (const side of [17, 20]) {
      const x = tf.tensor4d(random(side * (side + 2) * 3, side), [1, side, side + 2, 3])
      const want = tf.tidy(() => {
        const a = tf.fused.conv2d({ x, filter: tf.tensor4d(w('a/w'), [3, 3, 3, 4]), strides: 2, pad: 'same', bias: tf.tensor1d(w('a/b')), activation: 'relu' })
        const b = tf.depthwiseConv2d(a, tf.tensor4d(w('b/w'), [3, 3, 4, 1]), 1, 'same')
        const c = tf.maxPool(tf.add(a, b) as tf.Tensor4D, 2, 2, 'same')
        const d = tf.pad(c, [[0, 0], [0, 0], [0, 0], [0, 2]])
        const e = tf.prelu(tf.add(tf.conv2d(d, tf.tensor4d(w('e/w'), [1, 1, 6, 6]), 1, 'valid'), tf.tensor1d(w('e/b'))), tf.tensor3d(w('e/alpha'), [1, 1, 6]))
        const g = tf.prelu(tf.add(e, d), tf.tensor3d(w('g/alpha'), [1, 1, 6]))
        return tf.sigmoid(tf.reshape(tf.maxPool(g as tf.Tensor4D, 2, 2, 'valid'), [1, -1, 2]))
      })
      const got = await runConverted(nodes, weights, 'out', x)
      expect(got.length).toBe(want.size)
      const expected = want.dataSync()
      for (let i = 0; i < got.length; i++) expect(got[i]!).toBeCloseTo(expected[i]!, 5)
      tf.dispose([x, want])
    }
    // Which tensors are still images in NCHW: up to the reshape, and not after it.
    const isImage = appendTfGraph(new OnnxGraph(), nodes, weights, 'x')
    expect(['a', 'sum', 'd', 'g', 'p', 'h', 'i', 'out', 'out:0'].map(isImage)).toEqual([true, true, true, true, true, false, false, false, false])
  })

  test('refuses what it does not convert, when the model loads, instead of running it wrong', () => {
    const graph = () => new OnnxGraph()
    const weights = new Map([['a/w', { shape: [3, 3, 3, 2], values: random(54, 1) }], ['axes', { shape: [2], values: Int32Array.of(1, 3) }]])
    expect(() => appendTfGraph(graph(), [input, { name: 'p', op: 'AvgPool', input: ['x'] }], weights, 'x')).toThrow('the operation AvgPool (p) is not converted')
    expect(() => appendTfGraph(graph(), [input, { name: 'p', op: 'MaxPool', input: ['x'], attr: { ksize: { list: { i: ['2', '2', '2', '1'] } } } }], weights, 'x')).toThrow('window 2,2,2,1 is not read')
    // A product of two tensors, and a softmax over an image's channels (NCHW puts them elsewhere).
    expect(() => appendTfGraph(graph(), [input, { name: 'm', op: 'Mul', input: ['x', 'x'] }], weights, 'x')).toThrow('Mul (m) of x and x is not read')
    expect(() => appendTfGraph(graph(), [input, { name: 's', op: 'Softmax', input: ['x'] }], weights, 'x')).toThrow('Softmax (s) reads x, an image')
    const fusedWith = (ops: string[], args: string) => ({ ...conv('a', 'x', '_FusedConv2D', 1, 'SAME'), input: ['x', 'a/w', 'b'], attr: { ...conv('a', 'x', '_FusedConv2D', 1, 'SAME').attr, fused_ops: { list: { s: ops.map(b64) } }, num_args: { i: args } } })
    expect(() => appendTfGraph(graph(), [input, fusedWith(['BiasAdd', 'Relu6'], '1')], weights, 'x')).toThrow('fused BiasAdd, Relu6 is not read')
    expect(() => appendTfGraph(graph(), [input, fusedWith(['BiasAdd', 'Prelu'], '1')], weights, 'x')).toThrow('fused BiasAdd, Prelu is not read')
    expect(() => appendTfGraph(graph(), [input, fusedWith(['FusedBatchNorm'], '1')], weights, 'x')).toThrow('fused FusedBatchNorm is not read')
    expect(() => appendTfGraph(graph(), [input, conv('a', 'x', 'DepthwiseConv2dNative', 1, 'SAME')], weights, 'x')).toThrow('channel multiplier 2')
    expect(() => appendTfGraph(graph(), [input, conv('a', 'x', 'Conv2D', 1, 'EXPLICIT')], weights, 'x')).toThrow('padding EXPLICIT')
    expect(() => appendTfGraph(graph(), [input, { name: 'm', op: 'Mean', input: ['x', 'axes'] }], weights, 'x')).toThrow('only a mean over height and width')
    expect(() => appendTfGraph(graph(), [input, { name: 'c', op: 'Conv2D', input: ['x', 'missing'] }], weights, 'x')).toThrow('is not a Float32Array constant of rank 4')
    expect(() => appendTfGraph(graph(), [input, input], weights, 'x')).toThrow('the graph has 2 inputs')
  })
})
