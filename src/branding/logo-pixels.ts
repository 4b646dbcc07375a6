import jpeg from 'jpeg-js'
import { PNG } from 'pngjs'
import decodePng, { init as initPng } from '@jsquash/png/decode.js'
// @ts-expect-error The package's .d.ts beside the wasm types its exports; imported as a file, it is a path.
import pngDecoderWasm from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm' with { type: 'file' }
import decodeWebp, { init as initWebp } from '@jsquash/webp/decode.js'
import webpDecoderWasm from '@jsquash/webp/codec/dec/webp_dec.wasm' with { type: 'file' }
import { orient } from '../images/orient.ts'
import { readPngStructure } from '../images/png-structure.ts'
import { sha256Hex } from '../lib/crypto.ts'
import type { LogoFormat, LogoResult } from './logo-result.ts'
import { fitWithin, type Rgba } from './resample.ts'

/** What the logo worker is sent: an upload whose bytes and header size were checked (logo-image.ts). */
export type LogoRender = { format: LogoFormat; bytes: Uint8Array; width: number; height: number; orientation: number; box: { width: number; height: number } }

/**
 * The work of reading a logo, on the logo worker's thread (logo-worker.ts): decoded by a library, scaled into
 * the box and encoded again as a PNG of our own, so that nothing of the upload survives but its pixels.
 */
export async function renderLogo({ format, bytes, width, height, orientation, box }: LogoRender): Promise<LogoResult> {
  const name = format.toUpperCase()
  if (format === 'png') {
    // Before the decoder, which unpacks all of the data stream, however much more than the image it holds.
    const png = readPngStructure(bytes)
    if (!png.ok) return { ok: false, problem: png.problem === 'too_much_data' ? 'too_complex' : 'unreadable', detail: png.detail }
  }
  let pixels: Rgba
  try {
    pixels = await decode(format, bytes, width * height)
  } catch {
    return { ok: false, problem: 'unreadable', detail: `the ${name} image cannot be decoded` }
  }
  // The header was what was bounded: an image whose pixels disagree with it is not taken on trust.
  if (pixels.width !== width || pixels.height !== height || pixels.data.length < width * height * 4) {
    return { ok: false, problem: 'unreadable', detail: `the ${name} image's pixels do not match its header` }
  }
  const upright = format === 'jpeg' ? uprightJpeg(pixels, orientation) : pixels
  const fitted = fitWithin(upright, box.width, box.height)
  const png = encodePng(fitted)
  return { ok: true, logo: { png, width: fitted.width, height: fitted.height, sha256: sha256Hex(png) } }
}

async function decode(format: LogoFormat, bytes: Uint8Array, pixels: number): Promise<Rgba> {
  if (format === 'jpeg') {
    const image = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: pixels / 1e6, maxMemoryUsageInMB: 64 })
    return { width: image.width, height: image.height, data: image.data }
  }
  // An ArrayBuffer of the file alone (a Buffer's slice() would hand over its whole pool).
  const file = new Uint8Array(bytes).buffer
  const image = format === 'png' ? await (await pngDecoder)(file) : await (await webpDecoder)(file)
  return { width: image.width, height: image.height, data: new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength) }
}

/**
 * Squoosh's decoders as @jsquash packages them: Rust's png crate and libwebp, compiled to wasm. Their wasm
 * files come from the packages (embedded in a compiled binary), compiled when the worker first needs one,
 * never fetched. pngjs, which the estimator reads with, is not used to read here: under Bun it takes a
 * truncated or corrupt PNG stream for black pixels instead of refusing it.
 */
const pngDecoder = lazy(async () => {
  await initPng(await WebAssembly.compile(await Bun.file(pngDecoderWasm as string).arrayBuffer()))
  return decodePng
})
const webpDecoder = lazy(async () => {
  await (initWebp as unknown as (module: WebAssembly.Module) => Promise<void>)(await WebAssembly.compile(await Bun.file(webpDecoderWasm).arrayBuffer()))
  return decodeWebp
})

/** A promise made on first use, not at import: a worker that reads a JPEG never compiles a decoder. */
function lazy<T>(make: () => Promise<T>): PromiseLike<T> {
  let made: Promise<T> | undefined
  return { then: (resolve, reject) => (made ??= make()).then(resolve, reject) }
}

/** A JPEG turned as its EXIF orientation says, as browsers show it; JPEG has no alpha, so every pixel is opaque. */
function uprightJpeg(pixels: Rgba, orientation: number): Rgba {
  if (orientation <= 1 || orientation > 8) return pixels
  const turned = orient(pixels, orientation)
  for (let i = 3; i < turned.data.length; i += 4) turned.data[i] = 255
  return turned
}

function encodePng(image: Rgba): Uint8Array<ArrayBuffer> {
  const png = new PNG({ width: image.width, height: image.height })
  png.data = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength)
  return new Uint8Array(PNG.sync.write(png))
}
