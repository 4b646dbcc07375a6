import type { FaceObservation, FrameAnalysis } from '../estimator/types.ts'
import type { Challenge } from './challenge.ts'
import { defaultFaceBuffer } from '../clients/face-buffer.ts'
import { checkLiveness, DEFAULT_LIVENESS_POLICY, type CapturedFrame, type LivenessFailure, type LivenessPolicy } from './check.ts'

/**
 * The bounds a face check must meet. Defaults are in DEFAULT_FACE_POLICY and explained in
 * docs/decisions.md; the buffer can be set per deployment (FACE_AGE_BUFFER) and per client.
 */
export type FacePolicy = {
  /** Years the median estimate must exceed the threshold by (a cut-off of 29 for 18 is a buffer of 11). */
  buffer: number
  minFaceScore: number
  /** Face box width as a share of the frame's shorter side: a face far from the camera is refused. */
  minFaceShare: number
  minSharpness: number
  /** Frames that must pass every per-frame check. */
  minGoodFrames: number
}

export const DEFAULT_FACE_POLICY: FacePolicy = {
  buffer: defaultFaceBuffer(18),
  minFaceScore: 0.6,
  minFaceShare: 0.15,
  minSharpness: 20,
  minGoodFrames: 1,
}

/** Why a face check failed, from the most basic problem to the decision itself. */
export type FaceFailure = 'no_face' | 'several_faces' | 'face_too_small' | 'too_blurry' | 'not_over_threshold' | LivenessFailure

export type FaceDecision = { approved: true; medianAge: number; goodFrames: number } | { approved: false; failure: FaceFailure; medianAge?: number }

/**
 * Decides a face check on still frames from the estimator's numbers: each frame must show exactly one
 * face, large and sharp enough; the estimates of the good frames are combined by their
 * median, and the check passes only when that median is at least `threshold + buffer`.
 */
export function decideFaceCheck(frames: FrameAnalysis[], threshold: number, policy: FacePolicy = DEFAULT_FACE_POLICY): FaceDecision {
  const failures: FaceFailure[] = []
  const good: FaceObservation[] = []
  for (const frame of frames) {
    const faces = frame.faces.filter((face) => face.faceScore >= policy.minFaceScore)
    const failure = frameFailure(frame, faces, policy)
    if (failure) failures.push(failure)
    else good.push(faces[0]!)
  }
  if (good.length < Math.max(1, policy.minGoodFrames)) {
    return { approved: false, failure: mostBasic(failures) ?? 'no_face' }
  }
  const medianAge = median(good.map((face) => face.age))
  if (medianAge < threshold + policy.buffer) return { approved: false, failure: 'not_over_threshold', medianAge }
  return { approved: true, medianAge, goodFrames: good.length }
}

/**
 * Decides a live capture: first that the frames are one live person answering the challenge
 * (src/liveness/check.ts), then the age, on the frontal frames, as for still frames; last, the head that
 * answered the prompts must not read under the threshold itself. The identity check between turned and
 * frontal faces is loose (a cosine of 0.55, which 8.9% of pairs of strangers reach: docs/decisions.md), so an
 * adult's photo in the "look straight" phases beside a minor's own turning head could pass it; the ages of
 * the turned frames cost nothing more (the model reads them for the identity check) and, by their median,
 * refuse such a capture when the turning head looks under age. Only the bare threshold, without the buffer:
 * a turned face is estimated worse, and a genuine adult at the cut-off would need to read a whole buffer
 * younger turned (11 years for 18 by default) to be refused.
 */
export function decideLiveFaceCheck(
  frames: CapturedFrame[],
  challenge: Challenge,
  threshold: number,
  policy: FacePolicy = DEFAULT_FACE_POLICY,
  liveness: LivenessPolicy = { ...DEFAULT_LIVENESS_POLICY, minFaceScore: policy.minFaceScore },
): FaceDecision {
  const live = checkLiveness(frames, challenge, liveness)
  if (!live.live) return { approved: false, failure: live.failure }
  const decision = decideFaceCheck(live.frontal.map(({ frame, face }) => ({ ...frame, faces: [face] })), threshold, policy)
  if (!decision.approved) return decision
  const turnedAge = median(live.turned.map(({ face }) => face.age))
  if (turnedAge < threshold) return { approved: false, failure: 'not_over_threshold', medianAge: turnedAge }
  return decision
}

function frameFailure(frame: FrameAnalysis, faces: FaceObservation[], policy: FacePolicy): FaceFailure | undefined {
  if (faces.length === 0) return 'no_face'
  if (faces.length > 1) return 'several_faces'
  const face = faces[0]!
  if (face.box.width < policy.minFaceShare * Math.min(frame.width, frame.height)) return 'face_too_small'
  if (face.sharpness < policy.minSharpness) return 'too_blurry'
  return undefined
}

const failureOrder: FaceFailure[] = ['several_faces', 'no_face', 'face_too_small', 'too_blurry']

/** The reason to show when no frame was good: the one that most needs fixing first. */
function mostBasic(failures: FaceFailure[]): FaceFailure | undefined {
  return failureOrder.find((failure) => failures.includes(failure))
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
