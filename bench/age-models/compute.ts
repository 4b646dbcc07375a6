/**
 * Runs every candidate age model and test-time augmentation once per labelled photo and caches the
 * estimates in a file outside the repository (per-photo results of a licensed set never enter it).
 * See bench/age-models.ts for the command and the report.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { GraphModel } from '@tensorflow/tfjs-converter'
import type { Tensor, Tensor4D } from '@tensorflow/tfjs-core'
import { Human } from '../../node_modules/@vladmandic/human/dist/human.node-wasm.js'
import { BGR_MEAN, INPUT_SIDE } from '../../src/estimator/age-model.ts'
import { faceAssetFolders } from '../../src/estimator/embedded-assets.ts'
import { parseLabels, parseUtkFaceFields } from '../../src/estimator/eval-labels.ts'
import { humanConfig } from '../../src/estimator/human-engine.ts'
import { decodeImage } from '../../src/estimator/image.ts'
import { FACE_API_INPUT, loadFaceApiAge, runFaceApiAge } from './face-api-age.ts'

export type PhotoRecord = { age: number; gender?: string; group?: string; faces: number; est: Record<string, number> }
export type Cache = Record<string, PhotoRecord>

/** The live check's detector bound (DEFAULT_FACE_POLICY.minFaceScore). */
const MIN_FACE_SCORE = 0.6
/** Face crops as squares around the mesh's box, by how many times its larger side they span. */
const SCALES = [1.0, 1.2, 1.4, 1.6, 1.8]
/** Sideways shifts of the 1.2 crop, as a share of its side. */
const SHIFT = 0.06
/** GEAR's classes (Below20, 21-25, 26-30, 31-40, 41-50, 51-60, Above60) as Human 3.3.6 weighs them (src/gear/gear.ts). */
const GEAR_AGES = [15, 23, 28, 35.5, 45.5, 55.5, 65]

type Tf = typeof import('@tensorflow/tfjs-core')

export async function computeEstimates(options: { dataset: string; cacheFile: string; humanModels: string; shard: number; shards: number }): Promise<void> {
  const cache: Cache = existsSync(options.cacheFile) ? JSON.parse(readFileSync(options.cacheFile, 'utf8')) : {}
  const labels = parseLabels(readFileSync(join(options.dataset, 'labels.csv'), 'utf8')).filter((_, i) => i % options.shards === options.shard)
  const carried = faceAssetFolders()
  const human = new Human(humanConfig(carried.modelsDir, carried.wasmDir))
  await human.load()
  const tf = human.tf as unknown as Tf
  const load = (dir: string, file: string) => human.tf.loadGraphModel(`${pathToFileURL(dir).href}/${file}`) as unknown as Promise<GraphModel>
  const faceres = await load(carried.ageModelDir, 'faceres-deep.json')
  const gear = await load(options.humanModels, 'gear.json')
  const ssrnet = await load(options.humanModels, 'age.json')
  const faceApi = await loadFaceApiAge(tf, resolve('node_modules/@vladmandic/face-api/model'))
  const started = performance.now()
  let done = 0
  for (const label of labels) {
    if (cache[label.path]) continue
    const image = await decodeImage(new Uint8Array(readFileSync(resolve(options.dataset, label.path))))
    const input = human.tf.tensor3d(image.data, [image.height, image.width, 3], 'int32')
    const result = await human.detect(input)
    const faces = result.face.filter((face) => face.boxScore >= MIN_FACE_SCORE)
    const record: PhotoRecord = { age: label.age, ...parseUtkFaceFields(label.path), faces: faces.length, est: {} }
    if (faces.length === 1 && faces[0]!.tensor) {
      const face = faces[0]!
      record.est = estimateAll(tf, { faceres, gear, ssrnet, faceApi }, input as never, face.tensor as never, face.boxRaw as number[])
    }
    human.tf.dispose([input, ...result.face.map((face) => face.tensor).filter((t) => t !== undefined)] as never)
    cache[label.path] = record
    if (++done % 25 === 0) {
      save(options.cacheFile, cache)
      console.error(`shard ${options.shard}: ${done} photos, ${((performance.now() - started) / 1000).toFixed(0)} s, ${tf.memory().numTensors} tensors`)
    }
  }
  save(options.cacheFile, cache)
}

function save(file: string, cache: Cache) {
  writeFileSync(`${file}.tmp`, JSON.stringify(cache))
  renameSync(`${file}.tmp`, file)
}

type Models = { faceres: GraphModel; gear: GraphModel; ssrnet: GraphModel; faceApi: Awaited<ReturnType<typeof loadFaceApiAge>> }

/**
 * Every estimate for one face. Keys are model:crop:view, view o (the face) or m (its mirror image);
 * crop "human" is Human's own crop (the detector's box × 1.4, rotated upright, 192 × 192: what the live
 * check reads today), "sN" a square N times the mesh box's larger side, "s1.2x-" and "s1.2x+" shifted left and right.
 */
