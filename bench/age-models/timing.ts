/**
 * Milliseconds per pass of each candidate age model, batch of one, on whatever cores the process may use
 * (run it under `taskset -c 0` for one core). The input is a random crop: the cost does not depend on it.
 */
import { pathToFileURL } from 'node:url'
import type { GraphModel } from '@tensorflow/tfjs-converter'
import type { Tensor, Tensor4D } from '@tensorflow/tfjs-core'
import { resolve } from 'node:path'
import { Human } from '../../node_modules/@vladmandic/human/dist/human.node-wasm.js'
import { AGE_MODEL, loadAgeModel, loadAgeRunner } from '../../src/estimator/age-model.ts'
import { faceAssetFolders } from '../../src/estimator/embedded-assets.ts'
import { humanConfig } from '../../src/estimator/human-engine.ts'
import { FACE_API_INPUT, loadFaceApiAge, runFaceApiAge } from './face-api-age.ts'

type Tf = typeof import('@tensorflow/tfjs-core')

export async function timeModels(humanModels: string, passes = 20): Promise<void> {
  const carried = faceAssetFolders()
  const human = new Human(humanConfig(carried.modelsDir, carried.wasmDir))
  await human.load()
  const tf = human.tf as unknown as Tf
  const load = (dir: string, file: string) => human.tf.loadGraphModel(`${pathToFileURL(dir).href}/${file}`) as unknown as Promise<GraphModel>
  // FaceRes on tfjs (the fallback: its ReLU6 clips folded) and as converted, for the difference.
  const faceres = (await loadAgeModel(human.tf, carried.ageModelDir)) as unknown as GraphModel
  const graph = { faceres: [faceres, 224], 'faceres (unfolded)': [await load(carried.ageModelDir, AGE_MODEL), 224], gear: [await load(humanModels, 'gear.json'), 198], ssrnet: [await load(humanModels, 'age.json'), 64] } as const
  const faceApi = await loadFaceApiAge(tf, resolve('node_modules/@vladmandic/face-api/model'))
  // As the estimator runs it: in onnxruntime, the preparation (scaling, BGR less the means) in its graph.
  const runner = await loadAgeRunner(human.tf, carried.ageModelDir)
  type Run = (x: Tensor4D) => void | Promise<unknown>
  const runs: [string, number, Run][] = [
    [`faceres (${runner.runtime.name})`, 224, (x: Tensor4D) => runner.run(x.dataSync() as Float32Array, 1, 224, 224)],
    ...Object.entries(graph).map(([name, [model, side]]) => [name, side, (x: Tensor4D) => tf.dispose(model.execute(x) as Tensor[])] as [string, number, Run]),
    ['faceapi', FACE_API_INPUT, (x: Tensor4D) => void runFaceApiAge(tf, faceApi, x)],
  ]
  for (const [name, side, run] of runs) {
    const input = tf.randomUniform([1, side, side, 3]) as Tensor4D
    for (let i = 0; i < 3; i++) await run(input)
    const times: number[] = []
    for (let i = 0; i < passes; i++) {
      const started = performance.now()
      await run(input)
      times.push(performance.now() - started)
    }
    input.dispose()
    times.sort((a, b) => a - b)
    console.log(`${name.padEnd(18)} ${side}×${side}: p50 ${times[Math.floor(passes / 2)]!.toFixed(1)} ms, min ${times[0]!.toFixed(1)} ms a pass`)
  }
}
