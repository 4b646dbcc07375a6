import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { PNG } from 'pngjs'
import { readPngStructure, type PngReading } from '../../src/images/png-structure.ts'
import { zlibBombPng } from './hostile-images.ts'

/**
 * The PNG check that bounds what a decoder unpacks (issue 30). The real files are ffmpeg's and optipng's
 * (test/branding/fixtures/make.sh): a PNG whose data unpacks to other than the size its passes need is
 * refused, so each of them being read shows the size is right, Adam7 included.
 */
const fixture = (name: string) => new Uint8Array(readFileSync(join(import.meta.dir, '..', 'branding', 'fixtures', name)))
const concat = (...parts: ArrayLike<number>[]) => Uint8Array.from(parts.flatMap((part) => [...Array.from(part)]))

function structure(reading: PngReading) {
  if (!reading.ok) throw new Error(`refused: ${reading.problem} (${reading.detail})`)
  return reading.png
}

describe('real PNGs are read', () => {
  test('ffmpeg’s RGBA PNG: 16 rows of a filter byte and 32 × 4 bytes', () => {
    expect(structure(readPngStructure(fixture('logo-32x16.png')))).toEqual({ width: 32, height: 16, interlaced: false, dataBytes: 16 * (1 + 32 * 4) })
  })

  test('optipng’s Adam7-interlaced copies, RGBA and 4-bit palette: the data of all seven passes, and pngjs reads the same pixels', () => {
    // The passes of 32 × 16: 4×2, 4×2, 8×2, 8×4, 16×4, 16×8 and 32×8 pixels.
    const passes = [[4, 2], [4, 2], [8, 2], [8, 4], [16, 4], [16, 8], [32, 8]]
    const rgba = passes.reduce((sum, [w, h]) => sum + h! * (1 + w! * 4), 0)
    const palette = passes.reduce((sum, [w, h]) => sum + h! * (1 + Math.ceil((w! * 4) / 8)), 0)
    expect(structure(readPngStructure(fixture('logo-32x16-interlaced.png')))).toEqual({ width: 32, height: 16, interlaced: true, dataBytes: rgba })
    expect(structure(readPngStructure(fixture('logo-32x16-interlaced-palette.png')))).toEqual({ width: 32, height: 16, interlaced: true, dataBytes: palette })
    const source = PNG.sync.read(Buffer.from(fixture('logo-32x16.png'))).data
    for (const name of ['logo-32x16-interlaced.png', 'logo-32x16-interlaced-palette.png']) expect(PNG.sync.read(Buffer.from(fixture(name))).data).toEqual(source)
  })

  test('an APNG’s first image is what counts: its later frames are not unpacked', () => {
    expect(structure(readPngStructure(fixture('animated.png')))).toMatchObject({ width: 16, height: 16 })
  })
})

describe('a zlib bomb is refused, whatever it unpacks to', () => {
  test('16 × 16 pixels whose data unpacks to 64 MiB, plain or interlaced', () => {
    for (const interlaced of [false, true]) {
      const bomb = zlibBombPng({ width: 16, height: 16, interlaced, unpackedBytes: 64 * 1024 * 1024 })
      expect(bomb.length).toBeLessThan(100_000)
      expect(readPngStructure(bomb)).toMatchObject({ ok: false, problem: 'too_much_data', detail: expect.stringContaining('16 × 16 pixels') })
    }
  })

  test('data one byte over the image is refused, exactly the image is read, one byte short is malformed', () => {
    const exact = 16 * (1 + 16 * 4)
    expect(readPngStructure(zlibBombPng({ width: 16, height: 16, unpackedBytes: exact + 1 }))).toMatchObject({ ok: false, problem: 'too_much_data' })
    expect(structure(readPngStructure(zlibBombPng({ width: 16, height: 16, unpackedBytes: exact })))).toMatchObject({ dataBytes: exact })
    expect(readPngStructure(zlibBombPng({ width: 16, height: 16, unpackedBytes: exact - 1 }))).toMatchObject({ ok: false, problem: 'malformed' })
  })
})

describe('what is refused, never thrown', () => {
  const png = fixture('logo-32x16.png')

  test('not a PNG, no IHDR first, no image data, a chunk past the end, an unknown colour type', () => {
    expect(readPngStructure(new TextEncoder().encode('GIF89a'))).toMatchObject({ ok: false, problem: 'not_png' })
    expect(readPngStructure(concat(png.subarray(0, 8), png.subarray(33)))).toMatchObject({ ok: false, problem: 'malformed' })
    const iend = png.subarray(png.length - 12)
    expect(readPngStructure(concat(png.subarray(0, 33), iend))).toMatchObject({ ok: false, problem: 'malformed', detail: 'the PNG has no image data' })
    const header = concat(png.subarray(0, 33))
    header[25] = 7
    expect(readPngStructure(concat(header, png.subarray(33)))).toMatchObject({ ok: false, problem: 'malformed' })
    expect(readPngStructure(concat(png.subarray(0, 33), [0x7f, 0xff, 0xff, 0xff], new TextEncoder().encode('IDAT')))).toMatchObject({ ok: false, problem: 'malformed' })
  })

  test('every prefix of a real PNG is refused (it ends before IEND), never thrown', () => {
    for (let length = 0; length < png.length; length++) expect(readPngStructure(png.subarray(0, length)).ok).toBe(false)
    expect(readPngStructure(png).ok).toBe(true)
  })

  test('fuzzed: random bytes after the signature, and real files with bytes changed, cut or inserted', () => {
    const reads = (bytes: Uint8Array) => expect(typeof readPngStructure(bytes).ok).toBe('boolean')
    fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => reads(concat(png.subarray(0, 8), bytes))), { seed: 30, numRuns: 2000 })
    const edit = fc.record({ at: fc.nat(), bytes: fc.uint8Array({ maxLength: 8 }), drop: fc.nat({ max: 8 }) })
    const real = [png, fixture('logo-32x16-interlaced.png'), fixture('animated.png')]
    fc.assert(
      fc.property(fc.constantFrom(...real), fc.array(edit, { minLength: 1, maxLength: 6 }), (file, edits) => {
        let bytes = file
        for (const { at, bytes: inserted, drop } of edits) {
          const i = at % (bytes.length + 1)
          bytes = concat(bytes.subarray(0, i), inserted, bytes.subarray(i + drop))
        }
        reads(bytes)
      }),
      { seed: 31, numRuns: 3000 },
    )
  })
})
