import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ANALYSIS_SIDE, decodeImage, MAX_IMAGE_SIDE } from '../../src/estimator/image.ts'
import { MAX_JPEG_SCANS } from '../../src/images/jpeg-structure.ts'
import { ImageDecodeError } from '../../src/estimator/types.ts'
import { STORED_UNDER } from '../images/exif-orientations.ts'
import { manyScansJpeg, zlibBombPng } from '../images/hostile-images.ts'
import jpeg from 'jpeg-js'
import { PNG } from 'pngjs'

/**
 * What a face frame may cost the estimator's decoder (issue 30): any visitor posts frames, so a frame whose
 * decoding would cost far more than its bytes is refused before it is decoded. Each refusal below stood for
 * seconds of a worker's time before (a 4096 × 4096 JPEG of 4,000 scans: 15–22 s of jpeg-js, past the
 * frame timeout; bench/hostile-images.ts), and is now an ImageDecodeError that names the budget.
 */
const fixture = (name: string) => new Uint8Array(readFileSync(join(import.meta.dir, '..', 'branding', 'fixtures', name)))

async function refusal(bytes: Uint8Array): Promise<ImageDecodeError> {
  try {
    await decodeImage(bytes)
  } catch (error) {
    if (error instanceof ImageDecodeError) return error
    throw error
  }
  throw new Error('decoded')
}

describe('decodeImage refuses a frame over its budget before decoding it', () => {
  test(`a JPEG of the largest frame, ${MAX_IMAGE_SIDE} × ${MAX_IMAGE_SIDE}, with 4,000 empty scans (about 170 KB)`, async () => {
    const hostile = manyScansJpeg({ width: MAX_IMAGE_SIDE, height: MAX_IMAGE_SIDE, scans: 4000 })
    expect(hostile.length).toBeLessThan(200_000)
    expect((await refusal(hostile)).message).toBe(`the JPEG has more than ${MAX_JPEG_SCANS} scans; an image is read with at most ${MAX_JPEG_SCANS}`)
  })

  test('a PNG of 16 × 16 pixels whose data unpacks to 64 MiB, interlaced (pngjs unpacked all of it) or not', async () => {
    for (const interlaced of [true, false]) {
      const bomb = zlibBombPng({ width: 16, height: 16, interlaced, unpackedBytes: 64 * 1024 * 1024 })
      expect((await refusal(bomb)).message).toContain('unpacks to more than the')
    }
  })

  test('a JPEG that is not one our decoder reads (arithmetic-coded) is refused by its frame header', async () => {
    const bytes = fixture('logo-32x16.jpg').slice()
    const sof = bytes.findIndex((byte, i) => byte === 0xff && bytes[i + 1] === 0xc0)
    bytes[sof + 1] = 0xc9
    expect((await refusal(bytes)).message).toContain('arithmetic-coded')
  })
})

describe('real frames within the budget are decoded as before', () => {
  test('a progressive JPEG decodes to the pixels of its baseline original, and an interlaced PNG to those of its plain one', async () => {
    expect(await decodeImage(fixture('wide-1200x300-progressive.jpg'))).toEqual(await decodeImage(fixture('wide-1200x300.jpg')))
    expect(await decodeImage(fixture('logo-32x16-interlaced.png'))).toEqual(await decodeImage(fixture('logo-32x16.png')))
  })

  test('a 16-bit PNG, a grey PNG and a grey JPEG come out as 8-bit RGB, as the other decoders read them', async () => {
    // Opaque: written without alpha, pngjs would blend a transparent pixel into its background.
    const opaque = Uint8Array.from({ length: 8 * 6 * 4 }, (_, i) => (i % 4 === 3 ? 255 : 40 + i))
    const png = new PNG({ width: 8, height: 6 })
    png.data = Buffer.from(opaque)
    const write = PNG.sync.write as (image: PNG, options: object) => Buffer
    const withoutAlpha = (rgba: Uint8Array) => rgba.filter((_, i) => i % 4 !== 3)
    const pngs = [write(png, { bitDepth: 16, colorType: 6, inputColorType: 6 }), write(png, { colorType: 0, inputColorType: 6 })]
    const greyJpeg = jpeg.encode({ width: 8, height: 6, data: opaque.map((_, i) => (i % 4 === 3 ? 255 : 90)) }, 95).data
    const cases = [...pngs.map((bytes) => [bytes, withoutAlpha(new Uint8Array(PNG.sync.read(bytes).data))] as const), [greyJpeg, withoutAlpha(jpeg.decode(greyJpeg, { useTArray: true }).data)] as const]
    for (const [bytes, expected] of cases) {
      const frame = await decodeImage(new Uint8Array(bytes))
      expect([frame.width, frame.height, frame.data.length]).toEqual([8, 6, 8 * 6 * 3])
      frame.data.forEach((value, i) => expect(Math.abs(value - expected[i]!)).toBeLessThanOrEqual(1))
    }
  })

  test(`a JPEG of exactly ${MAX_JPEG_SCANS} scans is decoded`, async () => {
    const frame = await decodeImage(manyScansJpeg({ width: 640, height: 480, scans: MAX_JPEG_SCANS }))
    expect([frame.width, frame.height, frame.data[0]]).toEqual([640, 480, 128])
  })
})

