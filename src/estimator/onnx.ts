import type { GraphNode } from './relu6.ts'

/**
 * ONNX models written from TypeScript (onnx.proto, IR version 8, opset 18), so that onnxruntime runs what
 * the estimator carries as TensorFlow.js graphs. `OnnxGraph` builds a graph a node at a time;
 * `appendTfGraph` adds a TensorFlow.js graph to it, covering the operations the estimator's three models
 * are made of (the age model FaceRes, a MobileNet; Human's BlazeFace detector and face mesh) and throwing
 * on any other, so a model this cannot read is refused when it is loaded, never run wrong:
 *
 *   Conv2D · _FusedConv2D with BiasAdd (and Relu or Prelu) · DepthwiseConv2dNative (SAME or VALID padding) ·
 *   MaxPool · Pad · Add/AddV2 of two tensors or of a per-channel constant · Mul of a per-channel constant ·
 *   Relu · Relu6 (src/estimator/relu6.ts) · Prelu · Mean over H and W · _FusedMatMul with BiasAdd (and
 *   Relu) · Reshape · Identity · Sigmoid · Softmax
 *
 * TensorFlow computes in NHWC and ONNX in NCHW: the caller hands the TensorFlow graph's input already in
 * NCHW, and the weights are laid out for NCHW here (a filter [h, w, in, out] becomes [out, in, h, w]); a
 * Reshape, which reads the values in TensorFlow's order, transposes back to NHWC first. TensorFlow's SAME
 * padding puts the odd pixel after the image, which is ONNX's SAME_UPPER.
 */
export type TfWeights = ReadonlyMap<string, { shape: number[]; values: Float32Array | Int32Array }>

export type Attribute = { name: string; int?: number; ints?: number[]; text?: string }

export class OnnxGraph {
  private readonly nodes = new Protobuf()
  private readonly initializers: Protobuf[] = []
  private readonly inputs: Protobuf[] = []
  private readonly outputs: Protobuf[] = []

  /** Adds a node with one output, named `output`, and returns that name. An absent optional input is ''. */
  node(op: string, inputs: string[], output: string, attributes: Attribute[] = []): string {
    const node = new Protobuf()
    for (const input of inputs) node.string(1, input)
    node.string(2, output).string(3, output).string(4, op)
    for (const { name, int, ints, text } of attributes) {
      const proto = new Protobuf().string(1, name)
      if (int !== undefined) proto.int(3, int).int(20, ATTRIBUTE_TYPE.INT)
      else if (ints) proto.packedInts(8, ints).int(20, ATTRIBUTE_TYPE.INTS)
      else proto.string(4, text ?? '').int(20, ATTRIBUTE_TYPE.STRING)
      node.message(5, proto)
    }
    this.nodes.message(1, node)
    return output
  }

  /** A constant tensor (float32, or int64 for shapes and indices); returns its name. */
  constant(name: string, dims: number[], values: Float32Array | BigInt64Array): string {
    const tensor = new Protobuf()
    if (dims.length) tensor.packedInts(1, dims)
    tensor.int(2, values instanceof Float32Array ? TENSOR_TYPE.FLOAT : TENSOR_TYPE.INT64).string(8, name)
    this.initializers.push(tensor.raw(9, new Uint8Array(values.buffer, values.byteOffset, values.byteLength)))
    return name
  }

  /** A float32 input or output of the graph; a dimension given as a name is left open, and an output without dims has any shape. */
  input(name: string, dims: (number | string)[]): string {
    this.inputs.push(valueInfo(name, dims))
    return name
  }
  output(name: string, dims?: (number | string)[]): void {
    this.outputs.push(valueInfo(name, dims))
  }

  /** The model's bytes, for `InferenceSession.create`. */
  model(): Uint8Array {
    const graph = new Protobuf().fields(this.nodes).string(2, 'graph')
    for (const initializer of this.initializers) graph.message(5, initializer)
    for (const input of this.inputs) graph.message(11, input)
    for (const output of this.outputs) graph.message(12, output)
    const opset = new Protobuf().string(1, '').int(2, 18)
    return new Protobuf().int(1, 8).string(2, 'ofage').message(7, graph).message(8, opset).bytes()
  }
}

/**
 * Adds a TensorFlow.js graph's nodes to `graph`; its Placeholder reads `input`, already in NCHW. Its nodes
 * keep their names; a tensor of rank 4 stays in NCHW, and a Reshape or a Mean gives one in TensorFlow's
 * own order. Returns whether a tensor is still an image in NCHW, whose values are not in TensorFlow's order.
 */
