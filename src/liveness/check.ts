import type { FaceObservation, FrameAnalysis, Landmarks } from '../estimator/types.ts'
import type { Turn } from './challenge.ts'
import { turnDirection, turnOf } from './turn.ts'

/**
 * One frame of a live capture, in the order taken. `phase` is the prompt on screen when it was taken:
 * 0 "look straight", k (1..n) the k-th turn of the challenge, n+1 "look straight again". `digest` is a
 * hash of the frame's bytes (never the bytes).
 */
export type CapturedFrame = { phase: number; digest: string; analysis: FrameAnalysis }

export type LivenessPolicy = {
  /** A frame shows a turn when |turnOf| is at least this (inter-ocular distances). */
  turnThreshold: number
  /** A frame is frontal, fit for the age estimate, when |turnOf| is under this. */
  frontalThreshold: number
  /** Every face must be at least this close (cosine of descriptors) to the most frontal one... */
  minSimilarity: number
  /** ...and every frontal face closer still: turned faces drift apart even for one person, frontal ones do not. */
  minFrontalSimilarity: number
  /** Some landmark must move at least this far (inter-ocular distances) across the frames. */
  minMovement: number
  /** Share of frames that must show a face: a head turned away may lose the detector for a frame or two. */
  minFaceShare: number
  minFaceScore: number
}

/**
 * Measured on the camera clips in shared/liveness (docs/accuracy.md): turnOf is about 0.018 per degree
 * of yaw; real turns asked for reach 0.45-0.75, a photo waved and rotated in front of the camera stays
 * within ±0.03. One person's frames stay above 0.69 cosine of the most frontal one even at 30° of yaw,
 * frontal ones above 0.85; two different people measured at most 0.67.
 */
export const DEFAULT_LIVENESS_POLICY: LivenessPolicy = {
  turnThreshold: 0.35,
  frontalThreshold: 0.15,
  minSimilarity: 0.55,
  minFrontalSimilarity: 0.75,
  minMovement: 0.02,
  minFaceShare: 0.6,
  minFaceScore: 0.6,
}

/** Why a live capture was refused, from what is wrong with the frames to what the head did. */
export type LivenessFailure =
  | 'repeated_frames'
  | 'several_faces'
  | 'no_face'
  | 'still'
  | 'face_changed'
  | 'no_turn'
  | 'wrong_turn'
  | 'no_frontal'

export type LivenessResult =
  | { live: true; frontal: { frame: FrameAnalysis; face: FaceObservation }[] }
  /** `turns`: what the head did instead, when it turned the wrong way or not at all. */
  | { live: false; failure: LivenessFailure; turns?: Turn[] }

type Seen = { frame: CapturedFrame; face: FaceObservation & { landmarks: Landmarks }; turn: number }

/**
 * Decides whether a sequence of frames is one live person answering `challenge`: no frame repeated,
 * one face throughout and always the same person, landmarks that move, and the head turning in exactly
 * the challenge's order (never before the prompt asked for it). Returns the frontal frames, on which
 * alone the age is then judged: a turned face is estimated worse.
 */
export function checkLiveness(frames: CapturedFrame[], challenge: readonly Turn[], policy: LivenessPolicy = DEFAULT_LIVENESS_POLICY): LivenessResult {
  if (new Set(frames.map((frame) => frame.digest)).size !== frames.length) return { live: false, failure: 'repeated_frames' }
  const seen: Seen[] = []
  for (const frame of frames) {
    const faces = frame.analysis.faces.filter((face) => face.faceScore >= policy.minFaceScore)
    if (faces.length > 1) return { live: false, failure: 'several_faces' }
    const face = faces[0]
    if (face?.landmarks) seen.push({ frame, face: face as Seen['face'], turn: turnOf(face.landmarks) })
  }
  if (seen.length === 0 || seen.length < policy.minFaceShare * frames.length) return { live: false, failure: 'no_face' }
  if (largestMovement(seen) < policy.minMovement) return { live: false, failure: 'still' }

  const reference = seen.reduce((best, item) => (Math.abs(item.turn) < Math.abs(best.turn) ? item : best))
  const unlike = (item: Seen) => {
    const bound = Math.abs(item.turn) < policy.frontalThreshold ? policy.minFrontalSimilarity : policy.minSimilarity
    return similarity(item.face.descriptor, reference.face.descriptor) < bound
  }
  if (seen.some(unlike)) return { live: false, failure: 'face_changed' }

  const turns = observedTurns(seen, policy.turnThreshold)
  if (turns.length === 0) return { live: false, failure: 'no_turn', turns: [] }
  const inOrder = turns.length === challenge.length && turns.every((turn, k) => turn.turn === challenge[k] && turn.phase >= k + 1)
  if (!inOrder) return { live: false, failure: 'wrong_turn', turns: turns.map((turn) => turn.turn) }

  const frontal = seen.filter((item) => Math.abs(item.turn) < policy.frontalThreshold)
  if (frontal.length === 0) return { live: false, failure: 'no_frontal' }
  return { live: true, frontal: frontal.map((item) => ({ frame: item.frame.analysis, face: item.face })) }
}

/** The turns the frames show, in order, a held turn counted once, each with the phase it began in. */
function observedTurns(seen: Seen[], threshold: number): { turn: Turn; phase: number }[] {
  const turns: { turn: Turn; phase: number }[] = []
  for (const item of seen) {
    const turn = turnDirection(item.turn, threshold)
    if (turn && turns.at(-1)?.turn !== turn) turns.push({ turn, phase: item.frame.phase })
  }
  return turns
}

/** The largest distance any landmark travels from its place in the first frame, in inter-ocular distances. */
function largestMovement(seen: Seen[]): number {
  const first = seen[0]!.face.landmarks
  const scale = Math.hypot(first.leftEye[0] - first.rightEye[0], first.leftEye[1] - first.rightEye[1]) || 1
  let largest = 0
  for (const { face } of seen) {
    for (const key of Object.keys(first) as (keyof Landmarks)[]) {
      largest = Math.max(largest, Math.hypot(face.landmarks[key][0] - first[key][0], face.landmarks[key][1] - first[key][1]) / scale)
    }
  }
  return largest
}

/** Cosine similarity of two unit-length descriptors; a missing one is never similar (fail closed). */
export function similarity(a: number[] | undefined, b: number[] | undefined): number {
  if (!a || !b || a.length !== b.length || a.length === 0) return -1
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!
  return sum
}
