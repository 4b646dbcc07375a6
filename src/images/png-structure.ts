import { inflateSync } from 'node:zlib'

/**
 * A PNG's chunks, and how much its compressed pixels unpack to, checked before a decoder reads them. Deflate
 * packs up to about 1,000 bytes into one, and a decoder may unpack all of an image's data stream even past
 * the rows its header names: a 1 MB PNG that says 16 × 16 held @jsquash/png 1.2 s and pngjs (interlaced)
 * 6 s and 2 GiB, unpacking a gigabyte (issue 30). Here the stream is unpacked once with the header's
 * own size as the bound, so that it costs at most what an image of that size costs.
 */

export type PngStructure = {
  width: number
  height: number
  interlaced: boolean
  /** What the image data unpacks to, filter bytes included. */
  dataBytes: number
}
/** Why a PNG is refused: not a PNG, broken, or data that unpacks to more than its header's size. */
export type PngProblem = 'not_png' | 'malformed' | 'too_much_data'
export type PngReading = { ok: true; png: PngStructure } | { ok: false; problem: PngProblem; detail: string }

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
/** Samples a pixel by colour type, and the bit depths each allows (PNG §11.2.2 Table 11.1). */
const COLOUR_TYPES: Record<number, { samples: number; depths: number[] }> = {
  0: { samples: 1, depths: [1, 2, 4, 8, 16] },
  2: { samples: 3, depths: [8, 16] },
  3: { samples: 1, depths: [1, 2, 4, 8] },
  4: { samples: 2, depths: [8, 16] },
  6: { samples: 4, depths: [8, 16] },
}
/** Adam7's seven passes: first column and row, column and row step (PNG §8.2). */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const

/**
 * Reads a PNG's header and unpacks its image data (the IDAT chunks, the only ones a decoder of a still image
 * unpacks; an APNG's later frames are not read) with the size the header implies as the limit: data that
 * would unpack to more is refused as soon as the limit is passed. Bounded by the header's size, which the
 * caller has bounded first; never throws.
 */
export function readPngStructure(bytes: Uint8Array): PngReading {
  if (bytes.length < 8 || SIGNATURE.some((byte, i) => bytes[i] !== byte)) return refuse('not_png', 'the file does not start with the PNG signature')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let header: Omit<PngStructure, 'dataBytes'> & { bitsPerPixel: number } | undefined
  const data: Uint8Array[] = []
  let at = 8
  for (;;) {
    if (at + 8 > bytes.length) return refuse('malformed', 'the PNG ends before its IEND chunk')
    const length = view.getUint32(at)
    const type = String.fromCharCode(bytes[at + 4]!, bytes[at + 5]!, bytes[at + 6]!, bytes[at + 7]!)
    const body = at + 8
    if (length > bytes.length - body - 4) return refuse('malformed', `the PNG's ${printable(type)} chunk runs past the end of the file`)
    if (!header && type !== 'IHDR') return refuse('malformed', 'the PNG does not start with its IHDR chunk')
    if (type === 'IHDR') {
      if (header) return refuse('malformed', 'the PNG has a second IHDR chunk')
      if (length !== 13) return refuse('malformed', 'the PNG IHDR chunk is malformed')
      const colour = COLOUR_TYPES[bytes[body + 9]!]
      const depth = bytes[body + 8]!
      const interlace = bytes[body + 12]!
      if (!colour || !colour.depths.includes(depth) || interlace > 1) return refuse('malformed', 'the PNG IHDR chunk names no valid colour type, bit depth and interlace method')
      header = { width: view.getUint32(body), height: view.getUint32(body + 4), interlaced: interlace === 1, bitsPerPixel: colour.samples * depth }
    } else if (type === 'IDAT') {
      data.push(bytes.subarray(body, body + length))
    } else if (type === 'IEND') {
      break
    }
    at = body + length + 4
  }
  if (data.length === 0) return refuse('malformed', 'the PNG has no image data')
  const { bitsPerPixel, ...png } = header!
  const dataBytes = imageDataBytes(png.width, png.height, png.interlaced, bitsPerPixel)
  try {
    // zlib stops with ERR_BUFFER_TOO_LARGE as soon as the output would pass the bound, not at the stream's end.
    const unpacked = inflateSync(Buffer.concat(data), { maxOutputLength: Math.max(1, dataBytes) })
    if (unpacked.length < dataBytes) return refuse('malformed', `the PNG's image data unpacks to ${unpacked.length} bytes; its size needs ${dataBytes}`)
  } catch (cause) {
    if ((cause as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      return refuse('too_much_data', `the PNG's image data unpacks to more than the ${dataBytes} bytes its ${png.width} × ${png.height} pixels need`)
    }
    return refuse('malformed', "the PNG's image data is not a valid zlib stream")
  }
  return { ok: true, png: { ...png, dataBytes } }
}

/** Bytes of the unpacked image data: each row of each pass with its filter byte (PNG §7.2, §8.2). */
export function imageDataBytes(width: number, height: number, interlaced: boolean, bitsPerPixel: number): number {
  const rows = (w: number, h: number) => (w === 0 || h === 0 ? 0 : h * (Math.ceil((w * bitsPerPixel) / 8) + 1))
  if (!interlaced) return rows(width, height)
  let total = 0
  for (const [x0, y0, dx, dy] of ADAM7) total += rows(Math.max(0, Math.ceil((width - x0) / dx)), Math.max(0, Math.ceil((height - y0) / dy)))
  return total
}

function refuse(problem: PngProblem, detail: string): Extract<PngReading, { ok: false }> {
  return { ok: false, problem, detail }
}

/** A chunk type as text for a message: letters are kept, anything else is shown as "?". */
const printable = (type: string) => type.replace(/[^A-Za-z]/g, '?')
