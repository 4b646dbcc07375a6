import { readJpegStructure } from '../images/jpeg-structure.ts'
import { readPngPixels, type RgbPixels } from '../images/png-pixels.ts'
import { readPngStructure } from '../images/png-structure.ts'
import { ImageDecodeError } from './types.ts'

/** An 8-bit RGB frame, row-major, 3 bytes a pixel. */
export type RgbImage = RgbPixels

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
 * a real photo of the allowed size costs, not the frame timeout (issue 30). The pixels come from Bun.Image
 * (libjpeg-turbo and libspng, built into Bun, on its own threads), which turns the frame upright by its EXIF
 * orientation and box-averages it down; its only output is an encoded image, so it writes an uncompressed
 * PNG that src/images/png-pixels.ts reads back. A 960 × 720 camera frame: about 5 ms, where jpeg-js took 21.
 */
export async function decodeImage(bytes: Uint8Array): Promise<RgbImage> {
  if (bytes.byteLength > MAX_IMAGE_BYTES) throw new ImageDecodeError(`image larger than ${MAX_IMAGE_BYTES} bytes`)
  const header = readHeader(bytes)
  if (header.width < 1 || header.height < 1 || header.width > MAX_IMAGE_SIDE || header.height > MAX_IMAGE_SIDE) {
    throw new ImageDecodeError(`image dimensions ${header.width}x${header.height} outside 1..${MAX_IMAGE_SIDE}`)
  }
  if (header.format === 'png') {
    const png = readPngStructure(bytes)
    if (!png.ok) throw new ImageDecodeError(png.detail)
  }
  let written: Uint8Array
  try {
    written = await new Bun.Image(bytes, { maxPixels: header.width * header.height })
      .resize(ANALYSIS_SIDE, ANALYSIS_SIDE, { fit: 'inside', withoutEnlargement: true, filter: 'box' })
      .png({ compressionLevel: 0 })
      .bytes()
  } catch (error) {
    throw new ImageDecodeError(`cannot decode ${header.format}: ${error instanceof Error ? error.message : String(error)}`)
  }
  const image = readPngPixels(written)
  if (!image) throw new ImageDecodeError(`cannot decode ${header.format}: the decoder's pixels were not 8-bit RGB or grey`)
  // The header was what was bounded: pixels past it are not taken on trust.
  if (Math.max(image.width, image.height) > ANALYSIS_SIDE || image.width * image.height > header.width * header.height) {
    throw new ImageDecodeError('image size differs from its header')
  }
  return image
}

type Header = { format: 'jpeg' | 'png'; width: number; height: number }

function readHeader(b: Uint8Array): Header {
  if (b.length > 24 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) {
    const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
    return { format: 'png', width: view.getUint32(16), height: view.getUint32(20) }
  }
  if (b.length > 4 && b[0] === 0xff && b[1] === 0xd8) return readJpegHeader(b)
  throw new ImageDecodeError('not a JPEG or PNG image')
}

/** The frame's size, once the JPEG's markers are within the budget (MAX_JPEG_SCANS). */
function readJpegHeader(b: Uint8Array): Header {
  const read = readJpegStructure(b)
  if (!read.ok) throw new ImageDecodeError(read.detail)
  return { format: 'jpeg', width: read.jpeg.width, height: read.jpeg.height }
}
