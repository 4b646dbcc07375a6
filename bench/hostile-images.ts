/**
 * What a hostile image costs (issue 30), measured rather than asserted:
 *
 *   bun bench/hostile-images.ts            # everything: decoders alone, then the dashboard and the face check
 *   bun bench/hostile-images.ts --quick    # decoders alone (no models loaded)
 *
 * 1. The decoders alone, on this thread: jpeg-js (and Bun.Image, which the estimator decodes with since issue 34) on the attack round's logo (2048 × 1024, 12,000 empty
 *    progressive scans) and on a crafted face frame (4096 × 4096, 4,000 scans), on the worst JPEG within the
 *    scan budget and on the largest real-sized photo; @jsquash/png and pngjs on a 1 MiB PNG of 16 × 16 pixels
 *    whose data unpacks to 1 GiB; what the checks of src/images/ take to refuse each; what a logo read takes.
 * 2. In-process, through the app (as the tests run it, PGlite): the hostile logo posted to the dashboard while
 *    the key set falls due every 10 ms (each timed from when it fell due: the slowest is the longest stall), and with the
 *    real estimator (one worker, 15 s frame timeout) two captures of three crafted frames from one address and
 *    a visitor's photo from another, posted at once.
 *
 * Runs against the code before the fix too (the checks of src/images/ then say "n/a"), for the before/after.
 */
import { PNG } from 'pngjs'
import jpeg from 'jpeg-js'
import decodePng, { init as initPng } from '@jsquash/png/decode.js'
// @ts-expect-error The package's .d.ts beside the wasm types its exports; imported as a file, it is a path.
import pngDecoderWasm from '@jsquash/png/codec/pkg/squoosh_png_bg.wasm' with { type: 'file' }
import { readLogoImage } from '../src/branding/logo-image.ts'
import { createAgeEstimator } from '../src/estimator/pool.ts'
import { createTestContext } from '../test/helpers.ts'
import { createUser, sessionCsrf, signedIn } from '../test/dashboard/dashboard.ts'
import { closeUpJpeg } from '../test/estimator/sample-photos.ts'
import { manyScansJpeg, zlibBombPng } from '../test/images/hostile-images.ts'
import { testBrowser } from '../test/verification/browser.ts'