export function appendTfGraph(graph: OnnxGraph, nodes: readonly GraphNode[], weights: TfWeights, input: string): (name: string) => boolean {
  const weight = (name: string | undefined, rank: number, op: string, type: typeof Float32Array | typeof Int32Array = Float32Array) => {
    const found = name === undefined ? undefined : weights.get(tensorName(name))
    if (!found || found.shape.length !== rank || !(found.values instanceof type)) throw new Error(`${op}: its weight ${name} is not a ${type.name} constant of rank ${rank}`)
    return found as { shape: number[]; values: Float32Array }
  }
  /** A per-channel constant ([c], or [1, 1, c] as Keras writes a PReLU's slopes) as [c, 1, 1], to broadcast over NCHW. */
  const perChannel = (name: string | undefined, op: string, as: string) => {
    const found = name === undefined ? undefined : weights.get(tensorName(name))
    if (!found || !(found.values instanceof Float32Array) || found.shape.slice(0, -1).some((dim) => dim !== 1)) throw new Error(`${op}: its weight ${name} is not a per-channel float32 constant`)
    return graph.constant(as, [found.values.length, 1, 1], found.values)
  }
  const placeholders = nodes.filter((node) => node.op === 'Placeholder')
  if (placeholders.length !== 1) throw new Error(`the graph has ${placeholders.length} inputs`)
  const source = (name: string) => (tensorName(name) === placeholders[0]!.name ? input : tensorName(name))
  // The tensors no longer in NCHW: what a Reshape, a Mean or a matrix product gives, and what reads only them.
  const flat = new Set<string>()
  const nchw = (node: GraphNode, name: string) => {
    if (flat.has(name)) throw new Error(`${node.op} (${node.name}) reads ${name}, which is not an image`)
    return name
  }

  for (const node of nodes) {
    const inputs = node.input ?? []
    const first = inputs[0] === undefined ? '' : source(inputs[0])
    switch (node.op) {
      case 'Const':
      case 'Placeholder':
        break
      case 'Conv2D':
      case '_FusedConv2D': {
        const { shape: [h, w, channels, filters], values } = weight(inputs[1], 4, node.op) as { shape: [number, number, number, number]; values: Float32Array }
        const kernel = new Float32Array(values.length)
        for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) for (let c = 0; c < channels; c++) for (let f = 0; f < filters; f++) kernel[((f * channels + c) * h + y) * w + x] = values[((y * w + x) * channels + c) * filters + f]!
        const filter = graph.constant(`${node.name}/kernel`, [filters, channels, h, w], kernel)
        if (node.op === 'Conv2D') {
          graph.node('Conv', [nchw(node, first), filter], node.name, convolution(node, h, w))
          break
        }
        const fused = fusedOps(node)
        const activation = fused[1]
        if (fused[0] !== 'BiasAdd' || fused.length > 2 || (activation !== undefined && activation !== 'Relu' && activation !== 'Prelu') || Number(attribute(node, 'num_args')?.i ?? 0) !== (activation === 'Prelu' ? 2 : 1)) {
          throw new Error(`${node.op} (${node.name}): fused ${fused.join(', ')} is not read`)
        }
        const bias = weight(inputs[2], 1, node.op)
        const conv = graph.node('Conv', [nchw(node, first), filter, graph.constant(`${node.name}/bias`, bias.shape, bias.values)], activation ? `${node.name}/conv` : node.name, convolution(node, h, w))
        if (activation === 'Relu') graph.node('Relu', [conv], node.name)
        if (activation === 'Prelu') graph.node('PRelu', [conv, perChannel(inputs[3], node.op, `${node.name}/slope`)], node.name)
        break
      }
      case 'DepthwiseConv2dNative': {
        const { shape: [h, w, channels, multiplier], values } = weight(inputs[1], 4, node.op) as { shape: [number, number, number, number]; values: Float32Array }
        if (multiplier !== 1) throw new Error(`${node.op}: channel multiplier ${multiplier}`)
        const kernel = new Float32Array(values.length)
        for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) for (let c = 0; c < channels; c++) kernel[(c * h + y) * w + x] = values[(y * w + x) * channels + c]!
        graph.node('Conv', [nchw(node, first), graph.constant(`${node.name}/kernel`, [channels, 1, h, w], kernel)], node.name, [...convolution(node, h, w), { name: 'group', int: channels }])
        break
      }
      case 'MaxPool': {
        const size = listOfInts(node, 'ksize')
        if (size.length !== 4 || size[0] !== 1 || size[3] !== 1) throw new Error(`${node.op} (${node.name}): window ${size} is not read`)
        graph.node('MaxPool', [nchw(node, first)], node.name, convolution(node, size[1]!, size[2]!))
        break
      }
      case 'Pad': {
        // TensorFlow's [[before, after] × NHWC] as ONNX's [befores..., afters...] in NCHW; padded with zeros.
        const { values } = weight(inputs[1], 2, node.op, Int32Array)
        if (values.length !== 8) throw new Error(`${node.op} (${node.name}): paddings of ${values.length / 2} axes`)
        const order = [0, 3, 1, 2]
        const pads = BigInt64Array.from([...order.map((axis) => values[axis * 2]!), ...order.map((axis) => values[axis * 2 + 1]!)], BigInt)
        graph.node('Pad', [nchw(node, first), graph.constant(`${node.name}/pads`, [8], pads)], node.name)
        break
      }
      case 'Add':
      case 'AddV2':
      case 'Mul': {
        const other = inputs[1] === undefined ? undefined : weights.has(tensorName(inputs[1])) ? undefined : source(inputs[1])
        if (other === undefined) {
          const { shape, values } = weight(inputs[1], 1, node.op)
          graph.node(node.op === 'Mul' ? 'Mul' : 'Add', [nchw(node, first), graph.constant(`${node.name}/channels`, [shape[0]!, 1, 1], values)], node.name)
        } else if (node.op !== 'Mul' && flat.has(first) === flat.has(other)) {
          graph.node('Add', [first, other], node.name)
          if (flat.has(first)) flat.add(node.name)
        } else {
          throw new Error(`${node.op} (${node.name}) of ${first} and ${other} is not read`)
        }
        break
      }
      case 'Prelu':
        graph.node('PRelu', [nchw(node, first), perChannel(inputs[1], node.op, `${node.name}/slope`)], node.name)
        break
      case 'Relu':
      case 'Sigmoid':
      case 'Identity':
        graph.node(node.op, [first], node.name)
        if (flat.has(first)) flat.add(node.name)
        break
      case 'Relu6':
        graph.node('Clip', [first, graph.constant(`${node.name}/min`, [], Float32Array.of(0)), graph.constant(`${node.name}/max`, [], Float32Array.of(6))], node.name)
        if (flat.has(first)) flat.add(node.name)
        break
      case 'Softmax':
        // Over the last axis, as TensorFlow's: read only where that is the same axis, after the image is flat.
        if (!flat.has(first)) throw new Error(`${node.op} (${node.name}) reads ${first}, an image`)
        graph.node('Softmax', [first], node.name, [{ name: 'axis', int: -1 }])
        flat.add(node.name)
        break
      case 'Mean': {
        const axes = Array.from(weight(inputs[1], 1, node.op, Int32Array).values)
        if (axes.join() !== '1,2' || attribute(node, 'keep_dims')?.b) throw new Error(`${node.op}: only a mean over height and width is read`)
        graph.node('ReduceMean', [nchw(node, first), graph.constant(`${node.name}/axes`, [2], BigInt64Array.of(2n, 3n))], node.name, [{ name: 'keepdims', int: 0 }])
        flat.add(node.name)
        break
      }
      case 'Reshape': {
        const { values } = weight(inputs[1], 1, node.op, Int32Array)
        const nhwc = flat.has(first) ? first : graph.node('Transpose', [first], `${node.name}/nhwc`, [{ name: 'perm', ints: [0, 2, 3, 1] }])
        graph.node('Reshape', [nhwc, graph.constant(`${node.name}/shape`, [values.length], BigInt64Array.from(values, BigInt))], node.name)
        flat.add(node.name)
        break
      }
      case '_FusedMatMul': {
        const fused = fusedOps(node)
        if (fused[0] !== 'BiasAdd' || fused.length > 2 || (fused[1] !== undefined && fused[1] !== 'Relu') || attribute(node, 'transpose_a')?.b || attribute(node, 'transpose_b')?.b) throw new Error(`${node.op}: fused ${fused.join(', ')} is not read`)
        if (!flat.has(first)) throw new Error(`${node.op} (${node.name}) reads ${first}, an image`)
        const matrix = weight(inputs[1], 2, node.op)
        const bias = weight(inputs[2], 1, node.op)
        const gemm = graph.node('Gemm', [first, graph.constant(`${node.name}/matrix`, matrix.shape, matrix.values), graph.constant(`${node.name}/bias`, bias.shape, bias.values)], fused[1] ? `${node.name}/gemm` : node.name)
        if (fused[1]) graph.node('Relu', [gemm], node.name)
        flat.add(node.name)
        break
      }
      default:
        throw new Error(`the operation ${node.op} (${node.name}) is not converted`)
    }
  }
  return (name) => !flat.has(tensorName(name))
}

