import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import jpeg from 'jpeg-js'
import { PNG } from 'pngjs'
import { LOGO_BOX, MAX_LOGO_BYTES, MAX_LOGO_READS, readLogoImage, type LogoResult } from '../../src/branding/logo-image.ts'
import { MAX_JPEG_SCANS } from '../../src/images/jpeg-structure.ts'
import { manyScansJpeg, zlibBombPng } from '../images/hostile-images.ts'

/**
 * The logo pipeline (src/branding/logo-image.ts) on files it did not make: the fixtures are ffmpeg's
 * (test/branding/fixtures/make.sh), and the pixels they must decode to are the ones ffmpeg wrote, or for the
 * JPEG the ones ffmpeg's own decoder reads. Hostile files are built here byte by byte.
 */
const fixture = (name: string) => new Uint8Array(readFileSync(join(import.meta.dir, 'fixtures', name)))
const latin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0))
const concat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((part) => [...part]))
const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]

function ok(result: LogoResult) {
  if (!result.ok) throw new Error(`refused: ${result.problem} (${result.detail})`)
  return result.logo
}

/** The chunk types of a PNG, in order. */
function chunkTypes(png: Uint8Array): string[] {
  const types: string[] = []
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  for (let at = 8; at + 8 <= png.length; at += 12 + view.getUint32(at)) types.push(String.fromCharCode(...png.subarray(at + 4, at + 8)))
  return types
}

/** A PNG chunk with its CRC (PNG §5.3: over the type and the data). */
function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const body = concat(latin1(type), data)
  return concat(Uint8Array.from(be32(data.length)), body, Uint8Array.from(be32(Bun.hash.crc32(body))))
}

/** A PNG whose IHDR says `width` × `height` (RGBA, 8 bits), followed by `rest`. */
function pngHeader(width: number, height: number, ...rest: Uint8Array[]): Uint8Array {
  return concat(latin1('\x89PNG\r\n\x1a\n'), pngChunk('IHDR', Uint8Array.from([...be32(width), ...be32(height), 8, 6, 0, 0, 0])), ...rest)
}

/** The real PNG fixture with chunks inserted after its IHDR (which ends at byte 33). */
function withChunks(png: Uint8Array, ...chunks: Uint8Array[]): Uint8Array {
  return concat(png.subarray(0, 33), ...chunks, png.subarray(33))
}

/** A JPEG APP1 segment holding an EXIF orientation (TIFF, big-endian, one IFD entry: tag 0x0112, SHORT). */
function exifOrientation(value: number): Uint8Array {
  const tiff = [...latin1('MM\x00\x2a'), ...be32(8), 0, 1, 0x01, 0x12, 0, 3, ...be32(1), 0, value, 0, 0, ...be32(0)]
  const payload = [...latin1('Exif\x00\x00'), ...tiff]
  return Uint8Array.from([0xff, 0xe1, (payload.length + 2) >> 8, (payload.length + 2) & 255, ...payload])
}

function jpegComment(text: string): Uint8Array {
  return Uint8Array.from([0xff, 0xfe, (text.length + 2) >> 8, (text.length + 2) & 255, ...latin1(text)])
}

const source = fixture('source-32x16.rgba')

