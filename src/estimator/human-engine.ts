import { pathToFileURL } from 'node:url'
import type { Config } from '@vladmandic/human'
import type { Tensor3D } from '@tensorflow/tfjs-core'
import jpeg from 'jpeg-js'
// The node-wasm build by path: the package's exports map does not resolve it. Imported statically so a
// compiled binary bundles it, with the tfjs packages it requires.
import { Human } from '../../node_modules/@vladmandic/human/dist/human.node-wasm.js'
import { estimateAge, INPUT_SIDE, loadAgeRunner, type AgeRunner } from './age-model.ts'
import { faceAssetFolders } from './embedded-assets.ts'
import { HUMAN_MODELS, runHumanModelsInOnnx } from './human-models.ts'
import { decodeImage, type RgbImage } from './image.ts'
import { MESH_POINTS } from './mesh-points.ts'
import { laplacianVariance } from './sharpness.ts'
import type { AgeViews, FaceObservation, FrameAnalysis, Landmarks, MeshPoint, ModelRuntime, Point } from './types.ts'

/** Where Human's models, the age model and the tfjs wasm binaries are; each defaults to the one the program carries. */
export type EngineAssets = { modelsDir?: string; wasmDir?: string; ageModelDir?: string }

export type HumanEngine = {
  analyzeImage(bytes: Uint8Array, views?: AgeViews): Promise<FrameAnalysis>
  /** Runs every loaded model once so that the first real frame does not pay for kernel set-up. */
  warmUp(): Promise<void>
  /** Live tensors in the tfjs engine, to check that analyses do not leak. */
  numTensors(): number
  modelRuntime: ModelRuntime
  close(): void
}

const MAX_FACES = 5
const REQUIRED_MODELS = Object.keys(HUMAN_MODELS)
/** Face mesh indices (MediaPipe's 468-point topology) of the points in Landmarks. */
const LANDMARK_POINTS = { rightEye: 33, leftEye: 263, nose: 1, mouthRight: 61, mouthLeft: 291 } as const

function resolveAssets(assets: EngineAssets): Required<EngineAssets> {
  const carried = faceAssetFolders()
  return {
    modelsDir: assets.modelsDir ?? carried.modelsDir,
    wasmDir: assets.wasmDir ?? carried.wasmDir,
    ageModelDir: assets.ageModelDir ?? carried.ageModelDir,
  }
}

/**
 * Every path is local: Human's defaults point at a CDN, which the service must never reach. Frame caching
 * is off (cacheSensitivity 0, skipFrames 0) because each call is an unrelated still, not a video stream.
 */
export function humanConfig(modelsDir: string, wasmDir: string): Partial<Config> {
  const everyFrame = { skipFrames: 0, skipTime: 0 }
  return {
    backend: 'wasm',
    // A plain directory: emscripten reads the .wasm with fs under Bun, no fetch involved.
    wasmPath: wasmDir.endsWith('/') ? wasmDir : `${wasmDir}/`,
    wasmPlatformFetch: false,
    // A file:// URL: tfjs falls back to its HTTP loader, which calls fetch, and Bun's fetch reads file:// URLs.
    modelBasePath: `${pathToFileURL(modelsDir).href}/`,
    cacheModels: false,
    cacheSensitivity: 0,
    warmup: 'none',
    debug: false,
    async: false,
    filter: { enabled: false },
    face: {
      enabled: true,
      // Rotation correction hands the age model an upright face; maxDetected > 1 so that the policy can
      // refuse a frame with several people rather than silently judging one of them. `return` keeps the
      // upright crop, which the age model (run here, not by Human) reads.
      detector: { ...everyFrame, enabled: true, rotation: true, maxDetected: MAX_FACES, minConfidence: 0.2, return: true, mask: false },
      // The mesh refines the box and the crop that the age, anti-spoofing and liveness models see.
      mesh: { enabled: true },
      attention: { enabled: false },
      iris: { enabled: false },
      emotion: { enabled: false },
      // Human's own faceres reading feeds RGB where the model wants BGR less the mean, and decodes by arg-max.
      description: { enabled: false },
      // Human's anti-spoofing and liveness scores did not tell a printed photo from a live face on the
      // camera clips (0.53-0.80 for both) and dropped under 0.5 on live faces: the live challenge
      // (src/liveness/) does that job, and these would only cost 30 ms a frame and refuse real people.
      antispoof: { enabled: false },
      liveness: { enabled: false },
      gear: { enabled: false },
    },
    body: { enabled: false },
    hand: { enabled: false },
    object: { enabled: false },
    gesture: { enabled: false },
    segmentation: { enabled: false },
  }
}