function convolution(node: GraphNode, h: number, w: number): Attribute[] {
  const strides = listOfInts(node, 'strides')
  const dilations = listOfInts(node, 'dilations')
  const padding = fromBase64((attribute(node, 'padding')?.s as string | undefined) ?? '')
  const format = attribute(node, 'data_format')?.s
  const explicit = listOfInts(node, 'explicit_paddings')
  if (strides.length !== 4 || explicit.length || (format !== undefined && fromBase64(format as string) !== 'NHWC') || dilations.some((d) => d !== 1) || (padding !== 'SAME' && padding !== 'VALID')) {
    throw new Error(`${node.op} ${node.name}: strides ${strides}, dilations ${dilations}, padding ${padding} are not read`)
  }
  return [
    { name: 'kernel_shape', ints: [h, w] },
    { name: 'strides', ints: strides.slice(1, 3) },
    { name: 'auto_pad', text: padding === 'SAME' ? 'SAME_UPPER' : 'VALID' },
  ]
}

const attribute = (node: GraphNode, name: string) => node.attr?.[name] as Record<string, unknown> | undefined
const fusedOps = (node: GraphNode) => ((attribute(node, 'fused_ops')?.list as { s?: string[] } | undefined)?.s ?? []).map(fromBase64)
const listOfInts = (node: GraphNode, name: string) => ((attribute(node, name)?.list as { i?: string[] } | undefined)?.i ?? []).map(Number)
const fromBase64 = (text: string) => Buffer.from(text, 'base64').toString('latin1')
/** A graph's reference to a node's first output, `name:0`, is the node's name. */
export const tensorName = (input: string) => input.replace(/:0$/, '')

