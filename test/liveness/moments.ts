import type { FrameAnalysis } from '../../src/estimator/types.ts'

/**
 * A recorded analysis as the estimator would report the same pose at another moment: every mesh point
 * nudged by up to ±5% of the inter-ocular distance, deterministically from `seed` (the frame's bytes), as
 * a real camera's frames differ even when the head holds still (measured: 0.02 between neighbouring
 * frames of intel-female-headturn). The same seed gives the same nudges: the same frame sent again is the
 * same picture, which the content replay guard must refuse.
 */
export function atAnotherMoment(analysis: FrameAnalysis, seed: string): FrameAnalysis {
  let state = 2166136261
  for (const char of seed) state = Math.imul(state ^ char.charCodeAt(0), 16777619) >>> 0
  const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1
  for (const face of analysis.faces) {
    if (!face.mesh || !face.landmarks) continue
    const { leftEye, rightEye } = face.landmarks
    const step = 0.05 * Math.hypot(leftEye[0] - rightEye[0], leftEye[1] - rightEye[1])
    face.mesh = face.mesh.map(([x, y, z]) => [x + step * random(), y + step * random(), z + step * random()])
  }
  return analysis
}
