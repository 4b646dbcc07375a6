import jpeg from 'jpeg-js'
import { PNG } from 'pngjs'
import { readJpegStructure } from '../images/jpeg-structure.ts'
import { readPngStructure } from '../images/png-structure.ts'
import { ImageDecodeError } from './types.ts'

/** An 8-bit RGB frame, row-major, 3 bytes a pixel. */
export type RgbImage = { width: number; height: number; data: Uint8Array }

export const MAX_IMAGE_BYTES = 8 * 1024 * 1024
export const MAX_IMAGE_SIDE = 4096
/**
 * Longest side of the frame handed to the models. Human scales the whole frame to 256 px for the
 * detector and each face crop to 224 px or less for the age, anti-spoofing and liveness models, so more
 * pixels only cost decoding and tensor time; 1024 keeps a face that fills 15% of the frame above 150 px.
 */
export const ANALYSIS_SIDE = 1024

/**
 * Decodes JPEG or PNG bytes into an upright RGB frame no larger than ANALYSIS_SIDE. The structure is read
 * first (src/images/), so that an oversized image, a JPEG over the scan budget or a PNG whose data unpacks to
 * more than its size is refused before any pixel buffer is allocated: a stranger's frame costs at most what
 * a real photo of the allowed size costs, not the frame timeout (issue 30).
 */
export function decodeImage(bytes: Uint8Array): RgbImage {
  if (bytes.byteLength > MAX_IMAGE_BYTES) throw new ImageDecodeError(`image larger than ${MAX_IMAGE_BYTES} bytes`)
  const header = readHeader(bytes)
  if (header.width < 1 || header.height < 1 || header.width > MAX_IMAGE_SIDE || header.height > MAX_IMAGE_SIDE) {
    throw new ImageDecodeError(`image dimensions ${header.width}x${header.height} outside 1..${MAX_IMAGE_SIDE}`)
  }
  if (header.format === 'png') {
    const png = readPngStructure(bytes)
    if (!png.ok) throw new ImageDecodeError(png.detail)
  }
  let rgba: { width: number; height: number; data: Uint8Array }
  try {
    if (header.format === 'jpeg') {
      rgba = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: (MAX_IMAGE_SIDE * MAX_IMAGE_SIDE) / 1e6, maxMemoryUsageInMB: 256 })
    } else {
      const png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
      rgba = { width: png.width, height: png.height, data: png.data }
    }
  } catch (error) {
    throw new ImageDecodeError(`cannot decode ${header.format}: ${error instanceof Error ? error.message : String(error)}`)
  }
  // The header was what was bounded: pixels that disagree with it are not taken on trust.
  if (rgba.width !== header.width || rgba.height !== header.height) throw new ImageDecodeError('image size differs from its header')
  if (rgba.data.length < rgba.width * rgba.height * 4) throw new ImageDecodeError('truncated image')
  return downscaleToRgb(orient(rgba, header.orientation), ANALYSIS_SIDE)
}

type Header = { format: 'jpeg' | 'png'; width: number; height: number; orientation: number }

function readHeader(b: Uint8Array): Header {
  if (b.length > 24 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) {
    const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
    return { format: 'png', width: view.getUint32(16), height: view.getUint32(20), orientation: 1 }
  }
  if (b.length > 4 && b[0] === 0xff && b[1] === 0xd8) return readJpegHeader(b)
  throw new ImageDecodeError('not a JPEG or PNG image')
}

/** The frame's size and EXIF orientation, once the JPEG's markers are within the budget (MAX_JPEG_SCANS). */
function readJpegHeader(b: Uint8Array): Header {
  const read = readJpegStructure(b)
  if (!read.ok) throw new ImageDecodeError(read.detail)
  const { width, height, exif } = read.jpeg
  const orientation = exif ? exifOrientation(b, exif.start, exif.end - exif.start) ?? 1 : 1
  return { format: 'jpeg', width, height, orientation }
}

