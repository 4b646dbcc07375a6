import { randomInt } from 'node:crypto'
import type { FaceObservation, FrameAnalysis } from '../estimator/types.ts'

/**
 * Remembers, for a while, what the captures this instance judged looked like, so that frames taken from
 * one capture and posted again to another are refused: byte-identical frames (the cheapest replay), and
 * the same frames re-encoded, resized a little, shifted or sprinkled with noise (the next cheapest).
 *
 * A frame's content is the shape of its face mesh, normalised for position, size and roll, then
 * projected by a random matrix drawn when the guard is made onto SKETCH_SIZE numbers: distances survive
 * the projection (Johnson-Lindenstrauss), the face does not (210 coordinates to 64, by a matrix that
 * never leaves memory). Nothing is written down; memory is bounded by `maxEntries` frames.
 *
 * Why a whole capture and not single frames: a person holding still gives two frames as alike as one
 * frame and its re-encoding (measured: 0.006 vs 0.007 inter-ocular distances, docs/decisions.md), so one
 * frame alike proves nothing. A replay repeats most of a capture, turns included; a new capture of the
 * same person matches at most its straight frames, never its turns to within a degree or two.
 */
export function createReplayGuard(options: {
  ttlMs: number
  maxEntries: number
  tolerance?: number
  minShare?: number
  /** Uniform in [0, 1): the draws of the projection. node:crypto unless given; tests give a seeded one, so two runs agree. */
  random?: () => number
}) {
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE
  const minShare = options.minShare ?? DEFAULT_MIN_SHARE
  const projection = randomProjection(options.random ?? cryptoRandom)
  const digests = new Map<string, number>()
  const sketches = new Float32Array(options.maxEntries * SKETCH_SIZE)
  const owners = new Int32Array(options.maxEntries).fill(-1)
  const expiries = new Float64Array(options.maxEntries)
  const positions = new Int32Array(options.maxEntries)
  let next = 0
  let captures = 0

  function forgetExpired(now: number) {
    for (const [digest, expires] of digests) {
      if (expires > now && digests.size <= options.maxEntries) break
      digests.delete(digest)
    }
  }

  return {
    /**
     * Records a capture (its frames' byte digests and analyses) and says whether it replays an earlier
     * one: any frame byte for byte, or at least `minShare` of its faces (and two or more) each within
     * `tolerance` of a face of one earlier capture, in that capture's order.
     */
    replayed(frameDigests: string[], analyses: FrameAnalysis[], now: number): boolean {
      forgetExpired(now)
      let replayed = frameDigests.some((digest) => (digests.get(digest) ?? 0) > now)
      for (const digest of frameDigests) {
        digests.delete(digest)
        digests.set(digest, now + options.ttlMs)
      }
      forgetExpired(now)

      const faces = analyses.map((analysis) => analysis.faces[0]).filter((face) => face !== undefined)
      const current = faces.map((face) => sketch(face, projection)).filter((value) => value !== undefined)
      // For each earlier capture, which of its stored faces (by position) each of ours is within tolerance of.
      const alike = new Map<number, { position: number; index: number }[]>()
      for (const [index, probe] of current.entries()) {
        for (let slot = 0; slot < options.maxEntries; slot++) {
          const owner = owners[slot]!
          if (owner < 0 || expiries[slot]! <= now || distance(sketches, slot, probe) > tolerance) continue
          const pairs = alike.get(owner) ?? []
          pairs.push({ position: positions[slot]!, index })
          alike.set(owner, pairs)
        }
      }
      const needed = Math.max(2, Math.ceil(minShare * current.length))
      if (current.length > 0 && [...alike.values()].some((pairs) => inOrder(pairs) >= needed)) replayed = true

      const id = captures++ % 0x7fffffff
      for (const [position, probe] of current.entries()) {
        sketches.set(probe, next * SKETCH_SIZE)
        owners[next] = id
        positions[next] = position
        expiries[next] = now + options.ttlMs
        next = (next + 1) % options.maxEntries
      }
      return replayed
    },
  }
}

