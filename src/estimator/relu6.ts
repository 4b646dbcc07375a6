/** A node of a TensorFlow.js graph model's topology (model.json's `modelTopology.node`), as far as read here. */
export type GraphNode = { name: string; op: string; input?: string[]; attr?: Record<string, unknown> }
/** A weight's entry in model.json's `weightsManifest`: the weights lie one after another in its files. */
export type WeightSpec = { name: string; shape: number[]; dtype: string; quantization?: unknown }

/**
 * Each weight by name, as a view of the weights' bytes (they lie one after another, four bytes a value;
 * two for a weight stored as float16, which is widened to float32 here); undefined when the layout is one
 * this does not read (other quantizations or types, or bytes that do not add up to the weights), so that
 * nothing is read from it.
 */
export function readWeights(specs: readonly WeightSpec[], data: ArrayBuffer): Map<string, { shape: number[]; values: Float32Array | Int32Array }> | undefined {
  const weights = new Map<string, { shape: number[]; values: Float32Array | Int32Array }>()
  let offset = 0
  for (const spec of specs) {
    const half = isFloat16(spec)
    if ((spec.quantization && !half) || (spec.dtype !== 'float32' && spec.dtype !== 'int32')) return undefined
    const size = spec.shape.reduce((product, dim) => product * dim, 1)
    const bytes = size * (half ? 2 : 4)
    if (offset + bytes > data.byteLength) return undefined
    const Type = spec.dtype === 'int32' ? Int32Array : Float32Array
    // A view where the offset allows one; after an odd number of float16 values, a copy.
    const values = half ? Float32Array.from(new Float16Array(data.slice(offset, offset + bytes))) : offset % 4 ? new Type(data.slice(offset, offset + bytes)) : new Type(data, offset, size)
    weights.set(spec.name, { shape: spec.shape, values })
    offset += bytes
  }
  return offset === data.byteLength ? weights : undefined
}

const isFloat16 = (spec: WeightSpec) => spec.dtype === 'float32' && (spec.quantization as { dtype?: string } | undefined)?.dtype === 'float16'

/**
 * The scalar float32 weights (constants such as a clip's bounds) by name; empty when readWeights cannot
 * read the layout, so nothing is rewritten.
 */
export function scalarWeights(specs: readonly WeightSpec[], data: ArrayBuffer): Map<string, number> {
  const scalars = new Map<string, number>()
  for (const [name, { shape, values }] of readWeights(specs, data) ?? []) if (shape.length === 0 && values instanceof Float32Array) scalars.set(name, values[0]!)
  return scalars
}

/**
 * The graph with every `Maximum(Minimum(Relu(x), 6), 0)` (Keras' ReLU6, exported by the converter as a
 * clip_by_value after a ReLU) read as one `Relu6(x)`: the same number for every input, in one pass. On
 * tfjs' WASM backend the two broadcasting comparisons cost as much as all the convolutions of FaceRes
 * (measured, docs/decisions.md), where a Relu6 costs nothing worth counting. A chain is folded only when
 * its bounds are the constants 6 and 0, nothing else reads its middle and no output of the model is inside
 * it; if any node would be left reading a removed one, the graph is returned as it was.
 */
export function foldRelu6(nodes: readonly GraphNode[], scalars: ReadonlyMap<string, number>, outputs: readonly string[] = []): GraphNode[] {
  const kept = new Set(outputs.map(nodeName))
  const readers = new Map<string, GraphNode[]>()
  for (const node of nodes) for (const input of node.input ?? []) readers.set(nodeName(input), [...(readers.get(nodeName(input)) ?? []), node])
  const onlyReader = (name: string) => (readers.get(name)?.length === 1 ? readers.get(name)![0] : undefined)
  const bound = (node: GraphNode, chained: string) => {
    const other = node.input?.length === 2 ? node.input.find((input) => nodeName(input) !== chained) : undefined
    return other === undefined ? undefined : scalars.get(nodeName(other))
  }

  const removed = new Set<string>()
  const replaced = new Map<string, string>()
  const relu6 = new Set<string>()
  for (const relu of nodes) {
    if (relu.op !== 'Relu') continue
    const minimum = onlyReader(relu.name)
    if (minimum?.op !== 'Minimum' || bound(minimum, relu.name) !== 6) continue
    const maximum = onlyReader(minimum.name)
    if (maximum?.op !== 'Maximum' || bound(maximum, minimum.name) !== 0 || [relu, minimum, maximum].some((node) => kept.has(node.name))) continue
    relu6.add(relu.name)
    removed.add(minimum.name).add(maximum.name)
    replaced.set(maximum.name, relu.name)
  }
  const folded = nodes
    .filter((node) => !removed.has(node.name))
    .map((node) => ({ ...node, op: relu6.has(node.name) ? 'Relu6' : node.op, ...(node.input && { input: node.input.map((input) => replaced.get(nodeName(input)) ?? input) }) }))
  const names = new Set(folded.map((node) => node.name))
  const dangling = folded.some((node) => node.input?.some((input) => !names.has(nodeName(input))))
  return dangling ? [...nodes] : folded
}

/** "name", "name:0" and "^name" (a control input) all name the node "name". */
const nodeName = (reference: string) => reference.replace(/^\^/, '').replace(/:\d+$/, '')
