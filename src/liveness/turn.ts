import type { Landmarks } from '../estimator/types.ts'

/**
 * How far the head is turned, read from where the nose tip falls between the outer eye corners: the
 * nose's offset from the eyes' midpoint along the eye line, in inter-ocular distances. 0 is frontal;
 * positive means turned to the person's left (the nose moves to the right of an unmirrored camera
 * frame), negative to their right.
 *
 * The ratio is unchanged by any affine map of the image (move, rotate, scale, shear), and a flat photo
 * moved, rotated or tilted in front of a camera is, to first order, such a map: only a solid head
 * turning, or a photo warped locally, makes the nose slide across the eye line. The rigid fit
 * (rigid-fit.ts) tells those two apart; this tells both from a photo moved about.
 */
export function turnOf(landmarks: Landmarks): number {
  const [rx, ry] = landmarks.rightEye
  const [lx, ly] = landmarks.leftEye
  const [nx, ny] = landmarks.nose
  const ex = lx - rx
  const ey = ly - ry
  const squared = ex * ex + ey * ey
  if (squared < 1) return 0
  const midX = (rx + lx) / 2
  const midY = (ry + ly) / 2
  return ((nx - midX) * ex + (ny - midY) * ey) / squared
}