const quick = process.argv.includes('--quick')
const ms = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(0)} ms`

function time<T>(work: () => T): { value: T | Error; ms: number } {
  const started = performance.now()
  try {
    return { value: work(), ms: performance.now() - started }
  } catch (error) {
    return { value: error as Error, ms: performance.now() - started }
  }
}
async function timeAsync<T>(work: () => Promise<T>): Promise<{ value: T | Error; ms: number }> {
  const started = performance.now()
  try {
    return { value: await work(), ms: performance.now() - started }
  } catch (error) {
    return { value: error as Error, ms: performance.now() - started }
  }
}
const outcome = (value: unknown) => (value instanceof Error ? `error: ${value.message.slice(0, 70)}` : 'decoded')

// The checks exist only after the fix: before it, their lines say n/a.
const checks = await Promise.all([import('../src/images/jpeg-structure.ts'), import('../src/images/png-structure.ts')]).catch(() => undefined)

console.log('== decoders alone, on this thread ==')
const jpegs = [
  ['logo: 2048 × 1024, 12,000 empty scans', manyScansJpeg({ width: 2048, height: 1024, scans: 12_000 })],
  ['frame: 4096 × 4096, 4,000 empty scans', manyScansJpeg({ width: 4096, height: 4096, scans: 4_000 })],
  ['frame: 4096 × 4096, 64 empty scans (the budget)', manyScansJpeg({ width: 4096, height: 4096, scans: 64 })],
] as const
const photo = (() => {
  const data = new Uint8Array(4096 * 4096 * 4).map((_, i) => [(i >> 6) & 255, (i >> 16) & 255, (i >> 4) & 255, 255][i % 4]!)
  return jpeg.encode({ width: 4096, height: 4096, data }, 90).data
})()
for (const [name, bytes] of [...jpegs, ['frame: 4096 × 4096 baseline photo-sized JPEG', photo] as const]) {
  const decoded = time(() => jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: 17, maxMemoryUsageInMB: 256 }))
  // What the estimator decodes frames with since issue 34 (src/estimator/image.ts), the scan check left out.
  const native = await timeAsync(() => new Bun.Image(bytes).resize(1024, 1024, { fit: 'inside', withoutEnlargement: true, filter: 'box' }).png({ compressionLevel: 0 }).bytes())
  const checked = checks ? time(() => checks[0].readJpegStructure(bytes)) : undefined
  const verdict = checked && !(checked.value instanceof Error) ? (checked.value.ok ? 'read' : checked.value.problem) : ''
  console.log(`${name} (${bytes.length} B): jpeg-js ${ms(decoded.ms)} (${outcome(decoded.value)}); Bun.Image ${ms(native.ms)} (${outcome(native.value)}); scan check ${checked ? `${ms(checked.ms)} (${verdict})` : 'n/a'}`)
}

const bomb = zlibBombPng({ width: 16, height: 16, interlaced: true, unpackedBytes: 1024 * 1024 * 1024 })
await initPng(await WebAssembly.compile(await Bun.file(pngDecoderWasm as string).arrayBuffer()))
const squoosh = await timeAsync(() => decodePng(new Uint8Array(bomb).buffer))
const pngjs = time(() => PNG.sync.read(Buffer.from(bomb)))
const pngChecked = checks ? time(() => checks[1].readPngStructure(bomb)) : undefined
console.log(
  `PNG 16 × 16, data unpacking to 1 GiB, interlaced (${bomb.length} B): @jsquash/png ${ms(squoosh.ms)} (${outcome(squoosh.value)}); pngjs ${ms(pngjs.ms)} (${outcome(pngjs.value)}); ` +
    `data check ${pngChecked ? `${ms(pngChecked.ms)} (${pngChecked.value instanceof Error ? 'error' : pngChecked.value.ok ? 'read' : pngChecked.value.problem})` : 'n/a'}`,
)
const logoPhoto = (() => {
  const data = new Uint8Array(2048 * 1024 * 4).map((_, i) => [(i >> 5) & 255, (i >> 15) & 255, (i >> 3) & 255, 255][i % 4]!)
  return new Uint8Array(jpeg.encode({ width: 2048, height: 1024, data }, 90).data)
})()
for (const [name, bytes] of [['the largest logo, a 2048 × 1024 JPEG', logoPhoto], ['the hostile logo JPEG', jpegs[0][1]], ['the PNG bomb as a logo', bomb]] as const) {
  const times: number[] = []
  let result = ''
  for (let i = 0; i < 3; i++) {
    const read = await timeAsync(() => readLogoImage(bytes))
    times.push(read.ms)
    result = read.value instanceof Error ? 'error' : read.value.ok ? 'stored' : read.value.problem
  }
  console.log(`readLogoImage, ${name}: ${times.map(ms).join(', ')} (${result})`)
}
if (quick) process.exit(0)

console.log('== through the app, in-process ==')
const estimator = createAgeEstimator({ workers: 1, maxQueue: 2 })
await estimator.ready
const ctx = await createTestContext({ estimator, env: { FACE_UPLOAD: 'on', FACE_WORKERS: '1', FACE_QUEUE: '2', TRUST_PROXY: '1' } })
try {
  const shop = await ctx.createClient({ name: 'Wine shop', redirectUris: ['https://shop.example/cb'] })
  await createUser(ctx, shop.id, 'owner@shop.example')
  const owner = await signedIn(ctx, 'owner@shop.example')
  const form = new FormData()
  form.set('csrf', await sessionCsrf(owner))
  form.set('logo', new File([jpegs[0][1]], 'logo.jpg', { type: 'image/jpeg' }))
  const started = performance.now()
  let settled = false
  const uploaded = owner.request('/dashboard/settings/branding/logo', { method: 'POST', body: form }).then(async (response) => {
    settled = true
    return { status: response.status, ms: performance.now() - started }
  })
  // A key set request falls due every 10 ms; each is timed from when it fell due, as a client whose request
  // arrived then would see it: a stalled event loop shows as the slowest.
  const keySet: number[] = []
  for (let due = performance.now(); !settled; due += 10) {
    await Bun.sleep(Math.max(0, due - performance.now()))
    await ctx.request('/api/.well-known/jwks.json')
    keySet.push(performance.now() - due)
  }
  const logo = await uploaded
  console.log(`dashboard, hostile logo: answered ${logo.status} in ${ms(logo.ms)}; key set asked ${keySet.length} times meanwhile, slowest ${ms(Math.max(...keySet))}`)

  const crafted = manyScansJpeg({ width: 4096, height: 4096, scans: 4_000 })
  const capture = async (frames: Uint8Array[], address: string) => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: shop.id, state: 'st', redirect_uri: 'https://shop.example/cb' })
    const body = new FormData()
    body.set('csrf', page.csrf!)
    for (const [i, frame] of frames.entries()) body.append('frame', new File([new Uint8Array(frame)], `frame-${i}.jpg`, { type: 'image/jpeg' }))
    return async () => {
      const posted = performance.now()
      const response = await browser.request(page.action('/methods/face'), { method: 'POST', body, headers: { accept: 'application/json', 'x-forwarded-for': address } })
      const answer = (await response.json()) as { outcome: string }
      return `${response.status} ${answer.outcome} in ${ms(performance.now() - posted)}`
    }
  }
  const posts = [await capture([crafted, crafted, crafted], '203.0.113.7'), await capture([crafted, crafted, crafted], '203.0.113.7'), await capture([await closeUpJpeg('olderLooking')], '198.51.100.20')]
  const [first, second, visitor] = await Promise.all(posts.map((post) => post()))
  console.log(`face check, two captures of 3 crafted frames (${crafted.length} B each): ${first}; ${second}`)
  console.log(`face check, a visitor's photo posted at the same moment: ${visitor}`)
} finally {
  await ctx.close()
  await estimator.close()
}