// onnx.proto's messages, as far as written here (field numbers from the ONNX specification).
const TENSOR_TYPE = { FLOAT: 1, INT64: 7 } as const
const ATTRIBUTE_TYPE = { INT: 2, STRING: 3, INTS: 7 } as const

function valueInfo(name: string, dims: (number | string)[] | undefined): Protobuf {
  const tensorType = new Protobuf().int(1, TENSOR_TYPE.FLOAT)
  if (dims) {
    const shape = new Protobuf()
    for (const dim of dims) shape.message(1, typeof dim === 'number' ? new Protobuf().int(1, dim) : new Protobuf().string(2, dim))
    tensorType.message(2, shape)
  }
  return new Protobuf().string(1, name).message(2, new Protobuf().message(1, tensorType))
}

/** Protocol Buffers' wire format, writing only: varints, length-delimited fields and packed varints. */
class Protobuf {
  private readonly chunks: Uint8Array[] = []
  private pending: number[] = []

  int(field: number, value: number): this {
    return this.varint((field << 3) | 0).varint(value)
  }
  string(field: number, text: string): this {
    return this.raw(field, new TextEncoder().encode(text))
  }
  message(field: number, message: Protobuf): this {
    return this.raw(field, message.bytes())
  }
  packedInts(field: number, values: readonly number[]): this {
    const packed = new Protobuf()
    for (const value of values) packed.varint(value)
    return this.raw(field, packed.bytes())
  }
  raw(field: number, bytes: Uint8Array): this {
    this.varint((field << 3) | 2).varint(bytes.length)
    this.flush()
    this.chunks.push(bytes)
    return this
  }
  /** Another message's fields, written as fields of this one. */
  fields(other: Protobuf): this {
    this.flush()
    this.chunks.push(other.bytes())
    return this
  }
  bytes(): Uint8Array {
    this.flush()
    return Buffer.concat(this.chunks)
  }

  /** Negative numbers as int64 does: ten bytes of two's complement. */
  private varint(value: number): this {
    let rest = BigInt.asUintN(64, BigInt(value))
    do {
      const low = Number(rest & 0x7fn)
      rest >>= 7n
      this.pending.push(rest ? low | 0x80 : low)
    } while (rest)
    return this
  }
  private flush() {
    if (this.pending.length) this.chunks.push(Uint8Array.from(this.pending))
    this.pending = []
  }
}
