/**
 * Where a live frame's analysis spends its time (issue 34, item 5): the JPEG decode, Human's detector and
 * mesh, one view of the age model (FaceRes, which also gives the descriptor of the identity check) and the
 * garbage collection the worker runs after each frame (src/estimator/collect.ts), in process on the engine
 * the workers load, one frame at a time. Pin it to a core for a core's cost:
 *
 *   taskset -c 1 bun bench/face-stages.ts                      # the frames of shared/liveness/intel-female-headturn
 *   taskset -c 1 bun bench/face-stages.ts --clip intel-male-frontal --frames 20 --passes 3
 *   taskset -c 1 bun bench/face-stages.ts --side 960       # each frame scaled to 960 px, re-encoded at quality 0.9
 *   bun bench/face-stages.ts --side 960 --json             # one JSON object (what `bun run bench` reads)
 *   taskset -c 1 bun bench/face-stages.ts --runtime tfjs-wasm   # the models on tfjs' WASM backend (the fallback)
 *
 * The first pass over the frames warms the engine and is not counted. `--side` sends frames as the page
 * does (public/face-capture.js: the camera's frame scaled to at most 960 px, JPEG at 0.9), which decode
 * in longer than the clips' 640×480. Last, what a whole capture costs a core: every frame of it is
 * analysed with one view of the age model, 10 frames for three prompts and 12 for four.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { Tensor3D } from '@tensorflow/tfjs-core'
import { Human } from '../node_modules/@vladmandic/human/dist/human.node-wasm.js'
import { estimateAge, loadAgeRunner } from '../src/estimator/age-model.ts'
import { collectAfterFrame } from '../src/estimator/collect.ts'
import { faceAssetFolders } from '../src/estimator/embedded-assets.ts'
import { frameInput, humanConfig } from '../src/estimator/human-engine.ts'
import { runHumanModelsInOnnx } from '../src/estimator/human-models.ts'
import { decodeImage } from '../src/estimator/image.ts'
import { loadOnnxRuntime } from '../src/estimator/onnxruntime.ts'
import { LIVENESS_DIR } from '../test/liveness/clips.ts'

const { values } = parseArgs({ options: { clip: { type: 'string', default: 'intel-female-headturn' }, frames: { type: 'string', default: '40' }, passes: { type: 'string', default: '2' }, side: { type: 'string' }, json: { type: 'boolean', default: false }, runtime: { type: 'string', default: 'onnxruntime' } } })
const dir = join(LIVENESS_DIR, values.clip, 'frames')
const files = readdirSync(dir).filter((name) => name.endsWith('.jpg')).sort().slice(0, Number(values.frames))
const side = values.side === undefined ? undefined : Number(values.side)
const frames = await Promise.all(files.map((name) => (side ? new Bun.Image(readFileSync(join(dir, name))).resize(side, undefined, { fit: 'inside' }).jpeg({ quality: 90 }).bytes() : readFileSync(join(dir, name)))))

const folders = faceAssetFolders()
const human = new Human(humanConfig(folders.modelsDir, folders.wasmDir))
await human.load()
const ageModel = await loadAgeRunner(human.tf, folders.ageModelDir, { runtime: values.runtime === 'tfjs-wasm' ? 'tfjs-wasm' : 'onnxruntime' })
// As the engine does (src/estimator/human-engine.ts): the detector and mesh run where the age model runs.
if (ageModel.runtime.name === 'onnxruntime') runHumanModelsInOnnx(human.tf, human.models.models, folders.modelsDir, await loadOnnxRuntime())

const frameTensor = frameInput(human.tf)
const totals = { decode: 0, detect: 0, age: 0, collect: 0, frames: 0, faces: 0 }
let size = ''
for (let pass = 0; pass <= Number(values.passes); pass++) {
  for (const bytes of frames) {
    let started = performance.now()
    const image = await decodeImage(bytes)
    const decode = performance.now() - started
    started = performance.now()
    // The frame into tfjs as the engine puts it, counted with the detector and mesh.
    const input = frameTensor(image)
    const result = await human.detect(input)
    const detect = performance.now() - started
    const crops = result.face.flatMap((face) => (face.tensor ? [face.tensor as unknown as Tensor3D] : []))
    started = performance.now()
    for (const crop of crops) await estimateAge(ageModel, crop, 'original')
    const age = performance.now() - started
    human.tf.dispose([input, ...crops])
    started = performance.now()
    collectAfterFrame()
    const collect = performance.now() - started
    size = `${image.width}×${image.height}`
    if (pass === 0) continue
    totals.collect += collect
    totals.decode += decode
    totals.detect += detect
    totals.age += age
    totals.frames++
    totals.faces += crops.length
  }
}
const perFrame = (ms: number) => `${(ms / totals.frames).toFixed(1)} ms`
const all = totals.decode + totals.detect + totals.age + totals.collect
/** What a capture of `count` frames costs a core, each frame analysed with one view of the age model. */
const checksPerMinute = (count: number) => 60_000 / ((count * all) / totals.frames)
if (values.json) {
  // For `bun run bench`, which prints it beside the other goals.
  const stages = { decode: totals.decode / totals.frames, detect: totals.detect / totals.frames, age: totals.age / totals.frames, collect: totals.collect / totals.frames }
  console.log(JSON.stringify({ size, modelRuntime: ageModel.runtime, msPerFrame: all / totals.frames, checksPerMinute: { tenFrames: checksPerMinute(10), twelveFrames: checksPerMinute(12) }, stages }))
} else {
  console.log(`${values.clip}: ${totals.frames} frames of ${size} (${totals.faces} faces), the models on ${JSON.stringify(ageModel.runtime)}, mean per frame`)
  console.log(`decode ${perFrame(totals.decode)}, detector and mesh ${perFrame(totals.detect)}, age model one view ${perFrame(totals.age)}, garbage collection ${perFrame(totals.collect)}; total ${perFrame(all)} (the age model ${((100 * totals.age) / all).toFixed(0)}%)`)
  const captures = [10, 12].map((count) => `${count} frames ${((count * all) / totals.frames / 1000).toFixed(2)} s, ${checksPerMinute(count).toFixed(0)} checks a core a minute`)
  console.log(`a capture: ${captures.join('; ')}`)
}
process.exit(0)