/** Loads Human with the wasm backend and the face models, once; the caller keeps the engine for its lifetime. */
export async function createHumanEngine(assets: EngineAssets = {}): Promise<HumanEngine> {
  const { modelsDir, wasmDir, ageModelDir } = resolveAssets(assets)
  const human = new Human(humanConfig(modelsDir, wasmDir))
  await human.load()
  if (human.tf.getBackend() !== 'wasm') throw new Error(`tfjs backend is ${human.tf.getBackend()}, expected wasm`)
  const loaded = human.models.loaded()
  const missing = REQUIRED_MODELS.filter((name) => !loaded.includes(name))
  if (missing.length) throw new Error(`face models failed to load: ${missing.join(', ')}`)
  const ageModel = await loadAgeRunner(human.tf, ageModelDir)
  // Where the age model runs in onnxruntime, so do the detector and the mesh (src/estimator/human-models.ts).
  const restoreHumanModels = ageModel.runtime.name === 'onnxruntime' ? runHumanModelsInOnnx(human.tf, human.models.models, modelsDir, await (await import('./onnxruntime.ts')).loadOnnxRuntime()) : undefined

  const frameTensor = frameInput(human.tf)

  async function analyzeImage(bytes: Uint8Array, views: AgeViews = 'both'): Promise<FrameAnalysis> {
    const started = performance.now()
    const image = await decodeImage(bytes)
    const faces = await detectFaces(human, ageModel, image, frameTensor(image), views)
    return { width: image.width, height: image.height, faces, ms: Math.round(performance.now() - started) }
  }

  async function warmUp(): Promise<void> {
    // A generated, faceless JPEG runs the decoder and the detector; the face models, which only run on
    // a face, each get one zero input. Without this the first real frame takes about twice as long.
    await analyzeImage(warmUpJpeg())
    await ageModel.run(new Float32Array(INPUT_SIDE * INPUT_SIDE * 3), 1, INPUT_SIDE, INPUT_SIDE)
    for (const model of Object.values(human.models.models)) {
      const shape = model?.inputs[0]?.shape
      if (!model || !shape) continue
      const zeros = human.tf.zeros(shape.map((dim, i) => (dim > 0 ? dim : i === 0 ? 1 : 64)))
      const output = model.execute(zeros)
      human.tf.dispose([zeros, ...(Array.isArray(output) ? output : [output])])
    }
  }

  return {
    analyzeImage,
    warmUp,
    numTensors: () => human.tf.memory().numTensors,
    modelRuntime: ageModel.runtime,
    close: () => {
      restoreHumanModels?.()
      for (const model of Object.values(human.models.models)) model?.dispose()
      ageModel.dispose()
    },
  }
}

/**
 * The frame as the tensor Human takes: int32 samples, from one array kept for the engine's life. tfjs copies
 * it into the WASM heap at once, and a new one a frame (8 MB for 960 × 720) was garbage the worker had to
 * collect. The caller disposes of the tensor.
 */
export function frameInput(tf: Human['tf']): (image: RgbImage) => Tensor3D {
  let samples = new Int32Array(0)
  return (image) => {
    if (samples.length < image.data.length) samples = new Int32Array(image.data.length)
    const view = samples.subarray(0, image.data.length)
    view.set(image.data)
    return tf.tensor3d(view, [image.height, image.width, 3], 'int32') as Tensor3D
  }
}