/**
 * Numbers kept per frame. The projection's estimate of a distance errs less the more are kept: with 24, one
 * matrix in 80 missed a replay with 1% noise (docs/decisions.md); with 64, none of 2,000.
 */
export const SKETCH_SIZE = 64
/**
 * RMS distance (inter-ocular distances, per normalised coordinate) under which two faces count as one
 * picture. Measured on the clips (docs/decisions.md): a frame and its re-encoding at quality 70, resized
 * 1% or shifted 3 px, 0.007 median (0.04 at most); 1% of pixels replaced by noise 0.008-0.085 (half
 * under 0.022); the same woman's other frames 0.017-0.096 from the nearest frame of a first capture.
 */
const DEFAULT_TOLERANCE = 0.025
const DEFAULT_MIN_SHARE = 0.5

/**
 * The mesh in the face's own frame: origin between the outer eye corners, x along the eye line, unit
 * the inter-ocular distance, depth in the same unit; then projected. Undefined without a mesh.
 */
function sketch(face: FaceObservation, projection: Float32Array): Float32Array | undefined {
  const { landmarks, mesh } = face
  if (!landmarks || !mesh?.length) return undefined
  const mx = (landmarks.leftEye[0] + landmarks.rightEye[0]) / 2
  const my = (landmarks.leftEye[1] + landmarks.rightEye[1]) / 2
  const ex = landmarks.leftEye[0] - landmarks.rightEye[0]
  const ey = landmarks.leftEye[1] - landmarks.rightEye[1]
  const d = Math.hypot(ex, ey)
  if (!(d > 0)) return undefined
  const c = ex / d
  const s = ey / d
  const shape = mesh.flatMap(([x, y, z]) => [((x - mx) * c + (y - my) * s) / d, (-(x - mx) * s + (y - my) * c) / d, z / d])
  const out = new Float32Array(SKETCH_SIZE)
  const width = projection.length / SKETCH_SIZE
  for (let row = 0; row < SKETCH_SIZE; row++) {
    let sum = 0
    for (let col = 0; col < Math.min(width, shape.length); col++) sum += projection[row * width + col]! * shape[col]!
    // Scaled so that the RMS distance of sketches estimates the RMS distance per coordinate of shapes.
    out[row] = sum / Math.sqrt(shape.length)
  }
  return out
}

/** A Gaussian random matrix (SKETCH_SIZE × 256), from crypto randomness: unknown outside this process. */
/** Uniform in [0, 1) from node:crypto: a projection no one can predict, so no one can craft a replay to slip past it. */
const cryptoRandom = () => randomInt(0, 2 ** 32) / 2 ** 32

function randomProjection(random: () => number): Float32Array {
  const width = 256
  const matrix = new Float32Array(SKETCH_SIZE * width)
  for (let i = 0; i < matrix.length; i++) {
    // Box-Muller: u in (0, 1], so the logarithm is finite.
    const u = 1 - random()
    const v = random()
    matrix[i] = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
  }
  return matrix
}

/** The most pairs (earlier position, our index) that keep both orders: a longest common subsequence. */
function inOrder(pairs: { position: number; index: number }[]): number {
  const sorted = [...pairs].sort((a, b) => a.index - b.index || b.position - a.position)
  // Longest strictly increasing subsequence of positions; within one index positions fall, so it uses each index once.
  const tails: number[] = []
  for (const { position } of sorted) {
    let low = 0
    let high = tails.length
    while (low < high) {
      const middle = (low + high) >> 1
      if (tails[middle]! < position) low = middle + 1
      else high = middle
    }
    tails[low] = position
  }
  return tails.length
}

function distance(store: Float32Array, slot: number, probe: Float32Array): number {
  let sum = 0
  const base = slot * SKETCH_SIZE
  for (let i = 0; i < SKETCH_SIZE; i++) sum += (store[base + i]! - probe[i]!) ** 2
  return Math.sqrt(sum / SKETCH_SIZE)
}
