import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { decodeJwt } from 'jose'
import { EstimatorBusyError, ImageDecodeError, type AgeEstimator, type FaceObservation, type FrameAnalysis } from '../../src/estimator/types.ts'
import { updateClient } from '../../src/oauth/clients.ts'
import { createTestContext, json, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { backLink, callback, readPage, testBrowser } from './browser.ts'

/**
 * The face method's route and page over HTTP, with a scripted estimator standing in for the model: the
 * real model is tested in test/estimator and end to end in test/browser. Each frame's bytes choose the
 * analysis: "face:AGE", "none", "two", "garbage", or "busy".
 */
class ScriptedEstimator implements AgeEstimator {
  readonly ready = Promise.resolve()
  frames: string[] = []
  async analyze(image: Uint8Array): Promise<FrameAnalysis> {
    const script = new TextDecoder().decode(image)
    this.frames.push(script)
    if (script === 'busy') throw new EstimatorBusyError()
    if (script === 'garbage') throw new ImageDecodeError('not an image')
    const face = (age: number, x = 100): FaceObservation => ({ age, faceScore: 0.9, box: { x, y: 50, width: 220, height: 260 }, sharpness: 120, real: 0.9, live: 0.9 })
    const faces = script.startsWith('face:') ? [face(Number(script.slice(5)))] : script === 'two' ? [face(30), face(30, 400)] : []
    return { width: 640, height: 480, faces, ms: 1 }
  }
  async close() {}
}

let ctx: TestContext
let estimator: ScriptedEstimator
let shop: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  estimator = new ScriptedEstimator()
  ctx = await createTestContext({ estimator })
  shop = await ctx.createClient({ name: 'Wine shop' })
})
afterAll(() => ctx.close())
beforeEach(() => {
  estimator.frames = []
})

async function openFacePage(query: Record<string, string> = {}) {
  const browser = testBrowser(ctx)
  const { response, page } = await browser.open({ client_id: shop.id, state: 'st', ...query })
  expect(response.status).toBe(200)
  return { browser, page }
}

function postFrames(browser: ReturnType<typeof testBrowser>, action: string, csrf: string, frames: string[]) {
  const form = new FormData()
  form.set('csrf', csrf)
  for (const [i, frame] of frames.entries()) form.append('frame', new File([frame], `frame-${i}.jpg`, { type: 'image/jpeg' }))
  return browser.request(action, { method: 'POST', body: form })
}