describe('a logo from ffmpeg’s files', () => {
  test.each(['logo-32x16.png', 'logo-32x16.webp'])('%s decodes to exactly the pixels ffmpeg wrote, and is stored as a PNG of them', async (name) => {
    const logo = ok(await readLogoImage(fixture(name)))
    expect([logo.width, logo.height]).toEqual([32, 16])
    const stored = PNG.sync.read(Buffer.from(logo.png))
    expect(new Uint8Array(stored.data)).toEqual(source)
    expect(logo.sha256).toBe(new Bun.CryptoHasher('sha256').update(logo.png).digest('hex'))
  })

  test('the JPEG decodes to the pixels ffmpeg’s own decoder reads, within two decoders’ rounding', async () => {
    const logo = ok(await readLogoImage(fixture('logo-32x16.jpg')))
    const stored = new Uint8Array(PNG.sync.read(Buffer.from(logo.png)).data)
    const ffmpeg = fixture('logo-32x16.jpg.rgba')
    expect(stored.length).toBe(ffmpeg.length)
    expect(Math.max(...stored.map((value, i) => Math.abs(value - ffmpeg[i]!)))).toBeLessThanOrEqual(4)
  })

  test('a WebP with an alpha channel (VP8X, ALPH) keeps its transparency', async () => {
    const logo = ok(await readLogoImage(fixture('alpha-64x32.webp')))
    const stored = PNG.sync.read(Buffer.from(logo.png))
    expect([logo.width, logo.height]).toEqual([64, 32])
    // ffmpeg wrote #1d4ed8 at half opacity: 0x80 (128) in, libwebp's lossy alpha within a step.
    expect(Math.abs(stored.data[3]! - 128)).toBeLessThanOrEqual(2)
  })

  test('a logo wider than the page’s box is scaled into it, keeping its aspect ratio', async () => {
    const logo = ok(await readLogoImage(fixture('wide-1200x300.jpg')))
    expect([logo.width, logo.height]).toEqual([LOGO_BOX.width, LOGO_BOX.height])
    const stored = PNG.sync.read(Buffer.from(logo.png))
    // ffmpeg's #14632c, a flat colour: averaging keeps it (JPEG's own error aside).
    expect(Math.abs(stored.data[0]! - 0x14) + Math.abs(stored.data[1]! - 0x63) + Math.abs(stored.data[2]! - 0x2c)).toBeLessThanOrEqual(6)
  })

  test('an APNG keeps its first image only: the stored PNG has no animation chunks', async () => {
    const logo = ok(await readLogoImage(fixture('animated.png')))
    expect(chunkTypes(fixture('animated.png'))).toContain('acTL')
    expect(chunkTypes(logo.png).filter((type) => type !== 'IDAT')).toEqual(['IHDR', 'IEND'])
  })

  test('an animated WebP is refused: a logo is one still image', async () => {
    expect(await readLogoImage(fixture('animated.webp'))).toMatchObject({ ok: false, problem: 'animated' })
  })
})

describe('nothing of the upload but its pixels is kept', () => {
  test('a PNG’s text, EXIF and script-like chunks are gone from what is stored', async () => {
    const png = fixture('logo-32x16.png')
    const hostile = withChunks(
      png,
      pngChunk('tEXt', latin1('Author\x00SECRET-AUTHOR')),
      pngChunk('iTXt', latin1('XML:com.adobe.xmp\x00\x00\x00\x00\x00<svg onload=alert(1)>')),
      pngChunk('eXIf', latin1('MM\x00\x2aSECRET-EXIF')),
    )
    const logo = ok(await readLogoImage(hostile))
    expect(chunkTypes(logo.png).filter((type) => type !== 'IDAT')).toEqual(['IHDR', 'IEND'])
    const text = new TextDecoder('latin1').decode(logo.png)
    for (const word of ['SECRET', '<script', '<svg', '<html', 'Author']) expect(text).not.toContain(word)
    expect(new Uint8Array(PNG.sync.read(Buffer.from(logo.png)).data)).toEqual(source)
  })

  test('a polyglot, a PNG with an HTML page after its end, is stored as its pixels alone', async () => {
    const polyglot = concat(fixture('logo-32x16.png'), latin1('<html><script>alert(document.cookie)</script></html>'))
    const logo = ok(await readLogoImage(polyglot))
    for (const word of ['<html', '<script', 'cookie']) expect(new TextDecoder('latin1').decode(logo.png)).not.toContain(word)
    expect(chunkTypes(logo.png).at(-1)).toBe('IEND')
    expect(new Uint8Array(PNG.sync.read(Buffer.from(logo.png)).data)).toEqual(source)
  })

  test('a JPEG’s EXIF and comment are gone, and its EXIF orientation is applied as a browser would', async () => {
    const jpeg = fixture('logo-32x16.jpg')
    const hostile = concat(jpeg.subarray(0, 2), exifOrientation(6), jpegComment('SECRET-COMMENT <script>alert(1)</script>'), jpeg.subarray(2))
    const logo = ok(await readLogoImage(hostile))
    // Orientation 6: stored sideways, shown turned a quarter clockwise, so 32 × 16 becomes 16 × 32.
    expect([logo.width, logo.height]).toEqual([16, 32])
    const text = new TextDecoder('latin1').decode(logo.png)
    expect(text).not.toContain('SECRET')
    expect(text).not.toContain('Exif')
    expect(chunkTypes(logo.png).filter((type) => type !== 'IDAT')).toEqual(['IHDR', 'IEND'])
  })
})

