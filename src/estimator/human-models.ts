import type { GraphModel } from '@tensorflow/tfjs-converter'
import type { Tensor } from '@tensorflow/tfjs-core'
import { appendTfGraph, OnnxGraph, tensorName } from './onnx.ts'
import type { OnnxRuntime, OnnxSession } from './onnxruntime.ts'
import { readWeights } from './relu6.ts'
import { readTfModel } from './tf-model.ts'

type Tf = typeof import('@tensorflow/tfjs-core')

/** Human's models that the estimator loads (src/estimator/human-engine.ts), by Human's name and file. */
export const HUMAN_MODELS = { blazeface: 'blazeface.json', facemesh: 'facemesh.json' } as const

/**
 * Human's face detector (BlazeFace) and face mesh, run in onnxruntime instead of tfjs' WASM backend: each
 * graph (the files Human loaded, from `modelsDir`) is converted by src/estimator/onnx.ts and its loaded
 * GraphModel's `execute` is replaced by a run of that session, which takes the same input tensor and gives
 * the same outputs, as tfjs tensors in the same order. Human's own code around the models (scaling, the
 * anchors, non-maximum suppression, the rotation and the crops) is untouched. Both sessions are made before
 * either model is changed, so a model that cannot be converted leaves both on tfjs (the error says which).
 * Returns a function that puts tfjs' own `execute` back and releases the sessions.
 */
export function runHumanModelsInOnnx(tf: Tf, models: Partial<Record<keyof typeof HUMAN_MODELS, GraphModel | null>>, modelsDir: string, ort: OnnxRuntime): () => void {
  const replaced = Object.entries(HUMAN_MODELS).map(([name, file]) => {
    const model = models[name as keyof typeof HUMAN_MODELS]
    if (!model) throw new Error(`Human's ${name} model is not loaded`)
    try {
      return { model, execute: model.execute, ...convert(model, modelsDir, file, ort) }
    } catch (error) {
      throw new Error(`${name}: ${error instanceof Error ? error.message : String(error)}`)
    }
  })
  for (const { model, session, outputs } of replaced) {
    model.execute = ((input: Tensor | Tensor[]) => {
      if (Array.isArray(input) || input.dtype !== 'float32') throw new Error('the model takes one float32 tensor')
      const results = session.run({ input: { data: input.dataSync() as Float32Array, dims: input.shape } })
      const tensors = outputs.map((name) => tf.tensor(results[name]!.data, [...results[name]!.dims]))
      return tensors.length === 1 ? tensors[0]! : tensors
    }) as GraphModel['execute']
  }
  return () => {
    for (const { model, execute, session } of replaced) {
      model.execute = execute
      session.release()
    }
  }
}

/** The model's graph as an onnxruntime session whose input `input` is NHWC, as tfjs takes it, and its outputs in tfjs' order. */
function convert(model: GraphModel, dir: string, file: string, ort: OnnxRuntime): { session: OnnxSession; outputs: string[] } {
  const { model: json, weightSpecs, weightData } = readTfModel(dir, file)
  const weights = readWeights(weightSpecs, weightData)
  if (!weights) throw new Error('its weights are in a layout that is not converted')
  const graph = new OnnxGraph()
  const nchw = graph.node('Transpose', [graph.input('input', ['batch', 'height', 'width', 3])], 'input/nchw', [{ name: 'perm', ints: [0, 3, 1, 2] }])
  const isImage = appendTfGraph(graph, json.modelTopology.node, weights, nchw)
  // tfjs gives the outputs in this order, named by the signature's key where the model has one ("Identity:0"
  // names the node "Identity"); Human finds some of them by position.
  const signature = (json.signature?.outputs ?? {}) as Record<string, { name?: string } | undefined>
  const outputs = model.outputNodes.map((key) => tensorName(signature[key]?.name ?? key))
  for (const output of outputs) {
    // An image would come out in NCHW where tfjs gives NHWC: not read (these models' outputs are reshaped).
    if (isImage(output)) throw new Error(`its output ${output} is an image, which is not converted back to NHWC`)
    graph.output(output)
  }
  return { session: ort.createSession(graph.model()), outputs }
}
