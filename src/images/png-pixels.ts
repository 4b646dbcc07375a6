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
  let idatLength = 0
  for (let at = 8; at + 8 <= bytes.length; ) {
    const length = view.getUint32(at)
    const type = view.getUint32(at + 4)
    if (at + 12 + length > bytes.length) return undefined
    if (type === 0x49444154) {
      idat.push(bytes.subarray(at + 8, at + 8 + length))
      idatLength += length
    }
    if (type === 0x49454e44) break
    at += 12 + length
  }
  const stride = width * samples
  // Exactly the rows' bytes, or undefined.
  const data = unpack(idat, idatLength, height * (stride + 1))
  if (!data) return undefined
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

// The unpacked rows of the last PNG read, kept for the next: one frame after another, a new buffer each
// time (2.7 MB for 960 × 720 RGBA, twice: the chunks joined, then inflated) cost more in page faults than
// the copying itself. readPngPixels is synchronous and copies the pixels out, so no caller sees it change.
let scratch = new Uint8Array(0)

/**
 * The IDAT chunks' zlib stream unpacked, when it is exactly `expected` bytes; undefined otherwise. What
 * Bun.Image writes at compression level 0 is stored blocks only (RFC 1951 §3.2.4: a header, the length and
 * its complement, the bytes as they are), which are moved together in place in `scratch`; any other stream
 * goes through zlib, bounded by `expected`. The stored path does not check the stream's Adler-32: the
 * bytes come from Bun.Image in this process, and every length is checked against the buffer and the rows.
 */
function unpack(idat: readonly Uint8Array[], length: number, expected: number): Uint8Array | undefined {
  if (scratch.length < length) scratch = new Uint8Array(length)
  let at = 0
  for (const chunk of idat) {
    scratch.set(chunk, at)
    at += chunk.length
  }
  const stream = scratch.subarray(0, length)
  const blocks = storedBlocks(stream)
  if (blocks) {
    // Moved down in place: each block's bytes land before where they were read.
    let written = 0
    for (const [from, size] of blocks) {
      if (written + size > expected) return undefined
      stream.copyWithin(written, from, from + size)
      written += size
    }
    return written === expected ? stream.subarray(0, written) : undefined
  }
  try {
    const data = inflateSync(stream, { maxOutputLength: expected })
    return data.length === expected ? data : undefined
  } catch {
    return undefined
  }
}

/**
 * Where each block's bytes start and how many there are, when the zlib stream (deflate, no preset
 * dictionary) is stored blocks only up to its final one, each within the stream; undefined otherwise.
 */
function storedBlocks(stream: Uint8Array): [number, number][] | undefined {
  if (stream.length < 2 || (stream[0]! & 0x0f) !== 8 || (stream[1]! & 0x20) !== 0 || ((stream[0]! << 8) | stream[1]!) % 31 !== 0) return undefined
  const blocks: [number, number][] = []
  // A stored block starts on a byte: three bits of header, the rest of the byte unused, then the length and its complement.
  for (let at = 2; at + 5 <= stream.length; ) {
    const header = stream[at]!
    const size = stream[at + 1]! | (stream[at + 2]! << 8)
    if ((header & 0b110) !== 0 || (size ^ 0xffff) !== (stream[at + 3]! | (stream[at + 4]! << 8)) || at + 5 + size > stream.length) return undefined
    blocks.push([at + 5, size])
    if (header & 1) return blocks
    at += 5 + size
  }
  return undefined
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
