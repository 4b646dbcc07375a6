import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { imageSize } from 'image-size'
import jpeg from 'jpeg-js'
import { MAX_JPEG_SCANS, readJpegStructure, type JpegReading } from '../../src/images/jpeg-structure.ts'
import { readSample } from '../estimator/sample-photos.ts'
import { manyScansJpeg } from './hostile-images.ts'

/**
 * The JPEG marker walk that bounds a decoder's work (issue 30). Real files come from other programs: ffmpeg's
 * baseline fixtures, libjpeg-turbo's jpegtran made them progressive (test/branding/fixtures/make.sh),
 * photos shipped by @vladmandic/face-api, and jpeg-js's encoder; their sizes are image-size's.
 */
const fixture = (name: string) => new Uint8Array(readFileSync(join(import.meta.dir, '..', 'branding', 'fixtures', name)))
const concat = (...parts: ArrayLike<number>[]) => Uint8Array.from(parts.flatMap((part) => [...Array.from(part)]))

function structure(reading: JpegReading) {
  if (!reading.ok) throw new Error(`refused: ${reading.problem} (${reading.detail})`)
  return reading.jpeg
}

/** Every segment of a JPEG up to its first scan, split at the markers (each with its marker and length). */
function segmentsBeforeScan(bytes: Uint8Array): { head: Uint8Array; segments: Uint8Array[]; rest: Uint8Array } {
  const segments: Uint8Array[] = []
  let at = 2
  while (bytes[at + 1] !== 0xda) {
    const length = (bytes[at + 2]! << 8) | bytes[at + 3]!
    segments.push(bytes.subarray(at, at + 2 + length))
    at += 2 + length
  }
  return { head: bytes.subarray(0, 2), segments, rest: bytes.subarray(at) }
}

describe('real JPEGs are read, baseline and progressive', () => {
  test.each(['logo-32x16.jpg', 'wide-1200x300.jpg'])('%s (ffmpeg, baseline): one scan, and image-size’s size', (name) => {
    const bytes = fixture(name)
    const size = imageSize(bytes)
    expect(structure(readJpegStructure(bytes))).toMatchObject({ width: size.width, height: size.height, components: 3, progressive: false, scans: 1 })
  })

  test.each(['logo-32x16-progressive.jpg', 'wide-1200x300-progressive.jpg'])('%s (jpegtran -progressive): libjpeg’s script of 10 scans', (name) => {
    const bytes = fixture(name)
    const size = imageSize(bytes)
    expect(structure(readJpegStructure(bytes))).toMatchObject({ width: size.width, height: size.height, components: 3, progressive: true, scans: 10 })
  })

  test('a progressive copy decodes to the very pixels of its baseline original: jpegtran moved coefficients only', () => {
    const baseline = jpeg.decode(fixture('wide-1200x300.jpg'), { useTArray: true })
    const progressive = jpeg.decode(fixture('wide-1200x300-progressive.jpg'), { useTArray: true })
    expect(progressive.data).toEqual(baseline.data)
  })

  test('photos (face-api’s samples) and jpeg-js’s own output are read', async () => {
    for (const name of ['sample1.jpg', 'sample2.jpg', 'sample3.jpg']) {
      const bytes = await readSample(name)
      const size = imageSize(bytes)
      expect(structure(readJpegStructure(bytes))).toMatchObject({ width: size.width, height: size.height, scans: 1 })
    }
    const encoded = jpeg.encode({ width: 40, height: 24, data: new Uint8Array(40 * 24 * 4).fill(200) }, 80).data
    expect(structure(readJpegStructure(encoded))).toMatchObject({ width: 40, height: 24, scans: 1, progressive: false })
  })

  test('garbage between segments is skipped as libjpeg skips it, and what follows the end of the image is not read', () => {
    const { head, segments, rest } = segmentsBeforeScan(fixture('logo-32x16.jpg'))
    const junky = concat(head, ...segments.flatMap((segment) => [segment, [0x00, 0x12, 0x34]]), rest, new TextEncoder().encode('<html><script>alert(1)</script>'))
    expect(structure(readJpegStructure(junky))).toMatchObject({ width: 32, height: 16, scans: 1 })
  })
})

describe('the scan budget', () => {
  test('the attack round’s file: 2048 × 1024, 12,000 scans, under 200 KB, is refused at the scan over the budget', () => {
    const hostile = manyScansJpeg({ width: 2048, height: 1024, scans: 12_000 })
    expect(hostile.length).toBeLessThan(200_000)
    expect(imageSize(hostile)).toMatchObject({ width: 2048, height: 1024 })
    expect(readJpegStructure(hostile)).toEqual({ ok: false, problem: 'too_many_scans', detail: `the JPEG has more than ${MAX_JPEG_SCANS} scans; an image is read with at most ${MAX_JPEG_SCANS}` })
  })

  test(`${MAX_JPEG_SCANS} scans are read, one more is refused; a caller may set its own budget`, () => {
    const atBudget = manyScansJpeg({ width: 64, height: 64, scans: MAX_JPEG_SCANS })
    expect(structure(readJpegStructure(atBudget))).toMatchObject({ scans: MAX_JPEG_SCANS, progressive: true })
    // The generator's file is a real JPEG: jpeg-js decodes it (every block empty: mid-grey).
    expect(jpeg.decode(atBudget, { useTArray: true }).data[0]).toBe(128)
    expect(readJpegStructure(manyScansJpeg({ width: 64, height: 64, scans: MAX_JPEG_SCANS + 1 }))).toMatchObject({ ok: false, problem: 'too_many_scans' })
    expect(readJpegStructure(fixture('logo-32x16-progressive.jpg'), 9)).toMatchObject({ ok: false, problem: 'too_many_scans' })
  })
})

