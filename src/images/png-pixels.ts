import { inflateSync } from 'node:zlib'

/** An 8-bit RGB image, row-major, 3 bytes a pixel. */
export type RgbPixels = { width: number; height: number; data: Uint8Array }

/** Samples a pixel by colour type, for the 8-bit, non-palette types this reads. */
const SAMPLES: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 }

/**
 * The pixels of a PNG as Bun.Image writes one (8 bits a sample, grey or RGB, with or without alpha, not
 * interlaced), as RGB without alpha; undefined for any other PNG. This is how the decoded frame leaves
 * Bun.Image, whose encoders are its only output: written with compression level 0, the data is stored, not
 * compressed, and unpacking it costs about a copy. Unpacking is bounded by the header's size.
 */
export function readPngPixels(bytes: Uint8Array): RgbPixels | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length < 33 || view.getUint32(0) !== 0x89504e47 || view.getUint32(12) !== 0x49484452) return undefined
  const width = view.getUint32(16)
  const height = view.getUint32(20)
  const samples = SAMPLES[bytes[25]!]
  if (!samples || bytes[24] !== 8 || bytes[28] !== 0 || width === 0 || height === 0) return undefined
  const idat: Uint8Array[] = []
  for (let at = 8; at + 8 <= bytes.length; ) {
    const length = view.getUint32(at)
    const type = view.getUint32(at + 4)
    if (at + 12 + length > bytes.length) return undefined
    if (type === 0x49444154) idat.push(bytes.subarray(at + 8, at + 8 + length))
    if (type === 0x49454e44) break
    at += 12 + length
  }
  const stride = width * samples
  let data: Uint8Array
  try {
    data = inflateSync(Buffer.concat(idat), { maxOutputLength: height * (stride + 1) })
  } catch {
    return undefined
  }
  if (data.length !== height * (stride + 1)) return undefined
  if (!unfilter(data, height, stride, samples)) return undefined
  const rgb = new Uint8Array(width * height * 3)
  const colour = samples >= 3
  for (let y = 0, o = 0; y < height; y++) {
    for (let i = y * (stride + 1) + 1, end = i + stride; i < end; i += samples, o += 3) {
      rgb[o] = data[i]!
      rgb[o + 1] = data[colour ? i + 1 : i]!
      rgb[o + 2] = data[colour ? i + 2 : i]!
    }
  }
  return { width, height, data: rgb }
}

/** Undoes each row's filter in place (PNG §9.2), row by row, so that each row predicts from the one above as written; false for an unknown filter. */
function unfilter(data: Uint8Array, height: number, stride: number, bpp: number): boolean {
  for (let y = 0; y < height; y++) {
    const filter = data[y * (stride + 1)]!
    if (filter === 0) continue
    const at = y * (stride + 1) + 1
    const above = at - stride - 1
    for (let x = 0; x < stride; x++) {
      const left = x >= bpp ? data[at + x - bpp]! : 0
      const up = y > 0 ? data[above + x]! : 0
      const upLeft = y > 0 && x >= bpp ? data[above + x - bpp]! : 0
      let predicted: number
      if (filter === 1) predicted = left
      else if (filter === 2) predicted = up
      else if (filter === 3) predicted = (left + up) >> 1
      else if (filter === 4) predicted = paeth(left, up, upLeft)
      else return false
      data[at + x] = (data[at + x]! + predicted) & 0xff
    }
  }
  return true
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c
  const pa = Math.abs(p - a)
  const pb = Math.abs(p - b)
  const pc = Math.abs(p - c)
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
}