describe('the face method on the page', () => {
  test('a production client is offered the face check: camera controls, camera script, privacy words, and no upload by default', async () => {
    const { page } = await openFacePage()
    expect(page.html).toContain('Check with your face')
    expect(page.html).toContain('enctype="multipart/form-data"')
    expect(page.html).toContain('<button type="button" data-start hidden>Start camera</button>')
    expect(page.html).toMatch(/<video data-preview[^>]*>/)
    expect(page.html).toContain('data-status')
    expect(page.html).toContain('<button type="submit" data-submit>Check my age</button>')
    expect(page.html).toContain('<script src="/assets/face-capture.js" defer></script>')
    expect(page.html).toContain('never stored')
    expect(page.html).not.toContain('type="file"')
    expect(page.html).not.toContain('Take a selfie')
    expect(page.html).not.toContain('data-upload')
    expect(page.html).not.toContain('Test age')
  })

  test('with FACE_UPLOAD=on the form also offers the upload fallback with capture=user', async () => {
    const uploading = await createTestContext({ estimator, env: { FACE_UPLOAD: 'on' } })
    try {
      const client = await uploading.createClient()
      const { page } = await testBrowser(uploading).open({ client_id: client.id })
      expect(page.html).toMatch(/<input[^>]*type="file"[^>]*capture="user"/)
      expect(page.html).toContain('<label for="face-photo">Take a selfie</label>')
      expect(page.html).toContain('data-start')
    } finally {
      await uploading.close()
    }
  })

  test('the script gets the "camera needed" words, with the site name, for a visitor without a camera', async () => {
    const { page } = await openFacePage()
    const attribute = /data-messages="([^"]*)"/.exec(page.html)![1]!.replaceAll('&#34;', '"').replaceAll('&amp;', '&')
    expect(JSON.parse(attribute).cameraNeeded).toBe('The face check needs a camera. You can use another way, or go back to Wine shop.')
    const german = await openFacePage({ lang: 'de' })
    expect(german.page.html).toContain('braucht eine Kamera')
  })

  test('the margin is said before the camera starts: the threshold and the estimate a face must reach', async () => {
    const { page } = await openFacePage()
    const margin = 'To pass, you need to look clearly older than 18: we approve only faces we estimate at 25 or more, because age estimates can be off by years. If we cannot confirm it, you can use another way or go back to Wine shop.'
    expect(page.html).toContain(margin)
    expect(page.html.indexOf(margin)).toBeLessThan(page.html.indexOf('data-start'))
  })

  test("the margin uses the session's threshold and the client's own face buffer", async () => {
    const careful = await ctx.createClient({ name: 'Bar', faceBuffer: 4 })
    const { page } = await testBrowser(ctx).open({ client_id: careful.id, age_required: '21' })
    expect(page.html).toContain('look clearly older than 21: we approve only faces we estimate at 25 or more')
    const german = await testBrowser(ctx).open({ client_id: careful.id, age_required: '16', lang: 'de' })
    expect(german.page.html).toContain('deutlich älter als 16 aussehen: Wir bestätigen nur Gesichter, die wir auf 20 Jahre oder älter schätzen')
  })

  test('a sandbox client is not offered the face check', async () => {
    const sandbox = await ctx.createClient({ sandbox: true })
    const { page } = await testBrowser(ctx).open({ client_id: sandbox.id })
    expect(page.html).not.toContain('Check with your face')
  })

  test('the page allows our script and our camera, and still no inline script', async () => {
    const { response } = await testBrowser(ctx).open({ client_id: shop.id })
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(response.headers.get('permissions-policy')).toContain('camera=(self)')
    const script = await testBrowser(ctx).request('/assets/face-capture.js')
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('text/javascript')
    expect((await testBrowser(ctx).request('/assets/..%2Fpackage.json')).status).toBe(404)
    expect((await testBrowser(ctx).request('/assets/other.js')).status).toBe(404)
  })
})

