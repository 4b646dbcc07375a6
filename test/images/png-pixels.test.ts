import { describe, expect, test } from 'bun:test'
import { PNG } from 'pngjs'
import { readPngPixels } from '../../src/images/png-pixels.ts'

/** A 7 × 5 image whose every sample differs from its neighbours, so that each filter predicts something. */
const WIDTH = 7
const HEIGHT = 5
const rgba = Uint8Array.from({ length: WIDTH * HEIGHT * 4 }, (_, i) => (i % 4 === 3 ? 200 + (i % 50) : (i * 37 + (i >> 3) * 11) & 0xff))
const rgbOf = (data: Uint8Array) => data.filter((_, i) => i % 4 !== 3)

/** The PNG another encoder (pngjs) writes of `rgba`, with one filter on every row and one colour type. */
function pngjsWrites(filterType: number, colorType: 0 | 2 | 4 | 6, options: { bitDepth?: 8 | 16 } = {}): Uint8Array {
  const png = new PNG({ width: WIDTH, height: HEIGHT, colorType, inputColorType: 6, filterType, bitDepth: options.bitDepth ?? 8 } as never)
  png.data = Buffer.from(rgba)
  // pngjs's types name no options for sync.write, which takes the same ones as the constructor.
  const write = PNG.sync.write as (png: PNG, options: object) => Buffer
  return new Uint8Array(write(png, { colorType, inputColorType: 6, filterType, bitDepth: options.bitDepth ?? 8 }))
}

describe('readPngPixels', () => {
  test.each([0, 1, 2, 3, 4])('undoes filter %i on every row, for RGB and RGBA, and gives RGB', (filter) => {
    const pixels = readPngPixels(pngjsWrites(filter, 6))!
    expect([pixels.width, pixels.height]).toEqual([WIDTH, HEIGHT])
    expect(pixels.data).toEqual(rgbOf(rgba))
    // Written as RGB, pngjs blends the alpha away first: the pixels are what pngjs itself reads back.
    const rgb = pngjsWrites(filter, 2)
    expect(readPngPixels(rgb)!.data).toEqual(rgbOf(new Uint8Array(PNG.sync.read(Buffer.from(rgb)).data)))
  })

  test('spreads grey, with or without alpha, over the three channels as the other decoder reads it', () => {
    for (const colorType of [0, 4] as const) {
      const written = pngjsWrites(4, colorType)
      const grey = new Uint8Array(PNG.sync.read(Buffer.from(written)).data)
      expect(readPngPixels(written)!.data).toEqual(rgbOf(grey))
    }
  })

  test('as Bun.Image writes a frame: stored data, read back to the pixels it was given', async () => {
    const original = new PNG({ width: WIDTH, height: HEIGHT })
    original.data = Buffer.from(rgba.map((value, i) => (i % 4 === 3 ? 255 : value)))
    const written = await new Bun.Image(PNG.sync.write(original)).png({ compressionLevel: 0 }).bytes()
    expect(readPngPixels(written)!.data).toEqual(rgbOf(rgba))
  })

  test('a frame-sized image as Bun.Image writes it: stored blocks across many chunks, read as the other decoder reads them, one image after another', async () => {
    const [width, height] = [300, 200]
    const noise = Uint8Array.from({ length: width * height * 4 }, (_, i) => (i % 4 === 3 ? 255 : (i * 2654435761) >>> 24))
    const source = new PNG({ width, height })
    source.data = Buffer.from(noise)
    const written = await new Bun.Image(PNG.sync.write(source)).png({ compressionLevel: 0 }).bytes()
    const chunks = Array.from(Buffer.from(written).toString('latin1').matchAll(/IDAT/g)).length
    expect(chunks).toBeGreaterThan(1)
    const expected = rgbOf(new Uint8Array(PNG.sync.read(Buffer.from(written)).data))
    expect(readPngPixels(written)!.data).toEqual(expected)
    // A smaller image next, then the large one again: nothing of one is read into the other.
    expect(readPngPixels(pngjsWrites(0, 6))!.data).toEqual(rgbOf(rgba))
    expect(readPngPixels(written)!.data).toEqual(expected)

    // A stored block whose length and complement disagree is not read as stored (nor by zlib).
    const broken = written.slice()
    // The first block's header follows the first chunk's type and the zlib header's two bytes; then its length.
    const length = Buffer.from(written).indexOf('IDAT') + 4 + 2 + 1
    broken[length] = broken[length]! ^ 0x01
    expect(readPngPixels(broken)).toBeUndefined()
    // A header that claims one row fewer: the data is longer than its rows.
    const shorter = written.slice()
    new DataView(shorter.buffer).setUint32(20, height - 1)
    expect(readPngPixels(shorter)).toBeUndefined()
  })

  test('reads no PNG it was not made for: 16 bits, a palette, interlaced, truncated, or data longer than its rows', () => {
    const plain = pngjsWrites(0, 6)
    const sixteen = pngjsWrites(0, 6, { bitDepth: 16 })
    const palette = plain.slice()
    palette[25] = 3
    const interlaced = plain.slice()
    interlaced[28] = 1
    const truncated = plain.subarray(0, plain.length - 30)
    const taller = plain.slice()
    new DataView(taller.buffer).setUint32(20, HEIGHT - 1)
    for (const bytes of [sixteen, palette, interlaced, truncated, taller, new Uint8Array(40)]) expect(readPngPixels(bytes)).toBeUndefined()
  })
})
