import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadGraphModel } from '@tensorflow/tfjs-converter'
import * as tf from '@tensorflow/tfjs-core'
import { AGE_MODEL, loadAgeModel } from '../../src/estimator/age-model.ts'
import { faceAssetFolders } from '../../src/estimator/embedded-assets.ts'
import { foldRelu6, readWeights, scalarWeights, type GraphNode, type WeightSpec } from '../../src/estimator/relu6.ts'
import { sharedHumanEngine } from './shared-engine.ts'

/** A conv, then Keras' ReLU6 as the converter writes it: Relu, Minimum with `six`, Maximum with `zero`. */
function clipChain(prefix: string, input: string, six = 'six', zero = 'zero'): GraphNode[] {
  return [
    { name: `${prefix}/conv`, op: 'Conv2D', input: [input, `${prefix}/kernel`] },
    { name: `${prefix}/relu`, op: 'Relu', input: [`${prefix}/conv`] },
    { name: `${prefix}/min`, op: 'Minimum', input: [`${prefix}/relu`, six] },
    { name: `${prefix}/max`, op: 'Maximum', input: [`${prefix}/min`, zero] },
  ]
}
const constants = (...names: string[]): GraphNode[] => names.map((name) => ({ name, op: 'Const' }))
const SCALARS = new Map([['six', 6], ['zero', 0], ['five', 5]])
const ops = (nodes: GraphNode[]) => Object.fromEntries(nodes.map((node) => [node.name, node.op]))

describe('foldRelu6', () => {
  test('reads each clip of a ReLU between the constants 6 and 0 as one Relu6, and rewires its readers', () => {
    const graph = [...constants('six', 'zero', 'a/kernel', 'b/kernel'), { name: 'x', op: 'Placeholder' }, ...clipChain('a', 'x'), ...clipChain('b', 'a/max:0'), { name: 'out', op: 'Mean', input: ['b/max'] }]
    const folded = foldRelu6(graph, SCALARS, ['out:0'])
    expect(folded.filter((node) => node.op === 'Minimum' || node.op === 'Maximum')).toEqual([])
    expect(ops(folded)).toMatchObject({ 'a/relu': 'Relu6', 'b/relu': 'Relu6' })
    expect(folded.find((node) => node.name === 'b/conv')!.input).toEqual(['a/relu', 'b/kernel'])
    expect(folded.find((node) => node.name === 'out')!.input).toEqual(['b/relu'])
    expect(folded).toHaveLength(graph.length - 4)
  })

  test('leaves a clip to other bounds, or bounds that are not known constants', () => {
    for (const [six, zero] of [['five', 'zero'], ['six', 'five'], ['unknown', 'zero'], ['six', 'x']]) {
      const graph = [...constants('six', 'zero', 'five', 'a/kernel'), { name: 'x', op: 'Placeholder' }, ...clipChain('a', 'x', six, zero), { name: 'out', op: 'Mean', input: ['a/max'] }]
      expect(foldRelu6(graph, SCALARS)).toEqual(graph)
    }
  })

  test('leaves a chain whose middle something else reads, or which holds an output of the model', () => {
    const chain = [...constants('six', 'zero', 'a/kernel'), { name: 'x', op: 'Placeholder' }, ...clipChain('a', 'x')]
    // The ReLU's own value, read again (here as "a/relu:0"), must stay a ReLU; so must a clipped value.
    const relu = [...chain, { name: 'out', op: 'Mean', input: ['a/max'] }, { name: 'side', op: 'Mean', input: ['a/relu:0'] }]
    const minimum = [...chain, { name: 'out', op: 'Mean', input: ['a/max'] }, { name: 'side', op: 'Mean', input: ['a/min'] }]
    for (const graph of [relu, minimum]) expect(foldRelu6(graph, SCALARS)).toEqual(graph)
    expect(foldRelu6(chain, SCALARS, ['a/max:0'])).toEqual(chain)
    expect(foldRelu6(chain, SCALARS, ['a/relu'])).toEqual(chain)
  })
})

