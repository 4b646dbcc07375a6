import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeImage, MAX_IMAGE_SIDE } from '../../src/estimator/image.ts'
import { MAX_JPEG_SCANS } from '../../src/images/jpeg-structure.ts'
import { ImageDecodeError } from '../../src/estimator/types.ts'
import { manyScansJpeg, zlibBombPng } from '../images/hostile-images.ts'

/**
 * What a face frame may cost the estimator's decoder (issue 30): any visitor posts frames, so a frame whose
 * decoding would cost far more than its bytes is refused before it is decoded. Each refusal below stood for
 * seconds of a worker's time before (a 4096 × 4096 JPEG of 4,000 scans: 15–22 s of jpeg-js, past the
 * frame timeout; bench/hostile-images.ts), and is now an ImageDecodeError that names the budget.
 */
const fixture = (name: string) => new Uint8Array(readFileSync(join(import.meta.dir, '..', 'branding', 'fixtures', name)))

function refusal(bytes: Uint8Array): ImageDecodeError {
  try {
    decodeImage(bytes)
  } catch (error) {
    if (error instanceof ImageDecodeError) return error
    throw error
  }
  throw new Error('decoded')
}

describe('decodeImage refuses a frame over its budget before decoding it', () => {
  test(`a JPEG of the largest frame, ${MAX_IMAGE_SIDE} × ${MAX_IMAGE_SIDE}, with 4,000 empty scans (about 170 KB)`, () => {
    const hostile = manyScansJpeg({ width: MAX_IMAGE_SIDE, height: MAX_IMAGE_SIDE, scans: 4000 })
    expect(hostile.length).toBeLessThan(200_000)
    expect(refusal(hostile).message).toBe(`the JPEG has more than ${MAX_JPEG_SCANS} scans; an image is read with at most ${MAX_JPEG_SCANS}`)
  })

  test('a PNG of 16 × 16 pixels whose data unpacks to 64 MiB, interlaced (pngjs unpacked all of it) or not', () => {
    for (const interlaced of [true, false]) {
      const bomb = zlibBombPng({ width: 16, height: 16, interlaced, unpackedBytes: 64 * 1024 * 1024 })
      expect(refusal(bomb).message).toContain('unpacks to more than the')
    }
  })

  test('a JPEG that is not one our decoder reads (arithmetic-coded) is refused by its frame header', () => {
    const bytes = fixture('logo-32x16.jpg').slice()
    const sof = bytes.findIndex((byte, i) => byte === 0xff && bytes[i + 1] === 0xc0)
    bytes[sof + 1] = 0xc9
    expect(refusal(bytes).message).toContain('arithmetic-coded')
  })
})

describe('real frames within the budget are decoded as before', () => {
  test('a progressive JPEG decodes to the pixels of its baseline original, and an interlaced PNG to those of its plain one', () => {
    expect(decodeImage(fixture('wide-1200x300-progressive.jpg'))).toEqual(decodeImage(fixture('wide-1200x300.jpg')))
    expect(decodeImage(fixture('logo-32x16-interlaced.png'))).toEqual(decodeImage(fixture('logo-32x16.png')))
  })

  test(`a JPEG of exactly ${MAX_JPEG_SCANS} scans is decoded`, () => {
    const frame = decodeImage(manyScansJpeg({ width: 640, height: 480, scans: MAX_JPEG_SCANS }))
    expect([frame.width, frame.height, frame.data[0]]).toEqual([640, 480, 128])
  })
})
