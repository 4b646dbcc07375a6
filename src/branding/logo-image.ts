import { imageSize } from 'image-size'
import jpeg from 'jpeg-js'
import { PNG } from 'pngjs'
import decodePng, { init as initPng } from '@jsquash/png/decode.js'
// @ts-expect-error The package's .d.ts beside the wasm types its exports; imported as a file, it is a path.
import pngDecoderWasm from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm' with { type: 'file' }
import decodeWebp, { init as initWebp } from '@jsquash/webp/decode.js'
import webpDecoderWasm from '@jsquash/webp/codec/dec/webp_dec.wasm' with { type: 'file' }
import { orient } from '../estimator/image.ts'
import { sha256Hex } from '../lib/crypto.ts'
import { fitWithin, type Rgba } from './resample.ts'

/** An upload's bytes at most: a logo is a small picture, and the dashboard's form says so before sending. */
export const MAX_LOGO_BYTES = 1024 * 1024
/** A side at most, and pixels in all, read from the header before anything is decoded (RGBA: 8 MiB at most). */
export const MAX_LOGO_SIDE = 2048
export const MAX_LOGO_PIXELS = 2048 * 1024
/** What is stored and served: the page shows a logo at most 4rem high, so 256 px covers a phone's 3× screen. */
export const LOGO_BOX = { width: 1024, height: 256 } as const

export type LogoFormat = 'png' | 'jpeg' | 'webp'
/** Why an upload is refused: a closed set that the dashboard says in words and the CLI prints with the detail. */
export type LogoProblem = 'too_large' | 'not_an_image' | 'too_many_pixels' | 'animated' | 'unreadable'
export type LogoImage = { png: Uint8Array<ArrayBuffer>; width: number; height: number; sha256: string }
export type LogoResult = { ok: true; logo: LogoImage } | { ok: false; problem: LogoProblem; detail: string }

/**
 * Turns an upload into the logo we store: PNG, JPEG or WebP by its bytes (never its name or declared type),
 * bounded in bytes and, from its header (image-size), in pixels before a pixel is decoded; then decoded by a library,
 * scaled into {@link LOGO_BOX} and encoded again as a PNG of our own. Nothing of the upload survives but
 * its pixels: no metadata, no colour profile, no second frame, no bytes after the image (a polyglot's
 * HTML or script), since the served file is what we wrote.
 */
export async function readLogoImage(bytes: Uint8Array): Promise<LogoResult> {
  if (bytes.byteLength > MAX_LOGO_BYTES) return refuse('too_large', `the file has ${bytes.byteLength} bytes; a logo has at most ${MAX_LOGO_BYTES} (1 MiB)`)
  const format = sniffFormat(bytes)
  if (!format) return refuse('not_an_image', `the file is not a PNG, JPEG or WebP image${namedType(bytes)}`)
  let header: { width: number; height: number; orientation?: number | undefined; type?: string | undefined }
  try {
    header = imageSize(bytes)
  } catch {
    return refuse('unreadable', `the ${format.toUpperCase()} header cannot be read`)
  }
  const { width, height } = header
  if (!(width >= 1 && height >= 1)) return refuse('unreadable', `the ${format.toUpperCase()} header names no size`)
  if (width > MAX_LOGO_SIDE || height > MAX_LOGO_SIDE || width * height > MAX_LOGO_PIXELS) {
    return refuse('too_many_pixels', `the image is ${width} × ${height} pixels; a logo has at most ${MAX_LOGO_SIDE} a side and ${MAX_LOGO_PIXELS} in all`)
  }
  if (format === 'webp' && isAnimatedWebp(bytes)) return refuse('animated', 'the WebP image is animated; a logo is one still image')
  let pixels: Rgba
  try {
    pixels = await decode(format, bytes)
  } catch {
    return refuse('unreadable', `the ${format.toUpperCase()} image cannot be decoded`)
  }
  // The header was what we bounded: an image whose pixels disagree with it is not taken on trust.
  if (pixels.width !== width || pixels.height !== height || pixels.data.length < width * height * 4) {
    return refuse('unreadable', `the ${format.toUpperCase()} image's pixels do not match its header`)
  }
  const upright = format === 'jpeg' ? uprightJpeg(pixels, header.orientation ?? 1) : pixels
  const fitted = fitWithin(upright, LOGO_BOX.width, LOGO_BOX.height)
  const png = encodePng(fitted)
  return { ok: true, logo: { png, width: fitted.width, height: fitted.height, sha256: sha256Hex(png) } }
}

function refuse(problem: LogoProblem, detail: string): LogoResult {
  return { ok: false, problem, detail }
}

/** The format by the file's first bytes: PNG's signature, JPEG's start-of-image marker, RIFF….WEBP. */
export function sniffFormat(b: Uint8Array): LogoFormat | undefined {
  const ascii = (start: number, end: number) => String.fromCharCode(...b.subarray(start, end))
  if (b.length >= 8 && b[0] === 0x89 && ascii(1, 8) === 'PNG\r\n\x1a\n') return 'png'
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg'
  if (b.length >= 16 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp'
  return undefined
}

/** For the refusal's detail: what a refused file is, where image-size recognises it (an SVG, a GIF). */
function namedType(bytes: Uint8Array): string {
  try {
    return ` (it is ${imageSize(bytes).type?.toUpperCase() ?? 'unknown'})`
  } catch {
    return ''
  }
}

/** The animation flag of a WebP "VP8X" header (RFC 9649, the extended format: the A bit of its flags byte). */
function isAnimatedWebp(b: Uint8Array): boolean {
  return String.fromCharCode(...b.subarray(12, 16)) === 'VP8X' && b.length > 20 && (b[20]! & 0x02) !== 0
}

async function decode(format: LogoFormat, bytes: Uint8Array): Promise<Rgba> {
  if (format === 'jpeg') {
    const image = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: MAX_LOGO_PIXELS / 1e6, maxMemoryUsageInMB: 64 })
    return { width: image.width, height: image.height, data: image.data }
  }
  const image = format === 'png' ? await (await pngDecoder)(bytes.slice().buffer) : await (await webpDecoder)(bytes.slice().buffer)
  return { width: image.width, height: image.height, data: new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.byteLength) }
}

/**
 * Squoosh's decoders as @jsquash packages them: Rust's png crate and libwebp, compiled to wasm. Their wasm
 * files come from the packages (embedded in a compiled binary), compiled once per process when the first
 * logo arrives, never fetched. pngjs, which the estimator reads with, is not used to read here: under Bun
 * it takes a truncated or corrupt PNG stream for black pixels instead of refusing it.
 */
const pngDecoder = lazy(async () => {
  await initPng(await WebAssembly.compile(await Bun.file(pngDecoderWasm as string).arrayBuffer()))
  return decodePng
})
const webpDecoder = lazy(async () => {
  await (initWebp as unknown as (module: WebAssembly.Module) => Promise<void>)(await WebAssembly.compile(await Bun.file(webpDecoderWasm).arrayBuffer()))
  return decodeWebp
})

/** A promise made on first use, not at import: a process that never reads a logo never compiles a decoder. */
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