async function detectFaces(human: Human, ageModel: AgeRunner, image: RgbImage, input: Tensor3D, views: AgeViews): Promise<FaceObservation[]> {
  const crops: { dispose(): void }[] = []
  try {
    const result = await human.detect(input)
    for (const face of result.face) if (face.tensor) crops.push(face.tensor)
    if (result.error) throw new Error(`face detection failed: ${result.error}`)
    const observations: FaceObservation[] = []
    for (const face of result.face) {
      const [x, y, width, height] = clipBox(face.box, image)
      // The crop is [h, w, 3] in 0..1; without one (never seen) the face still counts and fails closed.
      const estimate = face.tensor ? await estimateAge(ageModel, face.tensor as never, views) : undefined
      const observation: FaceObservation = {
        age: estimate && Number.isFinite(estimate.age) ? estimate.age : 0,
        // The detector's own confidence: with the mesh on, Human's `score` is the mesh's, which is near 1
        // for anything face-like (0.72 on a patch of hair where the detector said 0.24).
        faceScore: face.boxScore,
        box: { x, y, width, height },
        sharpness: Math.round(laplacianVariance(image, { x, y, width, height }) * 10) / 10,
      }
      if (estimate) observation.descriptor = estimate.descriptor
      const landmarks = meshLandmarks(face.mesh)
      if (landmarks) observation.landmarks = landmarks
      const mesh = meshWithDepth(face.meshRaw, face.boxRaw, image)
      if (mesh) observation.mesh = mesh
      const angle = face.rotation?.angle
      if (angle) observation.pose = { yaw: degrees(angle.yaw), pitch: degrees(angle.pitch), roll: degrees(angle.roll) }
      observations.push(observation)
    }
    return observations
  } finally {
    input.dispose()
    human.tf.dispose(crops as never)
  }
}

function meshLandmarks(mesh: readonly (readonly (number | undefined)[])[] | undefined): Landmarks | undefined {
  if (!mesh || mesh.length < 468) return undefined
  const point = (index: number): Point => [round1(mesh[index]![0] ?? 0), round1(mesh[index]![1] ?? 0)]
  return {
    rightEye: point(LANDMARK_POINTS.rightEye),
    leftEye: point(LANDMARK_POINTS.leftEye),
    nose: point(LANDMARK_POINTS.nose),
    mouthRight: point(LANDMARK_POINTS.mouthRight),
    mouthLeft: point(LANDMARK_POINTS.mouthLeft),
  }
}

/**
 * MESH_POINTS with depth, all three in pixels of the frame. Human gives x and y in pixels but z in the
 * units of the mesh model's input crop (meshRaw's z is that over the crop's side); the crop's side in
 * pixels is the unclamped face box (boxRaw, a share of the frame's width).
 */
function meshWithDepth(meshRaw: readonly (readonly (number | undefined)[])[] | undefined, boxRaw: readonly number[] | undefined, image: RgbImage): MeshPoint[] | undefined {
  if (!meshRaw || meshRaw.length < 468 || !boxRaw) return undefined
  const depthScale = (boxRaw[2] ?? 0) * image.width
  if (!(depthScale > 0)) return undefined
  return MESH_POINTS.map((index) => {
    const [x, y, z] = meshRaw[index]!
    return [round1((x ?? 0) * image.width), round1((y ?? 0) * image.height), round1((z ?? 0) * depthScale)]
  })
}

const round1 = (value: number) => Math.round(value * 10) / 10
const degrees = (radians: number) => round1((radians * 180) / Math.PI)

function warmUpJpeg(): Uint8Array {
  const width = 640
  const height = 480
  const data = new Uint8Array(width * height * 4)
  for (let i = 0; i < width * height; i++) data.fill((i % width) % 256, i * 4, i * 4 + 4)
  return jpeg.encode({ width, height, data }, 80).data
}

/** Human's box may extend past the frame edge; the policy compares it with the frame, so clip it. */
function clipBox(box: readonly number[], image: RgbImage): [number, number, number, number] {
  const x0 = Math.max(0, Math.round(box[0] ?? 0))
  const y0 = Math.max(0, Math.round(box[1] ?? 0))
  const x1 = Math.min(image.width, Math.round((box[0] ?? 0) + (box[2] ?? 0)))
  const y1 = Math.min(image.height, Math.round((box[1] ?? 0) + (box[3] ?? 0)))
  return [x0, y0, Math.max(0, x1 - x0), Math.max(0, y1 - y0)]
}
