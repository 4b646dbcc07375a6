import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { GraphNode, WeightSpec } from './relu6.ts'

/** A TensorFlow.js graph model's model.json, as far as read here. */
export type ModelJson = {
  modelTopology: { node: GraphNode[] } & Record<string, unknown>
  weightsManifest: { paths: string[]; weights: WeightSpec[] }[]
  signature?: { outputs?: Record<string, unknown> }
} & Record<string, unknown>

/** A TensorFlow.js graph model's files in `dir` (`file` and the weight files it names), read as they are. */
export function readTfModel(dir: string, file: string) {
  const model = JSON.parse(readFileSync(join(dir, file), 'utf8')) as ModelJson
  const weightSpecs = model.weightsManifest.flatMap((group) => group.weights)
  const weightData = new Uint8Array(Buffer.concat(model.weightsManifest.flatMap((group) => group.paths.map((path) => readFileSync(join(dir, path)))))).buffer
  return { model, weightSpecs, weightData }
}