describe('what is refused, never thrown', () => {
  const base = fixture('logo-32x16.jpg')
  const { head, segments, rest } = segmentsBeforeScan(base)
  const frameIndex = segments.findIndex((segment) => segment[1] === 0xc0)
  const withFrame = (frame: number[]) => concat(head, ...segments.map((segment, i) => (i === frameIndex ? frame : segment)), rest)
  const sof = (marker: number, precision: number, components: [number, number][]) => [
    0xff, marker, 0, 8 + 3 * components.length, precision, 0, 16, 0, 32, components.length,
    ...components.flatMap(([id, sampling]) => [id, sampling, 0]),
  ]

  test('not a JPEG, no frame, no scan, a scan before the frame, two frames', () => {
    expect(readJpegStructure(new TextEncoder().encode('<svg/>'))).toMatchObject({ ok: false, problem: 'not_jpeg' })
    expect(readJpegStructure(Uint8Array.from([0xff, 0xd8, 0xff, 0xd9]))).toMatchObject({ ok: false, problem: 'malformed' })
    expect(readJpegStructure(concat(head, ...segments, [0xff, 0xd9]))).toMatchObject({ ok: false, problem: 'malformed', detail: 'the JPEG has no scan' })
    expect(readJpegStructure(concat(head, rest))).toMatchObject({ ok: false, problem: 'malformed', detail: 'the JPEG has a scan before its frame header' })
    expect(readJpegStructure(concat(head, segments[frameIndex]!, ...segments, rest))).toMatchObject({ ok: false, problem: 'malformed', detail: 'the JPEG has a second frame header' })
  })

  test('what jpeg-js cannot decode: arithmetic coding, lossless, 12-bit samples, five components, no height (DNL), sampling factor 0', () => {
    const three: [number, number][] = [[1, 0x11], [2, 0x11], [3, 0x11]]
    expect(readJpegStructure(withFrame(sof(0xc9, 8, three)))).toMatchObject({ ok: false, problem: 'unsupported' })
    expect(readJpegStructure(withFrame(sof(0xc3, 8, three)))).toMatchObject({ ok: false, problem: 'unsupported' })
    expect(readJpegStructure(withFrame(sof(0xc1, 12, three)))).toMatchObject({ ok: false, problem: 'unsupported' })
    expect(readJpegStructure(withFrame(sof(0xc0, 8, [...three, [4, 0x11], [5, 0x11]])))).toMatchObject({ ok: false, problem: 'unsupported' })
    const noHeight = sof(0xc0, 8, three)
    noHeight[5] = noHeight[6] = 0
    expect(readJpegStructure(withFrame(noHeight))).toMatchObject({ ok: false, problem: 'unsupported' })
    expect(readJpegStructure(withFrame(sof(0xc0, 8, [[1, 0x10], [2, 0x11], [3, 0x11]])))).toMatchObject({ ok: false, problem: 'malformed' })
    // The same frame header, unchanged, is read: only what was changed refused it.
    expect(structure(readJpegStructure(withFrame([...segments[frameIndex]!])))).toMatchObject({ width: 32, height: 16 })
  })

  test('every prefix of real JPEGs, baseline and progressive, is read or refused, never thrown', () => {
    for (const bytes of [base, fixture('logo-32x16-progressive.jpg')]) {
      for (let length = 0; length <= bytes.length; length++) {
        const reading = readJpegStructure(bytes.subarray(0, length))
        // Cut inside a scan's data, a file is read as far as it goes: the decoder then judges the rest.
        if (reading.ok) expect(reading.jpeg).toMatchObject({ width: 32, height: 16 })
        else expect(['not_jpeg', 'malformed']).toContain(reading.problem)
      }
    }
  })

  test('fuzzed: random bytes, random bytes after a start-of-image, and real files with bytes changed, cut or inserted', () => {
    const reads = (bytes: Uint8Array) => {
      const reading = readJpegStructure(bytes)
      expect(typeof reading.ok).toBe('boolean')
      if (reading.ok) expect(reading.jpeg.scans).toBeLessThanOrEqual(MAX_JPEG_SCANS)
    }
    const real = [base, fixture('logo-32x16-progressive.jpg'), manyScansJpeg({ width: 64, height: 32, scans: 80 })]
    const edit = fc.record({ at: fc.nat(), bytes: fc.uint8Array({ maxLength: 8 }), drop: fc.nat({ max: 8 }) })
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => reads(bytes)), { seed: 30, numRuns: 2000 })
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => reads(concat([0xff, 0xd8], bytes))), { seed: 31, numRuns: 2000 })
    fc.assert(
      fc.property(fc.constantFrom(...real), fc.array(edit, { minLength: 1, maxLength: 6 }), (file, edits) => {
        let bytes = file
        for (const { at, bytes: inserted, drop } of edits) {
          const i = at % (bytes.length + 1)
          bytes = concat(bytes.subarray(0, i), inserted, bytes.subarray(i + drop))
        }
        reads(bytes)
      }),
      { seed: 32, numRuns: 3000 },
    )
  })
})
