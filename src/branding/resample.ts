import type { Rgba } from '../images/orient.ts'

export type { Rgba }

/**
 * Scales an image down, keeping its aspect ratio, until it fits `maxWidth` × `maxHeight`; never up. Each output
 * pixel is the area-weighted average of the source pixels it covers, in premultiplied alpha, so that the
 * colour of transparent pixels (often black) does not darken a logo's edges.
 */
export function fitWithin(image: Rgba, maxWidth: number, maxHeight: number): Rgba {
  const scale = Math.min(1, maxWidth / image.width, maxHeight / image.height)
  if (scale === 1) return { width: image.width, height: image.height, data: image.data.slice(0, image.width * image.height * 4) }
  const width = Math.max(1, Math.round(image.width * scale))
  const height = Math.max(1, Math.round(image.height * scale))
  const premultiplied = new Float32Array(image.width * image.height * 4)
  for (let i = 0; i < premultiplied.length; i += 4) {
    const alpha = image.data[i + 3]! / 255
    premultiplied[i] = image.data[i]! * alpha
    premultiplied[i + 1] = image.data[i + 1]! * alpha
    premultiplied[i + 2] = image.data[i + 2]! * alpha
    premultiplied[i + 3] = image.data[i + 3]!
  }
  const scaled = scaleColumns(scaleRows(premultiplied, image.width, image.height, width), width, image.height, height)
  const data = new Uint8Array(width * height * 4)
  for (let i = 0; i < data.length; i += 4) {
    const alpha = scaled[i + 3]!
    const unmultiply = alpha > 0 ? 255 / alpha : 0
    data[i] = clamp(scaled[i]! * unmultiply)
    data[i + 1] = clamp(scaled[i + 1]! * unmultiply)
    data[i + 2] = clamp(scaled[i + 2]! * unmultiply)
    data[i + 3] = clamp(alpha)
  }
  return { width, height, data }
}

/** Which source pixels make up each of `target` output pixels along one axis of `size`, and how much of each. */
function coverage(size: number, target: number): { start: Int32Array; count: Int32Array; offset: Int32Array; weight: Float32Array } {
  const span = size / target
  const start = new Int32Array(target)
  const count = new Int32Array(target)
  const offset = new Int32Array(target)
  const weights: number[] = []
  for (let t = 0; t < target; t++) {
    const from = t * span
    const to = from + span
    start[t] = Math.floor(from)
    offset[t] = weights.length
    for (let s = start[t]!; s < Math.min(size, Math.ceil(to)); s++) weights.push((Math.min(to, s + 1) - Math.max(from, s)) / span)
    count[t] = weights.length - offset[t]!
  }
  return { start, count, offset, weight: Float32Array.from(weights) }
}

/** Each row of `width` pixels averaged down to `target` pixels. */
function scaleRows(source: Float32Array, width: number, rows: number, target: number): Float32Array {
  const out = new Float32Array(target * rows * 4)
  const { start, count, offset, weight } = coverage(width, target)
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < target; x++) {
      let r = 0, g = 0, b = 0, a = 0
      for (let k = 0; k < count[x]!; k++) {
        const s = (y * width + start[x]! + k) * 4
        const w = weight[offset[x]! + k]!
        r += source[s]! * w
        g += source[s + 1]! * w
        b += source[s + 2]! * w
        a += source[s + 3]! * w
      }
      const d = (y * target + x) * 4
      out[d] = r
      out[d + 1] = g
      out[d + 2] = b
      out[d + 3] = a
    }
  }
  return out
}

/** Each column of `rows` pixels averaged down to `target` pixels, a whole row of the source at a time. */
function scaleColumns(source: Float32Array, width: number, rows: number, target: number): Float32Array {
  const out = new Float32Array(width * target * 4)
  const { start, count, offset, weight } = coverage(rows, target)
  const stride = width * 4
  for (let y = 0; y < target; y++) {
    const row = out.subarray(y * stride, (y + 1) * stride)
    for (let k = 0; k < count[y]!; k++) {
      const from = source.subarray((start[y]! + k) * stride, (start[y]! + k + 1) * stride)
      const w = weight[offset[y]! + k]!
      for (let i = 0; i < stride; i++) row[i] = row[i]! + from[i]! * w
    }
  }
  return out
}

function clamp(value: number): number {
  return Math.min(255, Math.max(0, Math.round(value)))
}
