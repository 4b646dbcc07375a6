import type { RgbImage } from './image.ts'

type Box = { x: number; y: number; width: number; height: number }

/**
 * Faces larger than this (longest side, px) are box-averaged down to it before the Laplacian. Per-pixel
 * Laplacian variance falls as the same face covers more pixels (a sharp 600 px face scores lower than a
 * sharp 150 px one), so without this a close-up selfie would look "blurry" to a fixed threshold.
 */
export const SHARPNESS_SIDE = 128

/**
 * Variance of the 4-neighbour Laplacian of the grey levels (BT.601 luma, 0..255) inside the box, clipped
 * to the frame and scaled to at most SHARPNESS_SIDE. A blurred or heavily compressed face has little
 * high-frequency energy, hence a low value.
 */
export function laplacianVariance(image: RgbImage, box: Box): number {
  const x0 = Math.max(0, Math.floor(box.x))
  const y0 = Math.max(0, Math.floor(box.y))
  const x1 = Math.min(image.width, Math.ceil(box.x + box.width))
  const y1 = Math.min(image.height, Math.ceil(box.y + box.height))
  const bw = x1 - x0
  const bh = y1 - y0
  if (bw < 3 || bh < 3) return 0
  const scale = Math.min(1, SHARPNESS_SIDE / Math.max(bw, bh))
  const w = Math.max(3, Math.round(bw * scale))
  const h = Math.max(3, Math.round(bh * scale))
  const grey = new Float64Array(w * h)
  const counts = new Uint32Array(w * h)
  const { data, width } = image
  for (let y = 0; y < bh; y++) {
    const row = Math.min(h - 1, Math.floor((y * h) / bh)) * w
    for (let x = 0, s = ((y0 + y) * width + x0) * 3; x < bw; x++, s += 3) {
      const i = row + Math.min(w - 1, Math.floor((x * w) / bw))
      grey[i] = grey[i]! + 0.299 * data[s]! + 0.587 * data[s + 1]! + 0.114 * data[s + 2]!
      counts[i] = counts[i]! + 1
    }
  }
  for (let i = 0; i < grey.length; i++) grey[i] = grey[i]! / (counts[i] || 1)
  let sum = 0
  let sumSquares = 0
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1, i = y * w + 1; x < w - 1; x++, i++) {
      const v = grey[i - w]! + grey[i + w]! + grey[i - 1]! + grey[i + 1]! - 4 * grey[i]!
      sum += v
      sumSquares += v * v
    }
  }
  const n = (w - 2) * (h - 2)
  const mean = sum / n
  return sumSquares / n - mean * mean
}
