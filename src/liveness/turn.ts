import type { Landmarks } from '../estimator/types.ts'
import type { Turn } from './challenge.ts'

/**
 * How far the head is turned, read from where the nose tip falls between the outer eye corners: the
 * nose's offset from the eyes' midpoint along the eye line, in inter-ocular distances. 0 is frontal;
 * positive means turned to the person's left (the nose moves to the right of an unmirrored camera
 * frame), negative to their right.
 *
 * Why this and not the mesh's 3D yaw: the ratio is unchanged by any affine map of the image (move,
 * rotate, scale, shear), and a flat photo moved, rotated or tilted in front of a camera is, to first
 * order, such a map. Only a solid head turning makes the nose, which stands out of the face, slide
 * across the eye line. The mesh's yaw, by contrast, is a learnt guess that a tilted photo can fool.
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

/** The turn a frame shows, when it is clearly one: `threshold` is in the units of turnOf. */
export function turnDirection(turn: number, threshold: number): Turn | undefined {
  if (turn >= threshold) return 'left'
  if (turn <= -threshold) return 'right'
  return undefined
}