function estimateAll(tf: Tf, models: Models, input: Tensor, humanCrop: Tensor4D, boxRaw: number[]): Record<string, number> {
  const est: Record<string, number> = {}
  const [H, W] = [input.shape[0]!, input.shape[1]!]
  const [bx, by, bw, bh] = boxRaw as [number, number, number, number]
  const box = (scale: number, dx = 0, dy = 0) => {
    const side = Math.max(bw * W, bh * H) * scale
    const cx = (bx + bw / 2) * W + dx * side
    const cy = (by + bh / 2) * H + dy * side
    return [(cy - side / 2) / H, (cx - side / 2) / W, (cy + side / 2) / H, (cx + side / 2) / W]
  }
  const crops: Record<string, number[]> = {}
  for (const s of SCALES) crops[`s${s.toFixed(1)}`] = box(s)
  crops['s1.2x-'] = box(1.2, -SHIFT, 0)
  crops['s1.2x+'] = box(1.2, SHIFT, 0)
  const image = tf.tidy(() => tf.expandDims(tf.div(tf.cast(input, 'float32'), 255), 0)) as Tensor4D

  /** Runs `run` on [crop o, crop m] for each named crop (shift crops: o only), resized to side. */
  const each = (names: string[], side: number, run: (batch: Tensor4D) => number[], mirror = (name: string) => !name.includes('x') && !name.includes('y'), human?: number[]) => {
    const keys: string[] = []
    const batch = tf.tidy(() => {
      const parts: Tensor4D[] = []
      for (const name of names) {
        const crop = name === 'human'
          ? tf.image.cropAndResize(humanCrop.rank === 3 ? tf.expandDims<Tensor4D>(humanCrop, 0) : humanCrop, [human ?? [0, 0, 1, 1]], [0], [side, side])
          : tf.image.cropAndResize(image, [crops[name]!], [0], [side, side], 'bilinear', 0)
        parts.push(crop)
        keys.push(`${name}:o`)
        if (mirror(name)) {
          parts.push(tf.reverse(crop, 2))
          keys.push(`${name}:m`)
        }
      }
      return tf.concat(parts, 0)
    })
    try {
      const values = run(batch)
      return Object.fromEntries(keys.map((key, i) => [key, values[i]!]))
    } finally {
      batch.dispose()
    }
  }

  const faceresRun = (batch: Tensor4D) =>
    tf.tidy(() => {
      const bgr = tf.sub(tf.reverse(tf.mul(batch, 255), -1), tf.tensor1d([...BGR_MEAN]))
      const outputs = models.faceres.execute(bgr) as Tensor[]
      const softmax = outputs.find((t) => t.shape.length === 2 && t.shape[1] === 100)!
      return Array.from(tf.sum(tf.mul(softmax, tf.range(0, 100, 1, 'float32')), 1).dataSync())
    })
  for (const [k, v] of Object.entries(each(['human', 's1.0', 's1.2', 's1.2x-', 's1.2x+'], INPUT_SIDE, faceresRun))) est[`faceres:${k}`] = v

  // GEAR: Human crops the inner [top 0, left 0.1, bottom 0.9, right 0.9] of its face crop, RGB 0..1, 198 × 198.
  const gearProbabilities = (batch: Tensor4D) =>
    tf.tidy(() => {
      const outputs = models.gear.execute(batch) as Tensor[]
      const age = outputs.find((t) => t.shape[1] === GEAR_AGES.length)!
      return Array.from(age.dataSync())
    })
  // One pass on Human's crop and its mirror image, read two ways: Human's own reading and the plain
  // expectation over the class ages. (Square crops around the mesh box gave MAEs over 20 years.)
  const gearInput = tf.tidy(() => {
    const crop = tf.image.cropAndResize(humanCrop.rank === 3 ? tf.expandDims<Tensor4D>(humanCrop, 0) : humanCrop, [[0, 0.1, 0.9, 0.9]], [0], [198, 198])
    return tf.concat([crop, tf.reverse(crop, 2)], 0)
  })
  const gearFlat = gearProbabilities(gearInput as Tensor4D)
  gearInput.dispose()
  for (const [i, view] of ['o', 'm'].entries()) {
    const p = gearFlat.slice(i * 7, i * 7 + 7)
    est[`gear:human:${view}`] = gearHuman(p)
    est[`gearE:human:${view}`] = gearExpectation(p)
  }

  // SSR-Net: 64 × 64, pixels 0..255. Human feeds RGB; the network's authors fed OpenCV's BGR.
  for (const order of ['rgb', 'bgr'] as const) {
    const ssrRun = (batch: Tensor4D) =>
      tf.tidy(() => {
        const pixels = tf.mul(order === 'bgr' ? tf.reverse(batch, -1) : batch, 255)
        return Array.from((models.ssrnet.execute(pixels) as Tensor).dataSync())
      })
    for (const [k, v] of Object.entries(each(['human', 's1.4'], 64, ssrRun))) est[`ssr-${order}:${k}`] = v
  }

  const faceApiRun = (batch: Tensor4D) => Array.from(runFaceApiAge(tf, models.faceApi, batch))
  for (const [k, v] of Object.entries(each(['human', 's1.0', 's1.2'], FACE_API_INPUT, faceApiRun))) est[`faceapi:${k}`] = v

  image.dispose()
  for (const key of Object.keys(est)) est[key] = Math.round(est[key]! * 100) / 100
  return est
}

/** Human 3.3.6's reading: start at the likeliest class's age, then move toward each other class by its probability. */
function gearHuman(p: number[]): number {
  const sorted = p.map((prob, i) => [GEAR_AGES[i]!, prob] as const).sort((a, b) => b[1] - a[1])
  let age = sorted[0]![0]
  for (let i = 1; i < sorted.length; i++) age += sorted[i]![1] * (sorted[i]![0] - age)
  return age
}

function gearExpectation(p: number[]): number {
  const total = p.reduce((a, b) => a + b, 0) || 1
  return p.reduce((sum, prob, i) => sum + prob * GEAR_AGES[i]!, 0) / total
}