/** Phones often store a portrait photo sideways with an EXIF tag saying so; the detector needs it upright. */
function exifOrientation(b: Uint8Array, start: number, length: number): number | undefined {
  const end = Math.min(b.length, start + length)
  if (end - start < 14 || String.fromCharCode(...b.subarray(start, start + 4)) !== 'Exif') return undefined
  const tiff = start + 6
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const little = b[tiff] === 0x49
  const u16 = (at: number) => view.getUint16(at, little)
  const ifd = tiff + view.getUint32(tiff + 4, little)
  if (ifd + 2 > end) return undefined
  const entries = u16(ifd)
  for (let i = 0; i < entries; i++) {
    const entry = ifd + 2 + i * 12
    if (entry + 12 > end) return undefined
    if (u16(entry) === 0x0112) {
      const value = u16(entry + 8)
      return value >= 1 && value <= 8 ? value : undefined
    }
  }
  return undefined
}

type Rgba = { width: number; height: number; data: Uint8Array }

/** Applies an EXIF orientation (1..8) so that the returned frame is upright. */
export function orient(image: Rgba, orientation: number): Rgba {
  if (orientation <= 1 || orientation > 8) return image
  const { width: w, height: h, data } = image
  const swap = orientation >= 5
  const ow = swap ? h : w
  const oh = swap ? w : h
  const out = new Uint8Array(ow * oh * 4)
  for (let y = 0; y < oh; y++) {
    for (let x = 0; x < ow; x++) {
      // Source pixel for output (x, y), per the EXIF definition of each orientation.
      let sx: number
      let sy: number
      switch (orientation) {
        case 2: sx = w - 1 - x; sy = y; break
        case 3: sx = w - 1 - x; sy = h - 1 - y; break
        case 4: sx = x; sy = h - 1 - y; break
        case 5: sx = y; sy = x; break
        case 6: sx = y; sy = h - 1 - x; break
        case 7: sx = w - 1 - y; sy = h - 1 - x; break
        default: sx = w - 1 - y; sy = x; break
      }
      const s = (sy * w + sx) * 4
      const d = (y * ow + x) * 4
      out[d] = data[s]!
      out[d + 1] = data[s + 1]!
      out[d + 2] = data[s + 2]!
    }
  }
  return { width: ow, height: oh, data: out }
}

/** Drops alpha and, when the longest side exceeds maxSide, box-averages down (no aliasing, one pass). */
export function downscaleToRgb(image: Rgba, maxSide: number): RgbImage {
  const { width: w, height: h, data } = image
  const scale = Math.max(w, h) > maxSide ? maxSide / Math.max(w, h) : 1
  const ow = Math.max(1, Math.round(w * scale))
  const oh = Math.max(1, Math.round(h * scale))
  const out = new Uint8Array(ow * oh * 3)
  if (scale === 1) {
    for (let i = 0, j = 0; i < w * h * 4; i += 4, j += 3) {
      out[j] = data[i]!
      out[j + 1] = data[i + 1]!
      out[j + 2] = data[i + 2]!
    }
    return { width: w, height: h, data: out }
  }
  const sums = new Float64Array(ow * 3)
  const counts = new Uint32Array(ow)
  const columnOf = new Uint32Array(w)
  for (let x = 0; x < w; x++) columnOf[x] = Math.min(ow - 1, Math.floor((x * ow) / w))
  let sy = 0
  for (let y = 0; y < oh; y++) {
    const rowEnd = Math.min(h, Math.max(sy + 1, Math.round(((y + 1) * h) / oh)))
    sums.fill(0)
    counts.fill(0)
    for (; sy < rowEnd; sy++) {
      for (let x = 0, s = sy * w * 4; x < w; x++, s += 4) {
        const c = columnOf[x]!
        const k = c * 3
        sums[k] = sums[k]! + data[s]!
        sums[k + 1] = sums[k + 1]! + data[s + 1]!
        sums[k + 2] = sums[k + 2]! + data[s + 2]!
        counts[c] = counts[c]! + 1
      }
    }
    for (let x = 0; x < ow; x++) {
      const n = counts[x] || 1
      const d = (y * ow + x) * 3
      out[d] = Math.round(sums[x * 3]! / n)
      out[d + 1] = Math.round(sums[x * 3 + 1]! / n)
      out[d + 2] = Math.round(sums[x * 3 + 2]! / n)
    }
  }
  return { width: ow, height: oh, data: out }
}