describe('what is refused, and when', () => {
  test('a file over 1 MiB, whatever it holds', async () => {
    const big = concat(fixture('logo-32x16.png'), new Uint8Array(MAX_LOGO_BYTES))
    expect(await readLogoImage(big)).toMatchObject({ ok: false, problem: 'too_large' })
  })

  test('SVG, GIF, HTML and text are not images we take, by their content and whatever they are called', async () => {
    const svg = latin1('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>')
    expect(await readLogoImage(svg)).toMatchObject({ ok: false, problem: 'not_an_image', detail: expect.stringContaining('SVG') })
    expect(await readLogoImage(fixture('tiny.gif'))).toMatchObject({ ok: false, problem: 'not_an_image', detail: expect.stringContaining('GIF') })
    for (const bytes of [latin1('<!doctype html><html><body><script>alert(1)</script></body></html>'), latin1('PNG'), new Uint8Array(0), latin1('RIFF\x00\x00\x00\x00WAVEfmt ')]) {
      expect(await readLogoImage(bytes)).toMatchObject({ ok: false, problem: 'not_an_image' })
    }
  })

  test('HTML behind a PNG signature, or in place of its compressed pixels, or pixels cut short, is not an image that decodes', async () => {
    const fake = concat(latin1('\x89PNG\r\n\x1a\n'), latin1('<html><script>alert(1)</script></html>'.repeat(4)))
    expect(await readLogoImage(fake)).toMatchObject({ ok: false, problem: 'unreadable' })
    const noPixels = pngHeader(16, 16, pngChunk('IDAT', latin1('<script>alert(1)</script>')), pngChunk('IEND', new Uint8Array(0)))
    expect(await readLogoImage(noPixels)).toMatchObject({ ok: false, problem: 'unreadable' })
    const png = fixture('logo-32x16.png')
    expect(await readLogoImage(png.subarray(0, png.length - 40))).toMatchObject({ ok: false, problem: 'unreadable' })
  })

  test('dimensions over the bound are refused from the header, before any decoding: the files have no pixels at all', async () => {
    // Each of these would fail to decode (nothing follows the header): too_many_pixels, not unreadable, shows the header decided.
    const png = (w: number, h: number) => pngHeader(w, h)
    expect(await readLogoImage(png(50_000, 50_000))).toMatchObject({ ok: false, problem: 'too_many_pixels', detail: expect.stringContaining('50000 × 50000') })
    expect(await readLogoImage(png(2049, 1))).toMatchObject({ ok: false, problem: 'too_many_pixels' })
    expect(await readLogoImage(png(2048, 1025))).toMatchObject({ ok: false, problem: 'too_many_pixels' })
    // JPEG: a JFIF segment, then a baseline frame header (SOF0) of 60000 × 60000, and nothing after it.
    const jfif = [0xff, 0xe0, 0x00, 0x10, ...latin1('JFIF\x00'), 1, 1, 0, 0, 1, 0, 1, 0, 0]
    const jpeg = Uint8Array.from([0xff, 0xd8, ...jfif, 0xff, 0xc0, 0x00, 0x11, 0x08, 0xea, 0x60, 0xea, 0x60, 0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])
    expect(await readLogoImage(jpeg)).toMatchObject({ ok: false, problem: 'too_many_pixels', detail: expect.stringContaining('60000 × 60000') })
    // WebP's extended header: a 16384 × 16384 canvas (24-bit sizes minus one, little-endian).
    const canvas = [0xff, 0x3f, 0x00, 0xff, 0x3f, 0x00]
    const webp = concat(latin1('RIFF'), Uint8Array.from([22, 0, 0, 0]), latin1('WEBPVP8X'), Uint8Array.from([10, 0, 0, 0, 0, 0, 0, 0, ...canvas]))
    expect(await readLogoImage(webp)).toMatchObject({ ok: false, problem: 'too_many_pixels', detail: expect.stringContaining('16384 × 16384') })
  })

  test('a header that names no size is unreadable', async () => {
    expect(await readLogoImage(pngHeader(0, 16))).toMatchObject({ ok: false, problem: 'unreadable' })
  })
})