describe('POST /s/{id}/methods/face', () => {
  test('three frames with a median of 30 pass an 18 threshold with the 7-year buffer: biometric token, audit keeps method and buffer', async () => {
    const { browser, page } = await openFacePage()
    const done = await postFrames(browser, page.action('/methods/face'), page.csrf!, ['face:29', 'face:30', 'face:45'])
    const back = callback(done)!
    expect(back.state).toBe('st')
    const response = await ctx.exchange(shop.authorization, { grant_type: 'authorization_code', code: back.code, redirect_uri: REDIRECT_URI, state: 'st' })
    const token = await json(response)
    expect(decodeJwt(token.access_token)).toMatchObject({ age_over: 18, verification_level: 'first_verification' })
    const audit = await ctx.deps.db.query.auditLogs.findFirst({ where: (row, { eq }) => eq(row.transactionId, token.transaction_id) })
    expect(audit).toMatchObject({ methodClass: 'biometric', method: 'face', ageBuffer: 7, ageOver: 18 })
    expect(estimator.frames).toEqual(['face:29', 'face:30', 'face:45'])
  })

  test('an estimate inside the buffer fails on the page with a plain reason and counts an attempt', async () => {
    const { browser, page } = await openFacePage()
    const failed = await postFrames(browser, page.action('/methods/face'), page.csrf!, ['face:22'])
    expect(failed.status).toBe(200)
    expect(failed.headers.get('location')).toBeNull()
    const html = await failed.text()
    expect(html).toContain('We could not confirm from your face that you are 18 or older')
    expect(html).toContain('4 attempts left')
    expect(html).toContain('Check with your face')
    expect(backLink(html)).toEqual({ href: 'https://shop.example/', text: 'Back to Wine shop' })
  })

  test("a failed face check links back to the client's home address when it has one", async () => {
    await updateClient(ctx.deps.db, shop.id, { homeUrl: 'https://wine.example/start' })
    try {
      const { browser, page } = await openFacePage()
      const failed = await postFrames(browser, page.action('/methods/face'), page.csrf!, ['two'])
      expect(backLink(await failed.text())?.href).toBe('https://wine.example/start')
    } finally {
      await updateClient(ctx.deps.db, shop.id, { homeUrl: null })
    }
  })

  test("a client's own buffer overrides the deployment's", async () => {
    await updateClient(ctx.deps.db, shop.id, { faceBuffer: 2 })
    try {
      const { browser, page } = await openFacePage()
      expect(callback(await postFrames(browser, page.action('/methods/face'), page.csrf!, ['face:21']))).toBeDefined()
    } finally {
      await updateClient(ctx.deps.db, shop.id, { faceBuffer: null })
    }
  })

  test.each([
    ['none', 'We could not see a face'],
    ['two', 'more than one face'],
  ])('a frame with %s fails with a reason the visitor can act on', async (frame, message) => {
    const { browser, page } = await openFacePage()
    const failed = await postFrames(browser, page.action('/methods/face'), page.csrf!, [frame])
    expect(failed.status).toBe(200)
    expect(await failed.text()).toContain(message)
  })

  test('busy: 503 with Retry-After, the reason on the page, no attempt counted', async () => {
    const { browser, page } = await openFacePage()
    const busy = await postFrames(browser, page.action('/methods/face'), page.csrf!, ['busy'])
    expect(busy.status).toBe(503)
    expect(busy.headers.get('retry-after')).toBe('5')
    const html = await busy.text()
    expect(html).toContain('busy')
    expect(html).not.toContain('attempts left')
  })

  test('an unreadable picture, no picture, or too many pictures is 400 and no attempt', async () => {
    const { browser, page } = await openFacePage()
    const action = page.action('/methods/face')
    for (const frames of [['garbage'], [], Array(6).fill('face:40')]) {
      const response = await postFrames(browser, action, page.csrf!, frames)
      expect(response.status).toBe(400)
      const html = await response.text()
      expect(html).toContain('could not be read')
      expect(backLink(html)?.href).toBe('https://shop.example/')
    }
    const still = await readPage(await postFrames(browser, action, page.csrf!, ['face:10']))
    expect(still.html).toContain('4 attempts left')
  })

  test('the multipart form is checked like the others: CSRF and duplicate text fields', async () => {
    const { browser, page } = await openFacePage()
    const action = page.action('/methods/face')
    expect((await postFrames(browser, action, 'wrong', ['face:40'])).status).toBe(403)
    const form = new FormData()
    form.append('csrf', page.csrf!)
    form.append('csrf', page.csrf!)
    form.append('frame', new File(['face:40'], 'f.jpg'))
    expect((await browser.request(action, { method: 'POST', body: form })).status).toBe(400)
  })

  test('a re-verification after a face check counts as biometric and re_verification', async () => {
    const { browser, page } = await openFacePage({ age_required: '18' })
    await postFrames(browser, page.action('/methods/face'), page.csrf!, ['face:40'])
    const again = await browser.open({ client_id: shop.id, state: 'st', age_required: '21' })
    expect(again.page.html).toContain('Continue as verified')
    const back = callback(await browser.post(again.page.action('/continue'), { csrf: again.page.csrf! }))!
    const token = await json(await ctx.exchange(shop.authorization, { grant_type: 'authorization_code', code: back.code, redirect_uri: REDIRECT_URI, state: 'st' }))
    const audit = await ctx.deps.db.query.auditLogs.findFirst({ where: (row, { eq }) => eq(row.transactionId, token.transaction_id) })
    expect(audit).toMatchObject({ methodClass: 'biometric', method: 'age_pass', verificationLevel: 're_verification', ageOver: 21 })
  })

  test('the pass from a face check covers only up to the median less the buffer', async () => {
    const { browser, page } = await openFacePage({ age_required: '18' })
    await postFrames(browser, page.action('/methods/face'), page.csrf!, ['face:28'])
    expect((await browser.open({ client_id: shop.id, age_required: '21' })).page.html).toContain('Continue as verified')
    expect((await browser.open({ client_id: shop.id, age_required: '22' })).page.html).not.toContain('Continue as verified')
  })
})
