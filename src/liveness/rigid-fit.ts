import type { MeshPoint } from '../estimator/types.ts'

/**
 * How one frame's face relates to the capture's reference frontal face, read as a solid head: the
 * rotation that best carries the reference's 3D mesh points onto this frame's 2D points under a
 * scaled orthographic camera (a face a metre from a phone is far enough for it), and what that leaves
 * unexplained. Angles are the visitor's own: `yaw` > 0 turned to their left, `pitch` > 0 looking up.
 */
export type RigidFit = {
  yaw: number
  pitch: number
  /** RMS distance between the frame's points and the fitted solid head, in inter-ocular distances. */
  rigidResidual: number
  /**
   * The same for the best flat (2D affine) map of the reference's points: a photo moved, tilted, sheared
   * or stretched. A real turn moves near and far points differently, which no flat map reproduces.
   */
  flatResidual: number
}

type Vec3 = [number, number, number]

/**
 * Fits `points` (this frame, x and y used) to `reference` (the frontal frame, x, y and depth), point
 * for point: the rotation R and scale s minimising Σ|qᵢ − s·(R·pᵢ)ₓᵧ|² over centred points, by
 * Gauss-Newton on a rotation vector from the identity (a 2×3 camera has no closed-form Procrustes:
 * the depth row it drops changes with R). Ten steps settle to 1e-6 from any head pose a person holds.
 */
export function fitRigid(reference: readonly MeshPoint[], points: readonly MeshPoint[], interocular: number): RigidFit | undefined {
  const n = Math.min(reference.length, points.length)
  if (n < 6 || !(interocular > 0)) return undefined
  const p = centre(reference.slice(0, n).map((point) => [point[0], point[1], point[2]] as Vec3))
  const q = centre(points.slice(0, n).map((point) => [point[0], point[1], 0] as Vec3))

  let rotation: Matrix3 = [
    [1, 0, 0],
    [0, 1, 0],
    [0, 0, 1],
  ]
  let scale = Math.sqrt(sum(n, (i) => q[i]![0] ** 2 + q[i]![1] ** 2) / sum(n, (i) => p[i]![0] ** 2 + p[i]![1] ** 2))
  for (let step = 0; step < 10; step++) {
    // Residual r = q − s·(R·p)ₓᵧ; a small rotation ω changes R·p by ω × (R·p); unknowns ω (3) and s.
    const normal = Array.from({ length: 4 }, () => [0, 0, 0, 0])
    const right = [0, 0, 0, 0]
    for (let i = 0; i < n; i++) {
      const [x, y, z] = apply(rotation, p[i]!)
      const rx = q[i]![0] - scale * x
      const ry = q[i]![1] - scale * y
      // d(x)/dω = (0, z, −y), d(y)/dω = (−z, 0, x); d/ds = (x, y)
      const jx = [0, scale * z, -scale * y, x]
      const jy = [-scale * z, 0, scale * x, y]
      for (let a = 0; a < 4; a++) {
        right[a]! += jx[a]! * rx + jy[a]! * ry
        for (let b = 0; b < 4; b++) normal[a]![b]! += jx[a]! * jx[b]! + jy[a]! * jy[b]!
      }
    }
    const delta = solve4(normal, right)
    if (!delta) return undefined
    rotation = multiply(rodrigues([delta[0]!, delta[1]!, delta[2]!]), rotation)
    scale += delta[3]!
    if (Math.hypot(...delta.slice(0, 3)) < 1e-7) break
  }
  const rigidResidual = rms(n, (i) => {
    const [x, y] = apply(rotation, p[i]!)
    return (q[i]![0] - scale * x) ** 2 + (q[i]![1] - scale * y) ** 2
  })

  return {
    // x' = cos·x + sin·z for a turn about the vertical axis; the nose, nearer the camera (z < 0), moves
    // to the right of an unmirrored frame when the visitor turns to their left.
    yaw: degrees(-Math.asin(clamp(rotation[0][2]))),
    // y' = cos·y + sin·z: the nose moves up the frame (y falls) when the chin rises.
    pitch: degrees(Math.asin(clamp(rotation[1][2]))),
    rigidResidual: rigidResidual / interocular,
    flatResidual: flatResidual(p, q, n) / interocular,
  }
}