describe('bounded work for any file (issue 30)', () => {
  test('the attack round’s progressive JPEG (2048 × 1024, 12,000 empty scans, under 200 KB) is refused before it is decoded', async () => {
    const hostile = manyScansJpeg({ width: 2048, height: 1024, scans: 12_000 })
    expect(await readLogoImage(hostile)).toEqual({ ok: false, problem: 'too_complex', detail: `the JPEG has more than ${MAX_JPEG_SCANS} scans; an image is read with at most ${MAX_JPEG_SCANS}` })
  })

  test('a PNG of 16 × 16 pixels whose data unpacks to 256 MiB is refused, not unpacked (the decoder unpacked all of it)', async () => {
    const bomb = zlibBombPng({ width: 16, height: 16, unpackedBytes: 256 * 1024 * 1024 })
    expect(bomb.length).toBeLessThan(MAX_LOGO_BYTES)
    expect(await readLogoImage(bomb)).toMatchObject({ ok: false, problem: 'too_complex', detail: expect.stringContaining('unpacks to more than the 1040 bytes') })
  })

  test('progressive JPEGs and interlaced PNGs that real encoders wrote are stored as the pixels of their plain originals', async () => {
    const pixels = async (name: string) => new Uint8Array(PNG.sync.read(Buffer.from(ok(await readLogoImage(fixture(name))).png)).data)
    expect(await pixels('logo-32x16-progressive.jpg')).toEqual(await pixels('logo-32x16.jpg'))
    expect(await pixels('wide-1200x300-progressive.jpg')).toEqual(await pixels('wide-1200x300.jpg'))
    expect(await pixels('logo-32x16-interlaced.png')).toEqual(source)
    expect(await pixels('logo-32x16-interlaced-palette.png')).toEqual(source)
  })

  test('a logo is read on a thread of its own: a 10 ms timer keeps ticking while a 2048 × 1024 photo is read', async () => {
    // Gradients: the pixels decide the decoding's cost, and these keep the file under the 1 MiB bound.
    const data = new Uint8Array(2048 * 1024 * 4).map((_, i) => [(i >> 5) & 255, (i >> 15) & 255, (i >> 3) & 255, 255][i % 4]!)
    const photo = jpeg.encode({ width: 2048, height: 1024, data }, 90).data
    const length = photo.length
    let last = performance.now()
    let maxGap = 0
    const timer = setInterval(() => {
      maxGap = Math.max(maxGap, performance.now() - last)
      last = performance.now()
    }, 10)
    const started = performance.now()
    const logo = ok(await readLogoImage(photo))
    const took = performance.now() - started
    clearInterval(timer)
    maxGap = Math.max(maxGap, performance.now() - last)
    console.log(`a 2048 × 1024 JPEG of ${photo.length} bytes read in ${took.toFixed(0)} ms; the longest the event loop waited: ${maxGap.toFixed(0)} ms`)
    expect([logo.width, logo.height]).toEqual([512, 256])
    // The caller's bytes, here a Node Buffer, are left as they were: a copy went to the thread (a Buffer's
    // slice() shares its memory, and moving that emptied it).
    expect(photo.length).toBe(length)
    // On the event loop, the decoding alone held it for the whole read; a busy machine may still hold it a while.
    expect(maxGap).toBeLessThan(Math.max(100, took / 2))
  })

  test('a read that outlasts its deadline is stopped, its thread ended, and the file refused', async () => {
    expect(await readLogoImage(fixture('wide-1200x300.jpg'), { deadlineMs: 1 })).toEqual({ ok: false, problem: 'too_complex', detail: 'the JPEG image was not read within 0.001 s' })
    // The next read, with the usual deadline, is not held by it.
    expect(ok(await readLogoImage(fixture('wide-1200x300.jpg')))).toMatchObject({ width: LOGO_BOX.width })
  })

  test(`at most ${MAX_LOGO_READS} logos are read at once; one more at that moment is refused as busy, and reads again once they end`, async () => {
    const reads = Array.from({ length: MAX_LOGO_READS + 1 }, () => readLogoImage(fixture('logo-32x16.png')))
    const results = await Promise.all(reads)
    expect(results.map((result): string => (result.ok ? 'ok' : result.problem))).toEqual([...Array.from({ length: MAX_LOGO_READS }, () => 'ok'), 'busy'])
    expect(ok(await readLogoImage(fixture('logo-32x16.png')))).toMatchObject({ width: 32 })
  })
})