/** An APP1 segment holding an EXIF orientation (TIFF, big-endian, one IFD entry: tag 0x0112, SHORT). */
function withExifOrientation(encoded: Uint8Array, value: number): Uint8Array {
  const tiff = [0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, value, 0, 0, 0, 0, 0, 0]
  const payload = [...new TextEncoder().encode('Exif'), 0, 0, ...tiff]
  return Uint8Array.from([...encoded.subarray(0, 2), 0xff, 0xe1, (payload.length + 2) >> 8, (payload.length + 2) & 0xff, ...payload, ...encoded.subarray(2)])
}

describe('frames come out upright and no larger than the analysis needs', () => {
  // Six 16-pixel cells, numbered 0..5 row by row in the upright 3 × 2 picture, each its own colour.
  const COLOURS = [[230, 20, 20], [20, 230, 20], [20, 20, 230], [230, 230, 20], [20, 230, 230], [230, 20, 230]]
  const CELL = 16
  test.each(Object.keys(STORED_UNDER).map(Number))('EXIF orientation %i: the cells are where the upright picture has them', async (orientation) => {
    const [across, down, cells] = STORED_UNDER[orientation]!
    const [width, height] = [across * CELL, down * CELL]
    const data = new Uint8Array(width * height * 4)
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set([...COLOURS[cells[Math.floor(y / CELL) * across + Math.floor(x / CELL)]!]!, 255], (y * width + x) * 4)
    const frame = await decodeImage(withExifOrientation(jpeg.encode({ width, height, data }, 95).data, orientation))
    expect([frame.width, frame.height]).toEqual([3 * CELL, 2 * CELL])
    for (let cell = 0; cell < 6; cell++) {
      const [x, y] = [(cell % 3) * CELL + CELL / 2, Math.floor(cell / 3) * CELL + CELL / 2]
      const pixel = Array.from(frame.data.subarray((y * frame.width + x) * 3, (y * frame.width + x) * 3 + 3))
      pixel.forEach((value, channel) => expect(Math.abs(value - COLOURS[cell]![channel]!)).toBeLessThan(16))
    }
  })

  test(`a frame larger than ${ANALYSIS_SIDE} pixels is averaged down to ${ANALYSIS_SIDE} on its longer side; a smaller one keeps its size`, async () => {
    // Alternate columns black and white: averaged, two columns make one grey pixel; never a stripe.
    const stripes = (width: number, height: number) => {
      const data = new Uint8Array(width * height * 4)
      for (let i = 0; i < width * height; i++) data.fill(i % 2 === 0 ? 0 : 255, i * 4, i * 4 + 3).fill(255, i * 4 + 3, i * 4 + 4)
      return jpeg.encode({ width, height, data }, 100).data
    }
    const large = await decodeImage(stripes(2 * ANALYSIS_SIDE, 600))
    expect([large.width, large.height]).toEqual([ANALYSIS_SIDE, 300])
    const middle = large.data.subarray(150 * ANALYSIS_SIDE * 3, 151 * ANALYSIS_SIDE * 3)
    expect(Math.max(...middle.subarray(30, middle.length - 30))).toBeLessThan(160)
    expect(Math.min(...middle.subarray(30, middle.length - 30))).toBeGreaterThan(95)
    const small = await decodeImage(stripes(640, 480))
    expect([small.width, small.height]).toEqual([640, 480])
  })
})

