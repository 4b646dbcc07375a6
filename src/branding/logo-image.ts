import { imageSize } from 'image-size'
import { readJpegStructure } from '../images/jpeg-structure.ts'
import { createConcurrencyLimit } from '../lib/concurrency-limit.ts'
import { runWorkerTask } from '../lib/worker-task.ts'
import type { LogoRender } from './logo-pixels.ts'
import type { LogoFormat, LogoProblem, LogoResult } from './logo-result.ts'

/** An upload's bytes at most: a logo is a small picture, and the dashboard's form says so before sending. */
export const MAX_LOGO_BYTES = 1024 * 1024
/** A side at most, and pixels in all, read from the header before anything is decoded (RGBA: 8 MiB at most). */
export const MAX_LOGO_SIDE = 2048
export const MAX_LOGO_PIXELS = 2048 * 1024
/** What is stored and served: the page shows a logo at most 4rem high, so 256 px covers a phone's 3× screen. */
export const LOGO_BOX = { width: 1024, height: 256 } as const
/**
 * How long reading a logo may take on its thread, the thread's start included; past it the thread is ended
 * and the upload refused. The largest a logo may be, 2048 × 1024, takes 0.6–1 s on a busy two-core machine
 * (`bun bench/hostile-images.ts`): the deadline leaves a slower machine room, and bounds what no check foresaw.
 */
export const LOGO_DEADLINE_MS = 5000
/**
 * Logos read at once in a process, each on a thread of its own with a decoded image of up to 8 MiB: more
 * uploads at the same moment are refused as busy rather than each given a thread and its memory.
 */
export const MAX_LOGO_READS = 2

export type { LogoFormat, LogoImage, LogoProblem, LogoResult } from './logo-result.ts'

/**
 * Turns an upload into the logo we store: PNG, JPEG or WebP by its bytes (never its name or declared type),
 * bounded in bytes and, from its header (image-size), in pixels before a pixel is decoded, and a JPEG in
 * scans (src/images/jpeg-structure.ts): these checks take microseconds, here. The rest happens on a thread
 * of its own within {@link LOGO_DEADLINE_MS} (logo-pixels.ts): decoded by a library, scaled into
 * {@link LOGO_BOX} and encoded again as a PNG of our own. Nothing of the upload survives but its pixels: no
 * metadata, no colour profile, no second frame, no bytes after the image (a polyglot's HTML or script),
 * since the served file is what we wrote.
 */
export async function readLogoImage(bytes: Uint8Array, options: { deadlineMs?: number } = {}): Promise<LogoResult> {
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
  if (format === 'jpeg') {
    const jpeg = readJpegStructure(bytes)
    if (!jpeg.ok) return refuse(jpeg.problem === 'too_many_scans' ? 'too_complex' : 'unreadable', jpeg.detail)
    if (jpeg.jpeg.width !== width || jpeg.jpeg.height !== height) return refuse('unreadable', "the JPEG's frame header disagrees with its size")
  }
  const release = logoReads.tryAcquire()
  if (!release) return refuse('busy', `${MAX_LOGO_READS} logos are being read; try again in a moment`)
  try {
    const deadlineMs = options.deadlineMs ?? LOGO_DEADLINE_MS
    // A copy of its own to move: a Node Buffer's slice() shares (and moving it would empty) the caller's memory.
    const copy = new Uint8Array(bytes)
    const render: LogoRender = { format, bytes: copy, width, height, orientation: header.orientation ?? 1, box: LOGO_BOX }
    const answer = await runWorkerTask<LogoResult>(logoWorkerUrl(), render, [copy.buffer], deadlineMs)
    if (answer.ok) return answer.value
    if (answer.reason === 'timed_out') return refuse('too_complex', `the ${format.toUpperCase()} image was not read within ${deadlineMs / 1000} s`)
    return refuse('unreadable', `the ${format.toUpperCase()} image cannot be decoded`)
  } finally {
    release()
  }
}

/** Process-wide, as the cores and memory it guards are; every place is given back when its read ends. */
const logoReads = createConcurrencyLimit(MAX_LOGO_READS)

/**
 * logo-worker.ts beside this file when run from source; in a binary compiled from src/cli.ts, where this
 * module is inlined into the entry, at branding/logo-worker.ts beside the entry (see estimator/pool.ts).
 */
function logoWorkerUrl(): URL {
  const compiled = import.meta.url.startsWith('file:///$bunfs/')
  return new URL(compiled ? './branding/logo-worker.ts' : './logo-worker.ts', import.meta.url)
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
