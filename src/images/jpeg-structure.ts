/**
 * A JPEG's markers, walked before a pixel is decoded, so that a file whose decoding would cost far more than
 * its bytes is refused first. Progressive JPEG lets a scan say "nothing in the next 32,767 blocks" in two
 * bytes (an end-of-band run, T.81 G.1.2.2), yet a decoder still visits every block of every scan: a 200 KB
 * file of 12,000 such scans held jpeg-js for seconds (issue 30; libjpeg-turbo's "LJT-01-003", against which
 * its own tools offer `-maxscans`). The scan count is the budget: real encoders write one scan (baseline) or
 * about ten (progressive: libjpeg's default script has 10 for colour, 6 for grey).
 */

/**
 * Scans a JPEG may have. Six times libjpeg's progressive script; libjpeg-turbo's fuzzers allow 500, NVIDIA's
 * nvImageCodec 256. Each scan visits at most every block, so decoding costs at most this many passes over
 * the blocks that the pixel bound allows (`bun bench/hostile-images.ts`).
 */
export const MAX_JPEG_SCANS = 64

export type JpegStructure = {
  width: number
  height: number
  /** Colour components: 1 (grey), 3 (YCbCr), 4 (CMYK). */
  components: number
  progressive: boolean
  scans: number
}

/** Why a JPEG is refused: not a JPEG, broken, a kind our decoder does not read, or over the scan budget. */
export type JpegProblem = 'not_jpeg' | 'malformed' | 'unsupported' | 'too_many_scans'
export type JpegReading = { ok: true; jpeg: JpegStructure } | { ok: false; problem: JpegProblem; detail: string }

const SOS = 0xda
const EOI = 0xd9

/**
 * Reads a JPEG's frame header and counts its scans, stopping at the first refusal: a hostile file is
 * refused at its 65th scan header, however long it is. Linear in the bytes and allocates nothing of their
 * size; never throws. Garbage between segments is skipped as libjpeg skips it (with a warning there), so a
 * file a decoder reads is not refused for it; whatever follows the end-of-image marker is not read.
 */
export function readJpegStructure(bytes: Uint8Array, maxScans = MAX_JPEG_SCANS): JpegReading {
  const n = bytes.length
  if (n < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return refuse('not_jpeg', 'the file does not start with a JPEG start-of-image marker')
  const u16 = (at: number) => (bytes[at]! << 8) | bytes[at + 1]!
  let frame: Omit<JpegStructure, 'scans'> | undefined
  let scans = 0
  let at = 2
  for (;;) {
    if (at < n && bytes[at] !== 0xff) {
      const next = bytes.indexOf(0xff, at)
      at = next < 0 ? n : next
    }
    // Any marker may be preceded by fill bytes 0xFF (T.81 B.1.1.2).
    while (at < n && bytes[at] === 0xff) at++
    if (at >= n) break
    const marker = bytes[at++]!
    if (marker === EOI) break
    if (marker === 0x00 || marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || (marker >= 0x01 && marker <= 0xbf)) {
      return refuse('malformed', `the JPEG has a stray marker 0xFF${hex(marker)} at byte ${at - 2}`)
    }
    if (at + 2 > n) return refuse('malformed', 'the JPEG ends inside a segment header')
    const length = u16(at)
    const body = at + 2
    const end = at + length
    if (length < 2 || end > n) return refuse('malformed', `the JPEG's segment 0xFF${hex(marker)} at byte ${at - 2} runs past the end of the file`)
    if (marker === 0xc0 || marker === 0xc1 || marker === 0xc2) {
      if (frame) return refuse('malformed', 'the JPEG has a second frame header')
      const read = readFrameHeader(bytes, body, length, marker === 0xc2)
      if (!read.ok) return read
      frame = read.frame
    } else if (marker >= 0xc3 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return refuse('unsupported', `the JPEG is lossless, hierarchical or arithmetic-coded (0xFF${hex(marker)}); only Huffman-coded baseline and progressive JPEGs are read`)
    } else if (marker === SOS) {
      if (!frame) return refuse('malformed', 'the JPEG has a scan before its frame header')
      if (++scans > maxScans) return refuse('too_many_scans', `the JPEG has more than ${maxScans} scans; an image is read with at most ${maxScans}`)
      const components = bytes[body]!
      if (components < 1 || components > 4 || length !== 6 + 2 * components) return refuse('malformed', `the JPEG's scan header at byte ${at - 2} is malformed`)
      at = skipEntropyCodedData(bytes, end)
      continue
    }
    at = end
  }
  if (!frame) return refuse('malformed', 'the JPEG has no frame header')
  if (scans === 0) return refuse('malformed', 'the JPEG has no scan')
  return { ok: true, jpeg: { ...frame, scans } }
}

/** A frame header (T.81 B.2.2): 8-bit samples, 1 to 4 components, sampling factors 1 to 4, a height given here. */
function readFrameHeader(bytes: Uint8Array, body: number, length: number, progressive: boolean): { ok: true; frame: Omit<JpegStructure, 'scans'> } | Extract<JpegReading, { ok: false }> {
  if (length < 8) return refuse('malformed', 'the JPEG frame header is too short')
  const precision = bytes[body]!
  const height = (bytes[body + 1]! << 8) | bytes[body + 2]!
  const width = (bytes[body + 3]! << 8) | bytes[body + 4]!
  const components = bytes[body + 5]!
  if (length !== 8 + 3 * components) return refuse('malformed', 'the JPEG frame header is malformed')
  if (precision !== 8) return refuse('unsupported', `the JPEG has ${precision}-bit samples; only 8-bit JPEGs are read`)
  if (components < 1 || components > 4) return refuse('unsupported', `the JPEG has ${components} components; at most 4 are read`)
  // A height of 0 is given later, in a DNL segment after the first scan: not something a camera writes.
  if (width === 0 || height === 0) return refuse('unsupported', 'the JPEG frame header names no size')
  for (let i = 0; i < components; i++) {
    const sampling = bytes[body + 7 + 3 * i]!
    const h = sampling >> 4
    const v = sampling & 15
    if (h < 1 || h > 4 || v < 1 || v > 4) return refuse('malformed', 'the JPEG has a sampling factor outside 1 to 4')
  }
  return { ok: true, frame: { width, height, components, progressive } }
}

/**
 * The offset of the marker that ends a scan's entropy-coded data: the first 0xFF followed by neither a
 * stuffed 0x00 nor a restart marker (T.81 B.1.1.5, F.1.2.3). Found with indexOf, which jumps to each 0xFF.
 */
function skipEntropyCodedData(bytes: Uint8Array, from: number): number {
  let at = from
  for (;;) {
    const ff = bytes.indexOf(0xff, at)
    if (ff < 0 || ff + 1 >= bytes.length) return bytes.length
    const next = bytes[ff + 1]!
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) at = ff + 2
    else if (next === 0xff) at = ff + 1
    else return ff
  }
}

function refuse(problem: JpegProblem, detail: string): Extract<JpegReading, { ok: false }> {
  return { ok: false, problem, detail }
}

const hex = (byte: number) => byte.toString(16).toUpperCase().padStart(2, '0')
