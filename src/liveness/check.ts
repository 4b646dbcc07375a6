import type { FaceObservation, FrameAnalysis, Landmarks, MeshPoint } from '../estimator/types.ts'
import type { Challenge, Pose } from './challenge.ts'
import { fitRigid, type RigidFit } from './rigid-fit.ts'
import { turnOf } from './turn.ts'

/**
 * One frame of a live capture, in the order taken. `phase` is the prompt on screen when it was taken:
 * 0 the opening "look straight", k (1..n) the k-th prompt of the challenge, n+1 the closing "look
 * straight". `digest` is a hash of the frame's bytes (never the bytes): two equal digests in one capture
 * are one picture sent twice. Replays across captures are the content guard's job (replay.ts).
 */
export type CapturedFrame = { phase: number; digest: string; analysis: FrameAnalysis }

export type LivenessPolicy = {
  /** A frame shows a left or right turn when |turnOf| is at least this (inter-ocular distances)... */
  turnThreshold: number
  /** ...and the solid head fitted to it is turned at least this many degrees that way. */
  minYaw: number
  /** A frame shows "up" or "down" when the fitted head is pitched at least this many degrees. */
  minPitch: number
  /** A frame is frontal, fit for the age estimate, when |turnOf| is under this... */
  frontalThreshold: number
  /** ...and the fitted head is within this many degrees of the reference frontal face both ways. */
  maxFrontalAngle: number
  /**
   * A turn is one solid head turning when the rigid fit's residual (inter-ocular distances) is at most
   * this times |turnOf|: a real turn leaves ≤ 0.19, a nose slid sideways in 2D ≥ 0.25 (docs/decisions.md).
   */
  maxRigidPerTurn: number
  /**
   * The same for up and down, per degree of pitch. A looser bound: real nods measured 0.0014-0.0027 at
   * 20-45° and vertical warps 0.0023-0.011, so it stops only the cruder warps; every challenge also asks
   * for a left or right turn, which the turn bound reads well (docs/decisions.md).
   */
  maxRigidPerDegree: number
  /** Every face must be at least this close (cosine of descriptors) to the reference frontal one... */
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
 * Measured on the camera clips in shared/liveness and on 2D warps of frontal frames of them
 * (docs/decisions.md, "The rigidity check"): turnOf is about 0.018 per degree of yaw; one person's
 * frames stay above 0.69 cosine of the most frontal one even at 30° of yaw, frontal ones above 0.85;
 * two different people measured at most 0.67.
 */
export const DEFAULT_LIVENESS_POLICY: LivenessPolicy = {
  turnThreshold: 0.3,
  minYaw: 18,
  minPitch: 15,
  frontalThreshold: 0.15,
  maxFrontalAngle: 15,
  maxRigidPerTurn: 0.22,
  maxRigidPerDegree: 0.003,
  minSimilarity: 0.55,
  minFrontalSimilarity: 0.75,
  minMovement: 0.02,
  minFaceShare: 0.6,
  minFaceScore: 0.6,
}

/** Why a live capture was refused, from what is wrong with the frames to what the head did. */
export type LivenessFailure = 'repeated_frames' | 'several_faces' | 'no_face' | 'still' | 'face_changed' | 'no_turn' | 'wrong_turn' | 'no_frontal'

export type LivenessResult =
  /** `frontal`: the frames read as looking straight, for the age; `turned`: those that showed a prompted pose. */
  | { live: true; frontal: { frame: FrameAnalysis; face: FaceObservation }[]; turned: { frame: FrameAnalysis; face: FaceObservation }[] }
  /**
   * `poses`: what the head did under each prompt (the last frame of each phase), when it did not do what
   * was asked. `cause` 'not_rigid': a frame read as a turn that no solid head explains (a warped photo).
   */
  | { live: false; failure: LivenessFailure; poses?: (Pose | undefined)[]; cause?: 'not_rigid' }

type Face = FaceObservation & { landmarks: Landmarks; mesh: MeshPoint[] }
type Seen = { frame: CapturedFrame; face: Face; turn: number }
/** What one frame shows: a pose, a turn no solid head explains, or nothing clear (between two poses). */
type Reading = Pose | 'not_rigid' | undefined

/**
 * Decides whether a sequence of frames is one live person answering `challenge`: no picture repeated,
 * one face throughout and always the same person, landmarks that move, and the head in each prompt's
 * pose by the end of its phase, never a pose before its prompt, every turn one solid head turning.
 * Returns the frontal frames, on which the age is judged (a turned face is estimated worse), and the frames
 * that showed the prompted poses, which must not read under the threshold (face-policy.ts).
 */
export function checkLiveness(frames: CapturedFrame[], challenge: Challenge, policy: LivenessPolicy = DEFAULT_LIVENESS_POLICY): LivenessResult {
  if (new Set(frames.map((frame) => frame.digest)).size !== frames.length) return { live: false, failure: 'repeated_frames' }
  const seen: Seen[] = []
  for (const frame of frames) {
    const faces = frame.analysis.faces.filter((face) => face.faceScore >= policy.minFaceScore)
    if (faces.length > 1) return { live: false, failure: 'several_faces' }
    const face = faces[0]
    if (face?.landmarks && face.mesh) seen.push({ frame, face: face as Face, turn: turnOf(face.landmarks) })
  }
  if (seen.length === 0 || seen.length < policy.minFaceShare * frames.length) return { live: false, failure: 'no_face' }
  if (largestMovement(seen) < policy.minMovement) return { live: false, failure: 'still' }

  // The reference is the opening phase's most frontal face: every pose is read relative to it.
  const opening = seen.filter((item) => item.frame.phase === 0)
  if (opening.length === 0) return { live: false, failure: 'no_frontal' }
  const reference = opening.reduce((best, item) => (Math.abs(item.turn) < Math.abs(best.turn) ? item : best))
  if (Math.abs(reference.turn) >= policy.frontalThreshold) return { live: false, failure: 'no_frontal' }
  const unlike = (item: Seen) => {
    const bound = Math.abs(item.turn) < policy.frontalThreshold ? policy.minFrontalSimilarity : policy.minSimilarity
    return similarity(item.face.descriptor, reference.face.descriptor) < bound
  }
  if (seen.some(unlike)) return { live: false, failure: 'face_changed' }

  const expected: Pose[] = ['straight', ...challenge.poses, 'straight']
  const lastOfPhase = expected.map((_, phase) => seen.findLastIndex((item) => item.frame.phase === phase))
  // A head caught half-way through a turn fits a solid head less well (measured: 0.27-0.31 at a quarter
  // turn): only the frame that must show the pose, the last of its phase, is refused for it.
  const readings = seen.map((item, i) => {
    const reading = readPose(item, reference, policy)
    return reading === 'not_rigid' && !lastOfPhase.includes(i) ? undefined : reading
  })
  const poses = lastOfPhase.map((index) => (index >= 0 && readings[index] !== 'not_rigid' ? (readings[index] as Pose | undefined) : undefined))
  if (readings.includes('not_rigid')) return { live: false, failure: 'no_turn', poses, cause: 'not_rigid' }
  if (!readings.some((reading) => reading !== undefined && reading !== 'straight')) return { live: false, failure: 'no_turn', poses }

  // A turn may linger from the prompt before (a slow visitor), never come from a later one (a recording).
  const early = seen.some((item, i) => {
    const reading = readings[i]
    const phase = item.frame.phase
    return reading !== undefined && reading !== 'straight' && reading !== expected[phase] && reading !== expected[phase - 1]
  })
  if (early || poses.some((pose, phase) => pose !== expected[phase])) return { live: false, failure: 'wrong_turn', poses }

  const frontal = seen.filter((_, i) => readings[i] === 'straight')
  if (frontal.length === 0) return { live: false, failure: 'no_frontal' }
  const turned = seen.filter((_, i) => readings[i] !== undefined && readings[i] !== 'straight')
  const kept = (items: Seen[]) => items.map((item) => ({ frame: item.frame.analysis, face: item.face }))
  return { live: true, frontal: kept(frontal), turned: kept(turned) }
}

/**
 * Reads one frame's pose against the reference. Left and right need both the nose crossing the eye
 * line (an affine-invariant image measure, which a photo moved or tilted never fakes) and the fitted
 * head's yaw; every turn must also be explained by a rotation of the reference's 3D points: a 2D warp
 * of one photo can slide the nose, but its landmarks then move in a way no solid head does.
 */
function readPose(item: Seen, reference: Seen, policy: LivenessPolicy): Reading {
  const fit = fitRigid(reference.face.mesh, item.face.mesh, interocular(item.face.landmarks))
  if (!fit) return undefined
  if (item === reference) return 'straight'
  const yawScore = Math.abs(item.turn) >= policy.turnThreshold && Math.sign(item.turn) === Math.sign(fit.yaw) ? Math.abs(fit.yaw) / policy.minYaw : 0
  const pitchScore = Math.abs(fit.pitch) / policy.minPitch
  if (yawScore >= 1 && yawScore >= pitchScore) {
    if (fit.rigidResidual > policy.maxRigidPerTurn * Math.abs(item.turn)) return 'not_rigid'
    return fit.yaw > 0 ? 'left' : 'right'
  }
  if (pitchScore >= 1) {
    if (fit.rigidResidual > policy.maxRigidPerDegree * Math.abs(fit.pitch)) return 'not_rigid'
    return fit.pitch > 0 ? 'up' : 'down'
  }
  return isFrontal(item, fit, policy) ? 'straight' : undefined
}

const isFrontal = (item: Seen, fit: RigidFit, policy: LivenessPolicy) =>
  Math.abs(item.turn) < policy.frontalThreshold && Math.abs(fit.yaw) < policy.maxFrontalAngle && Math.abs(fit.pitch) < policy.maxFrontalAngle

const interocular = (landmarks: Landmarks) => Math.hypot(landmarks.leftEye[0] - landmarks.rightEye[0], landmarks.leftEye[1] - landmarks.rightEye[1])

/** The largest distance any landmark travels from its place in the first frame, in inter-ocular distances. */
function largestMovement(seen: Seen[]): number {
  const first = seen[0]!.face.landmarks
  const scale = interocular(first) || 1
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
