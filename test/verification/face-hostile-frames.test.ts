import { afterAll, beforeAll, expect, test } from 'bun:test'
import { MAX_IMAGE_SIDE } from '../../src/estimator/image.ts'
import { createAgeEstimator } from '../../src/estimator/pool.ts'
import type { AgeEstimator } from '../../src/estimator/types.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { closeUpJpeg } from '../estimator/sample-photos.ts'
import { manyScansJpeg } from '../images/hostile-images.ts'
import { testBrowser } from './browser.ts'

/**
 * Issue 30: anyone may post frames to the face check without signing in, and a frame's decoding is the
 * estimator's work. With the real estimator, one worker and its 15 s frame timeout as in production, an
 * attacker posts two captures of crafted JPEGs (the largest frame, 4,000 empty progressive scans each, about
 * 170 KB) while a visitor posts a photo. Before, each crafted frame held the worker until its timeout and a
 * model reload: the attacker's captures were answered "busy" after 15 and 32 s, and the visitor waited 33 s
 * behind them (with less room in the queue, would have been answered "busy" at once). Now each crafted frame is refused by its scan
 * count, the captures as unreadable, and the visitor's photo is analysed as usual.
 */
let ctx: TestContext
let estimator: AgeEstimator
let clientId: string

beforeAll(async () => {
  // As the server starts it (src/boot.ts), with the frame timeout's default.
  estimator = createAgeEstimator({ workers: 1, maxQueue: 2 })
  await estimator.ready
  // TRUST_PROXY: attacker and visitor come from two addresses (X-Forwarded-For), as they would.
  ctx = await createTestContext({ estimator, env: { FACE_UPLOAD: 'on', FACE_WORKERS: '1', FACE_QUEUE: '2', TRUST_PROXY: '1' } })
  clientId = (await ctx.createClient({ name: 'Wine shop' })).id
}, 120_000)
afterAll(async () => {
  await ctx?.close()
  await estimator?.close()
})

/** A capture posted from `address` in a session of its own; the answer and how long it took. */
async function postCapture(frames: Uint8Array<ArrayBuffer>[], address: string) {
  const browser = testBrowser(ctx)
  const { page } = await browser.open({ client_id: clientId, state: 'st' })
  const form = new FormData()
  form.set('csrf', page.csrf!)
  for (const [i, frame] of frames.entries()) form.append('frame', new File([frame], `frame-${i}.jpg`, { type: 'image/jpeg' }))
  return async () => {
    const started = performance.now()
    const response = await browser.request(page.action('/methods/face'), { method: 'POST', body: form, headers: { accept: 'application/json', 'x-forwarded-for': address } })
    return { status: response.status, body: await response.text(), ms: performance.now() - started }
  }
}

test('a capture of crafted frames is refused as unreadable at once, and a visitor’s capture posted meanwhile is analysed, not "busy"', async () => {
  const crafted = manyScansJpeg({ width: MAX_IMAGE_SIDE, height: MAX_IMAGE_SIDE, scans: 4000 })
  const attacks = await Promise.all([postCapture([crafted, crafted, crafted], '203.0.113.7'), postCapture([crafted, crafted, crafted], '203.0.113.7')])
  const visit = await postCapture([new Uint8Array(await closeUpJpeg('olderLooking'))], '198.51.100.20')
  const [first, second, visitor] = await Promise.all([...attacks.map((post) => post()), visit()])
  console.log(`crafted captures answered ${first!.status} in ${first!.ms.toFixed(0)} ms and ${second!.status} in ${second!.ms.toFixed(0)} ms; the visitor's ${visitor!.status} in ${visitor!.ms.toFixed(0)} ms`)
  for (const attack of [first!, second!]) {
    expect(attack.status).toBe(400)
    expect(JSON.parse(attack.body)).toMatchObject({ outcome: 'refused', message: 'The picture could not be read. Please take it again.' })
    // Generous: it is microseconds of marker walking; the frame timeout it held before is 15 s.
    expect(attack.ms).toBeLessThan(5_000)
  }
  // The photo is of an adult who clears 18 + the buffer: approved (JSON with the redirect), never 503.
  expect(visitor!.status).toBe(200)
  expect(JSON.parse(visitor!.body)).toMatchObject({ outcome: 'approved' })
  expect(visitor!.ms).toBeLessThan(15_000)
}, 120_000)