describe('scalarWeights', () => {
  const specs: WeightSpec[] = [
    { name: 'kernel', shape: [2, 3], dtype: 'float32' },
    { name: 'six', shape: [], dtype: 'float32' },
    { name: 'axis', shape: [], dtype: 'int32' },
    { name: 'zero', shape: [], dtype: 'float32' },
  ]
  const bytes = new Float32Array([1, 2, 3, 4, 5, 6, 6, 0, 0])
  new DataView(bytes.buffer).setInt32(7 * 4, 3, true)

  test('reads the float scalars where they lie among the weights', () => {
    expect(scalarWeights(specs, bytes.buffer)).toEqual(new Map([['six', 6], ['zero', 0]]))
  })

  test('reads nothing from a layout it does not know: quantized, another type, or bytes that do not add up', () => {
    expect(scalarWeights([{ ...specs[0]!, quantization: { dtype: 'uint8' } }, ...specs.slice(1)], bytes.buffer).size).toBe(0)
    expect(scalarWeights([{ ...specs[0]!, dtype: 'float16' }, ...specs.slice(1)], bytes.buffer).size).toBe(0)
    expect(scalarWeights(specs, bytes.buffer.slice(0, 32)).size).toBe(0)
  })
})

describe('readWeights', () => {
  test('widens weights stored as float16 (as Human stores the mesh) and reads what follows them at any offset', () => {
    // Three half-precision values (1, -2, 65504: six bytes), then an int32 at byte 6, then a float32 at byte 10.
    const bytes = new Uint8Array(14)
    new Uint16Array(bytes.buffer, 0, 3).set([0x3c00, 0xc000, 0x7bff])
    new DataView(bytes.buffer).setInt32(6, -7, true)
    new DataView(bytes.buffer).setFloat32(10, 0.5, true)
    const weights = readWeights([
      { name: 'half', shape: [3], dtype: 'float32', quantization: { dtype: 'float16', original_dtype: 'float32' } },
      { name: 'int', shape: [], dtype: 'int32' },
      { name: 'float', shape: [1], dtype: 'float32' },
    ], bytes.buffer)
    expect(weights?.get('half')).toEqual({ shape: [3], values: Float32Array.of(1, -2, 65504) })
    expect(weights?.get('int')).toEqual({ shape: [], values: Int32Array.of(-7) })
    expect(weights?.get('float')).toEqual({ shape: [1], values: Float32Array.of(0.5) })
    // Half-precision bytes that do not add up, and the other quantizations, are not read.
    expect(readWeights([{ name: 'half', shape: [4], dtype: 'float32', quantization: { dtype: 'float16' } }], bytes.buffer.slice(0, 6))).toBeUndefined()
    expect(readWeights([{ name: 'q', shape: [3], dtype: 'float32', quantization: { dtype: 'uint16', scale: 1, min: 0 } }], bytes.buffer.slice(0, 6))).toBeUndefined()
  })
})

describe('the age model as the service loads it', () => {
  test('has no clip left and gives exactly what the converted graph gives, on the same input', async () => {
    // The shared engine sets up tfjs' WASM backend; Human uses these same tfjs packages.
    await sharedHumanEngine()
    const { ageModelDir } = faceAssetFolders()
    const json = JSON.parse(readFileSync(join(ageModelDir, AGE_MODEL), 'utf8'))
    const clips = json.modelTopology.node.filter((node: GraphNode) => node.op === 'Minimum').length
    expect(clips).toBe(27)
    const folded = await loadAgeModel({ ...tf, loadGraphModel } as never, ageModelDir)
    const converted = await loadGraphModel(`file://${ageModelDir}/${AGE_MODEL}`)
    // The ops the executor runs: every clip gone, as many Relu6 as there were clips.
    const executed = (model: typeof folded) => Object.values((model as unknown as { executor: { graph: { nodes: Record<string, { op: string }> } } }).executor.graph.nodes).map((node) => node.op)
    expect(executed(folded).filter((op) => op === 'Minimum' || op === 'Maximum')).toEqual([])
    expect(executed(folded).filter((op) => op === 'Relu6')).toHaveLength(clips)
    // BGR less the means spans about -124..152; values past both ends reach the clips' bounds.
    const input = tf.randomUniform([2, 224, 224, 3], -130, 160, 'float32', 7)
    const [a, b] = [converted.execute(input) as tf.Tensor[], folded.execute(input) as tf.Tensor[]]
    try {
      expect(a.map((t) => t.shape)).toEqual(b.map((t) => t.shape))
      for (let i = 0; i < a.length; i++) expect(Array.from(b[i]!.dataSync())).toEqual(Array.from(a[i]!.dataSync()))
    } finally {
      tf.dispose([input, ...a, ...b])
      folded.dispose()
      converted.dispose()
    }
  }, 120_000)
})