type Matrix3 = [Vec3, Vec3, Vec3]
const apply = (m: Matrix3, v: Vec3): Vec3 => [dot(m[0], v), dot(m[1], v), dot(m[2], v)]
const multiply = (a: Matrix3, b: Matrix3): Matrix3 =>
  [0, 1, 2].map((row) => [0, 1, 2].map((col) => a[row]![0] * b[0]![col]! + a[row]![1] * b[1]![col]! + a[row]![2] * b[2]![col]!)) as Matrix3

/** The rotation by the angle |ω| about ω (Rodrigues' formula). */
function rodrigues(omega: Vec3): Matrix3 {
  const angle = Math.hypot(...omega)
  if (angle < 1e-12) return [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
  const [x, y, z] = omega.map((value) => value / angle) as Vec3
  const c = Math.cos(angle)
  const s = Math.sin(angle)
  const t = 1 - c
  return [
    [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
    [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
    [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
  ]
}

/** Solves a 4×4 linear system by Gaussian elimination with partial pivoting. */
function solve4(matrix: number[][], right: number[]): number[] | undefined {
  const m = matrix.map((row, i) => [...row, right[i]!])
  for (let col = 0; col < 4; col++) {
    let pivot = col
    for (let row = col + 1; row < 4; row++) if (Math.abs(m[row]![col]!) > Math.abs(m[pivot]![col]!)) pivot = row
    if (Math.abs(m[pivot]![col]!) < 1e-12) return undefined
    ;[m[col], m[pivot]] = [m[pivot]!, m[col]!]
    for (let row = 0; row < 4; row++) {
      if (row === col) continue
      const factor = m[row]![col]! / m[col]![col]!
      for (let k = col; k < 5; k++) m[row]![k]! -= factor * m[col]![k]!
    }
  }
  return m.map((row, i) => row[4]! / row[i]!)
}

/** RMS residual of the least-squares affine map from the reference's x, y to this frame's. */
function flatResidual(p: Vec3[], q: Vec3[], n: number): number {
  const sxx = sum(n, (i) => p[i]![0] * p[i]![0])
  const sxy = sum(n, (i) => p[i]![0] * p[i]![1])
  const syy = sum(n, (i) => p[i]![1] * p[i]![1])
  const inverse = invert2x2([sxx, sxy, syy])
  if (!inverse) return Infinity
  const rows = [0, 1].map((row) => {
    const bx = sum(n, (i) => q[i]![row]! * p[i]![0])
    const by = sum(n, (i) => q[i]![row]! * p[i]![1])
    return [inverse[0]![0]! * bx + inverse[0]![1]! * by, inverse[1]![0]! * bx + inverse[1]![1]! * by]
  })
  return rms(n, (i) => {
    const dx = q[i]![0] - rows[0]![0]! * p[i]![0] - rows[0]![1]! * p[i]![1]
    const dy = q[i]![1] - rows[1]![0]! * p[i]![0] - rows[1]![1]! * p[i]![1]
    return dx * dx + dy * dy
  })
}

function centre(points: Vec3[]): Vec3[] {
  const mean = [0, 1, 2].map((axis) => points.reduce((total, point) => total + point[axis]!, 0) / points.length)
  return points.map((point) => [point[0] - mean[0]!, point[1] - mean[1]!, point[2] - mean[2]!])
}

function invert2x2([a, b, c]: [number, number, number]): number[][] | undefined {
  const det = a * c - b * b
  if (!(Math.abs(det) > 1e-12)) return undefined
  return [
    [c / det, -b / det],
    [-b / det, a / det],
  ]
}

const dot = (a: readonly number[], b: readonly number[]) => a[0]! * b[0]! + a[1]! * b[1]! + a[2]! * b[2]!
const sum = (n: number, term: (i: number) => number) => {
  let total = 0
  for (let i = 0; i < n; i++) total += term(i)
  return total
}
const rms = (n: number, squared: (i: number) => number) => Math.sqrt(sum(n, squared) / n)
const clamp = (value: number) => Math.max(-1, Math.min(1, value))
const degrees = (radians: number) => (radians * 180) / Math.PI
