import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { decodeJwt } from 'jose'
import { EstimatorBusyError, ImageDecodeError, type AgeEstimator, type AgeViews, type FaceObservation, type FrameAnalysis } from '../../src/estimator/types.ts'
import { updateClient } from '../../src/clients/registry.ts'
import { CHALLENGE_SEQUENCES, pickChallenge, type Pose } from '../../src/liveness/challenge.ts'
import { createTestContext, json, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { captureFor } from '../liveness/clips.ts'
import { atAnotherMoment } from '../liveness/moments.ts'
import recorded from '../liveness/fixtures/recorded-frames.json' with { type: 'json' }
import { MAX_FRAMES } from '../../src/verification/methods/face.tsx'
import { minimumClientFaceBuffer } from '../../src/clients/face-buffer.ts'
import { backLink, callback, readPage, testBrowser, type PageForms } from './browser.ts'

/**
 * The face method's route and page over HTTP, with a scripted estimator standing in for the model: the
 * real model is tested in test/estimator and end to end in test/browser. Each frame's bytes choose the
 * analysis: "face:AGE", "none", "two", "garbage", "busy", or "rec:CLIP/FRAME[@AGE]", what the real
 * estimator said of that frame of a shared/liveness clip (test/liveness/fixtures), with its age replaced.
 * Anything after a "#" only makes the bytes unique, as two frames of a real camera always are, and
 * makes a recorded face another moment's (test/liveness/moments.ts); after a "~", only the bytes change:
 * the same picture re-encoded.
 */
class ScriptedEstimator implements AgeEstimator {
  readonly ready = Promise.resolve()
  frames: string[] = []
  views: AgeViews[] = []
  async analyze(image: Uint8Array, views: AgeViews = 'both'): Promise<FrameAnalysis> {
    const script = new TextDecoder().decode(image).split('#')[0]!
    this.frames.push(script)
    this.views.push(views)
    if (script.startsWith('rec:')) {
      const [key, age] = script.slice(4).split('@')
      // Each distinct frame is the clip's picture at another moment: a real camera never shows the
      // same face twice to the content replay guard, unless the very frame is sent again.
      const analysis = atAnotherMoment(structuredClone((recorded as unknown as Record<string, FrameAnalysis>)[key!]!), new TextDecoder().decode(image).split('~')[0]!)
      if (age) for (const face of analysis.faces) face.age = Number(age)
      return analysis
    }
    if (script === 'busy') throw new EstimatorBusyError()
    if (script === 'garbage') throw new ImageDecodeError('not an image')
    const face = (age: number, x = 100): FaceObservation => ({ age, faceScore: 0.9, box: { x, y: 50, width: 220, height: 260 }, sharpness: 120 })
    const faces = script.startsWith('face:') ? [face(Number(script.slice(5)))] : script === 'two' ? [face(30), face(30, 400)] : []
    return { width: 640, height: 480, faces, ms: 1 }
  }
  async close() {}
}


/** docs/accuracy.md's measured buffer at 18 (11 years) and the estimate a face must reach: 29. */
const BUFFER_18 = 11
const CUT_OFF_18 = 29
let ctx: TestContext
let estimator: ScriptedEstimator
let shop: Awaited<ReturnType<TestContext['createClient']>>

/** Sequences intel-female-headturn can answer (it never nods): 16 of the 240. */
const CLIP_SEQUENCES = CHALLENGE_SEQUENCES.filter((poses) => poses.every((pose) => pose === 'left' || pose === 'right' || pose === 'straight'))
/** A drawn challenge (random holds) whose poses the clip can answer: the test-only picker. */
const pickClipChallenge = () => pickChallenge((count) => (count === CHALLENGE_SEQUENCES.length ? CHALLENGE_SEQUENCES.indexOf(CLIP_SEQUENCES[Math.floor(Math.random() * CLIP_SEQUENCES.length)]!) : Math.floor(Math.random() * count)))
/** Another sequence the clip can answer: a recording of `poses` answering it must fail. */
const otherThan = (poses: readonly Pose[]) => [...CLIP_SEQUENCES.find((other) => other.join() !== poses.join())!]

beforeAll(async () => {
  estimator = new ScriptedEstimator()
  ctx = await createTestContext({ estimator, pickChallenge: pickClipChallenge })
  shop = await ctx.createClient({ name: 'Wine shop' })
})
afterAll(() => ctx.close())
beforeEach(() => {
  estimator.frames = []
  estimator.views = []
})

async function openFacePage(query: Record<string, string> = {}) {
  const browser = testBrowser(ctx)
  const { response, page } = await browser.open({ client_id: shop.id, state: 'st', ...query })
  expect(response.status).toBe(200)
  return { browser, page }
}

type Browser = ReturnType<typeof testBrowser>

function postFrames(browser: Browser, action: string, csrf: string, frames: string[], fields: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const form = new FormData()
  form.set('csrf', csrf)
  for (const [name, value] of Object.entries(fields)) form.set(name, value)
  for (const [i, frame] of frames.entries()) form.append('frame', new File([frame], `frame-${i}.jpg`, { type: 'image/jpeg' }))
  return browser.request(action, { method: 'POST', body: form, headers })
}

/** Where the face form's script asks for its challenge (the form's data-challenge). */
const challengePath = (page: PageForms) => /data-challenge="([^"]+)"/.exec(page.html)![1]!.replaceAll('&amp;', '&')

type AskedChallenge = { status: number; challenge?: string; poses?: Pose[]; hold_ms?: number[]; expires_in?: number }

/**
 * Asks for the session's live challenge, as the page's script does, then lets the time pass that showing
 * its prompts takes (unless `wait` is false): an answer sooner than that is refused.
 */
async function askChallenge(browser: Browser, page: PageForms, wait = true): Promise<AskedChallenge> {
  const response = await browser.post(challengePath(page), { csrf: page.csrf! })
  const body: AskedChallenge = { status: response.status, ...(response.status === 200 ? await response.json() : {}) }
  if (wait && body.hold_ms) ctx.clock.advance(body.hold_ms.reduce((sum, ms) => sum + ms, 0))
  return body
}

let unique = 0
const rec = (frame: string, age?: number) => `rec:intel-female-headturn/${frame}${age === undefined ? '' : `@${age}`}#${unique++}`

/** The frames a visitor answering `poses` sends (test/liveness/clips.ts), the frontal ones estimated at `age`. */
function answer(poses: readonly Pose[], age: number): { frames: string[]; phases: string } {
  const capture = captureFor(poses)
  return { frames: capture.map((shot) => rec(shot.frame, shot.frontal ? age : undefined)), phases: capture.map((shot) => shot.phase).join(',') }
}

/** A whole live check: challenge, then a capture that follows it (or the order given), with frontal faces of `age`. */
async function liveCheck(browser: Browser, page: PageForms, age: number, options: { poses?: Pose[]; json?: boolean } = {}) {
  const challenge = await askChallenge(browser, page)
  expect(challenge.status).toBe(200)
  const { frames, phases } = answer(options.poses ?? challenge.poses!, age)
  const headers: Record<string, string> = options.json ? { accept: 'application/json' } : {}
  return postFrames(browser, page.action('/methods/face'), page.csrf!, frames, { challenge: challenge.challenge!, phases }, headers)
}

describe('the face method on the page', () => {
  test('a production client is offered the face check: camera controls, camera script, privacy words, and no upload by default', async () => {
    const { page } = await openFacePage()
    expect(page.html).toContain('Check with your face')
    expect(page.html).toContain('enctype="multipart/form-data"')
    expect(page.html).toContain('<button type="button" data-start hidden>Start camera</button>')
    expect(page.html).toMatch(/<video data-preview[^>]*>/)
    expect(page.html).toContain('data-status')
    expect(page.html).toContain('<button type="submit" data-submit hidden>Check my age</button>')
    expect(page.html).toContain('data-challenge="/s/')
    expect(page.html).toContain('class="guide"')
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

  test('for a visitor without a camera the form holds what to do instead and the way back to the site, shown by the script or without one (issue 32: no dead end)', async () => {
    const { page } = await openFacePage()
    const block = /<div class="alert" data-no-camera hidden>([\s\S]*?)<\/div>/.exec(page.html)![1]!
    expect(block).toContain('The face check needs a camera. You can use another way, or go back to Wine shop.')
    expect(block).toContain('<a href="https://shop.example/" class="back">Back to Wine shop</a>')
    expect(/<noscript>([\s\S]*?)<\/noscript>/.exec(page.html)![1]).toBe(block)
    const german = await openFacePage({ lang: 'de' })
    expect(german.page.html).toContain('braucht eine Kamera')
  })

  test("where the face check is the site's only way, the words say so: another device, or back to the site", async () => {
    const only = await ctx.createClient({ name: 'Faces only', methods: ['face'], homeUrl: 'https://faces.example/home' })
    const { page } = await testBrowser(ctx).open({ client_id: only.id, state: 'st' })
    const block = /<div class="alert" data-no-camera hidden>([\s\S]*?)<\/div>/.exec(page.html)![1]!
    expect(block).toContain('This site accepts only the face check, and it needs a camera that this device does not offer. Open this page on a phone with a camera, or go back to Faces only.')
    expect(block).toContain('<a href="https://faces.example/home" class="back">Back to Faces only</a>')
  })

  test('the margin is said before the camera starts: the threshold and the estimate a face must reach', async () => {
    const { page } = await openFacePage()
    const margin = `To pass, you need to look clearly older than 18: we approve only faces we estimate at ${CUT_OFF_18} or more, because age estimates can be off by years. If we cannot confirm it, you can use another way or go back to Wine shop.`
    expect(page.html).toContain(margin)
    expect(page.html.indexOf(margin)).toBeLessThan(page.html.indexOf('data-start'))
  })

  test("the margin uses the session's threshold and the client's own face buffer", async () => {
    const careful = await ctx.createClient({ name: 'Bar', faceBuffer: 12 })
    const { page } = await testBrowser(ctx).open({ client_id: careful.id, age_required: '21' })
    expect(page.html).toContain('look clearly older than 21: we approve only faces we estimate at 33 or more')
    const german = await testBrowser(ctx).open({ client_id: careful.id, age_required: '16', lang: 'de' })
    expect(german.page.html).toContain('deutlich älter als 16 aussehen: Wir bestätigen nur Gesichter, die wir auf 28 Jahre oder älter schätzen')
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

describe('the live challenge', () => {
  test('is issued per session as JSON: poses and how long each is held, valid for two minutes, never cached', async () => {
    const { browser, page } = await openFacePage()
    const response = await browser.post(challengePath(page), { csrf: page.csrf! })
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const body = await response.json()
    expect(body.challenge).toMatch(/^[A-Za-z0-9_-]{24}$/)
    expect(CHALLENGE_SEQUENCES).toContainEqual(body.poses)
    expect(body.hold_ms.length).toBe(body.poses.length + 2)
    expect(body.turns).toBeUndefined()
    expect(body.expires_in).toBe(120)
  })

  test('needs the CSRF token of the session, like every form', async () => {
    const { browser, page } = await openFacePage()
    expect((await browser.post(challengePath(page), { csrf: 'wrong' })).status).toBe(403)
  })

  test('drawing a new challenge while one is unanswered costs an attempt: no fishing for the order a recording follows', async () => {
    const { browser, page } = await openFacePage()
    await askChallenge(browser, page)
    const second = await askChallenge(browser, page)
    expect(second.status).toBe(200)
    const { frames, phases } = answer(otherThan(second.poses!), 30)
    const failed = await postFrames(browser, page.action('/methods/face'), page.csrf!, frames, { challenge: second.challenge!, phases })
    expect(await failed.text()).toContain('3 attempts left')
  })

  test('redrawing until the attempts run out locks the session; an answered challenge costs nothing to replace', async () => {
    const { browser, page } = await openFacePage()
    const answered = await askChallenge(browser, page)
    // Wrong on purpose but readable: one failed attempt, and the challenge is used up.
    const wrong = answer(['left'], 40)
    await postFrames(browser, page.action('/methods/face'), page.csrf!, wrong.frames, { challenge: answered.challenge!, phases: wrong.phases })
    for (let i = 0; i < 5; i++) expect((await askChallenge(browser, page)).status).toBe(200)
    expect((await askChallenge(browser, page)).status).toBe(404)
    const locked = await (await browser.request(page.action('/methods/face').split('/methods/')[0]!)).text()
    expect(locked).toContain('Too many attempts')
  })

  test('is not offered to a sandbox client, whose visitors have no face check', async () => {
    const sandbox = await ctx.createClient({ sandbox: true })
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id })
    const path = page.action('/methods/sandbox').replace('/methods/sandbox', '/methods/face/challenge')
    expect((await browser.post(path, { csrf: page.csrf! })).status).toBe(404)
  })
})

describe('POST /s/{id}/methods/face (live capture)', () => {
  test('a capture that follows the challenge with frontal faces estimated at 30 passes 18 with the default buffer', async () => {
    const { browser, page } = await openFacePage()
    const back = callback(await liveCheck(browser, page, 30))!
    expect(back.state).toBe('st')
    const token = await json(await ctx.exchange(shop.authorization, { grant_type: 'authorization_code', code: back.code, redirect_uri: REDIRECT_URI, state: 'st' }))
    expect(decodeJwt(token.access_token)).toMatchObject({ age_over: 18, verification_level: 'first_verification' })
    const audit = await ctx.deps.db.query.auditLogs.findFirst({ where: (row, { eq }) => eq(row.transactionId, token.transaction_id) })
    expect(audit).toMatchObject({ methodClass: 'biometric', method: 'face', ageBuffer: BUFFER_18, ageOver: 18 })
    // Two frames under each prompt: straight, each prompt (three or four), straight again. The straight
    // frames alternate the face and its mirror image; the turned ones need only the original view.
    expect([10, 12]).toContain(estimator.frames.length)
    const turned = Array(estimator.frames.length - 4).fill('original')
    expect(estimator.views).toEqual(['original', 'mirror', ...turned, 'original', 'mirror'])
  })

  test("the page's script gets JSON: the way back to the site on approval, with the code and state", async () => {
    const { browser, page } = await openFacePage()
    const response = await liveCheck(browser, page, 31, { json: true })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('application/json')
    const body = await response.json()
    expect(body.outcome).toBe('approved')
    const redirect = new URL(body.redirect)
    expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT_URI)
    expect(redirect.searchParams.get('state')).toBe('st')
    expect(redirect.searchParams.get('code')).toBeString()
  })

  test('the same capture answering the other order fails, counts an attempt and may be tried again', async () => {
    const { browser, page } = await openFacePage()
    const challenge = await askChallenge(browser, page)
    const { frames, phases } = answer(otherThan(challenge.poses!), 30)
    const failed = await postFrames(browser, page.action('/methods/face'), page.csrf!, frames, { challenge: challenge.challenge!, phases })
    const html = await failed.text()
    expect(html).toContain('Your head did not turn as the prompts asked')
    expect(html).toContain('4 attempts left')
    expect(html).toContain('Check with your face')
    expect(backLink(html)).toEqual({ href: 'https://shop.example/', text: 'Back to Wine shop' })
  })

  test('a face estimated over the threshold but under the cut-off is told the check cannot place it, and shown the other ways, after the first try', async () => {
    const { browser, page } = await openFacePage()
    const refused = await liveCheck(browser, page, 24, { json: true })
    const body = await refused.json()
    expect(body).toMatchObject({ outcome: 'refused', retry: false, home_url: 'https://shop.example/', back_label: 'Back to Wine shop' })
    expect(body.message).toContain('The face check cannot place you')
    expect(body.message).toContain(`we only approve faces we estimate at ${CUT_OFF_18} or more`)
    // This deployment has no digital ID; the client takes passkeys.
    expect(body.message).toContain('You can still use a passkey you saved earlier here.')
    expect(body.message).not.toContain('digital ID')
    expect(body.message).not.toContain('Try again')
    const again = await (await browser.request(page.action('/methods/face').split('/methods/')[0]!)).text()
    expect(again).not.toContain('Check with your face')
    // The page after it says what the answer said, not "no other way" above the passkey panel.
    expect(again).toContain('You can still use a passkey you saved earlier here.')
    expect(again).not.toContain('There is no other way')
    expect(backLink(again)?.href).toBe('https://shop.example/')
    expect((await askChallenge(browser, page)).status).toBe(404)
  })

  test('a challenge is used once: a second capture with the same id is refused without counting an attempt', async () => {
    const { browser, page } = await openFacePage()
    const challenge = await askChallenge(browser, page)
    const first = answer(challenge.poses!, 22)
    // Wrong turns on purpose, so that the first capture fails but uses the challenge up.
    await postFrames(browser, page.action('/methods/face'), page.csrf!, answer(['left'], 40).frames, { challenge: challenge.challenge!, phases: answer(['left'], 40).phases })
    const second = await postFrames(browser, page.action('/methods/face'), page.csrf!, first.frames, { challenge: challenge.challenge!, phases: first.phases })
    expect(second.status).toBe(400)
    const html = await second.text()
    expect(html).toContain('took too long or was already used')
    expect(html).not.toContain('attempts left')
  })

  test("another session's challenge does not open this one", async () => {
    const other = await openFacePage()
    const stolen = await askChallenge(other.browser, other.page)
    const { browser, page } = await openFacePage()
    const { frames, phases } = answer(stolen.poses!, 40)
    const response = await postFrames(browser, page.action('/methods/face'), page.csrf!, frames, { challenge: stolen.challenge!, phases })
    expect(response.status).toBe(400)
    expect(await response.text()).toContain('took too long or was already used')
  })

  test('a challenge answered after two minutes is refused', async () => {
    const { browser, page } = await openFacePage()
    const challenge = await askChallenge(browser, page)
    ctx.clock.advance(120_001)
    const { frames, phases } = answer(challenge.poses!, 40)
    const late = await postFrames(browser, page.action('/methods/face'), page.csrf!, frames, { challenge: challenge.challenge!, phases })
    expect(late.status).toBe(400)
    expect(await late.text()).toContain('took too long')
  })

  test("frames taken from another session's capture are refused, even with a fresh challenge", async () => {
    const first = await openFacePage()
    const challenge = await askChallenge(first.browser, first.page)
    const capture = answer(challenge.poses!, 24)
    await postFrames(first.browser, first.page.action('/methods/face'), first.page.csrf!, capture.frames, { challenge: challenge.challenge!, phases: capture.phases })
    const { browser, page } = await openFacePage()
    const fresh = await askChallenge(browser, page)
    // The same bytes, labelled for the fresh challenge (whose number of turns may differ).
    const phases = capture.frames.map((_, i) => Math.round((i * (fresh.poses!.length + 1)) / (capture.frames.length - 1))).join(',')
    const replay = await postFrames(browser, page.action('/methods/face'), page.csrf!, capture.frames, { challenge: fresh.challenge!, phases })
    expect(await replay.text()).toContain('These pictures were used before')
  })

  test('replay with re-encoded or noised frames is refused: the content guard sees the same faces in new bytes', async () => {
    const first = await openFacePage()
    const challenge = await askChallenge(first.browser, first.page)
    const capture = answer(challenge.poses!, 24)
    await postFrames(first.browser, first.page.action('/methods/face'), first.page.csrf!, capture.frames, { challenge: challenge.challenge!, phases: capture.phases })
    const { browser, page } = await openFacePage()
    const fresh = await askChallenge(browser, page)
    const reencoded = capture.frames.map((frame) => `${frame}~q70`)
    const phases = capture.frames.map((_, i) => Math.round((i * (fresh.poses!.length + 1)) / (capture.frames.length - 1))).join(',')
    const replay = await postFrames(browser, page.action('/methods/face'), page.csrf!, reencoded, { challenge: fresh.challenge!, phases })
    expect(await replay.text()).toContain('used before')
  })

  test('a genuine re-capture by the same person is not a replay: the same clip at other moments passes again', async () => {
    for (let i = 0; i < 2; i++) {
      const { browser, page } = await openFacePage()
      expect(callback(await liveCheck(browser, page, 35))?.state).toBe('st')
    }
  })

  test('a capture answered faster than the prompts could be shown is refused, the attempt counts and the challenge is used', async () => {
    const { browser, page } = await openFacePage()
    const challenge = await askChallenge(browser, page, false)
    const total = challenge.hold_ms!.reduce((sum, ms) => sum + ms, 0)
    ctx.clock.advance(total - 1000)
    const { frames, phases } = answer(challenge.poses!, 40)
    const early = await postFrames(browser, page.action('/methods/face'), page.csrf!, frames, { challenge: challenge.challenge!, phases })
    expect(early.status).toBe(200)
    const html = await early.text()
    expect(html).toContain('did not turn as the prompts asked')
    expect(html).toContain('4 attempts left')
    expect(estimator.frames).toEqual([])
    ctx.clock.advance(1000)
    const again = await postFrames(browser, page.action('/methods/face'), page.csrf!, frames, { challenge: challenge.challenge!, phases })
    expect(await again.text()).toContain('took too long or was already used')
  })

  test('without a challenge, a still photo is refused when uploads are off (the default), and no attempt counts', async () => {
    const { browser, page } = await openFacePage()
    const response = await postFrames(browser, page.action('/methods/face'), page.csrf!, ['face:40'])
    expect(response.status).toBe(400)
    const html = await response.text()
    expect(html).toContain('needs the live camera')
    expect(html).not.toContain('attempts left')
    expect(estimator.frames).toEqual([])
  })

  test('phases that our page would never send are refused as unreadable', async () => {
    const { browser, page } = await openFacePage()
    for (const phases of ['0,0,1', '0,1,0,2,2,3,3,3', '0,0,1,1,2,2,9,9']) {
      const challenge = await askChallenge(browser, page)
      const { frames } = answer(challenge.poses!.slice(0, 2), 40)
      const response = await postFrames(browser, page.action('/methods/face'), page.csrf!, frames, { challenge: challenge.challenge!, phases })
      expect(response.status).toBe(400)
      expect(await response.text()).toContain('could not be read')
    }
  })

  test("a client's own buffer raises the cut-off, and one under the default is refused", async () => {
    const cutOff = CUT_OFF_18
    await updateClient(ctx.deps.db, shop.id, { faceBuffer: BUFFER_18 + 3 })
    try {
      const first = await openFacePage()
      expect(callback(await liveCheck(first.browser, first.page, cutOff + 1))).toBeUndefined()
      const second = await openFacePage()
      expect(callback(await liveCheck(second.browser, second.page, cutOff + 3))).toBeDefined()
    } finally {
      await updateClient(ctx.deps.db, shop.id, { faceBuffer: null })
    }
    await expect(updateClient(ctx.deps.db, shop.id, { faceBuffer: minimumClientFaceBuffer(null, undefined).years - 1 })).rejects.toThrow('a client may only raise it')
  })

  test('a face estimated under the threshold is refused plainly, without being told it may be over it', async () => {
    const { browser, page } = await openFacePage()
    const body = await (await liveCheck(browser, page, 15, { json: true })).json()
    expect(body.message).toContain('could not confirm that you are 18 or older')
    expect(body.message).not.toContain('cannot place')
    expect(body.message).toContain('You can still use a passkey you saved earlier here.')
  })

  test('busy: 503 with Retry-After, the reason on the page, no attempt counted', async () => {
    const { browser, page } = await openFacePage()
    const challenge = await askChallenge(browser, page)
    const { phases } = answer(challenge.poses!, 40)
    const frames = phases.split(',').map(() => 'busy')
    const busy = await postFrames(browser, page.action('/methods/face'), page.csrf!, frames, { challenge: challenge.challenge!, phases })
    expect(busy.status).toBe(503)
    expect(busy.headers.get('retry-after')).toBe('5')
    const html = await busy.text()
    expect(html).toContain('busy')
    expect(html).not.toContain('attempts left')
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

  test('a re-verification after a face check relies on the threshold that was checked, not on the estimate', async () => {
    const { browser, page } = await openFacePage({ age_required: '18' })
    expect(callback(await liveCheck(browser, page, 45))).toBeDefined()
    const same = await browser.open({ client_id: shop.id, state: 'st', age_required: '18' })
    expect(same.page.html).toContain('Continue as verified')
    // An estimate of 45 would once have "proved" 37; now the pass proves what was asked: 18.
    expect((await browser.open({ client_id: shop.id, age_required: '19' })).page.html).not.toContain('Continue as verified')
    const back = callback(await browser.post(same.page.action('/continue'), { csrf: same.page.csrf! }))!
    const token = await json(await ctx.exchange(shop.authorization, { grant_type: 'authorization_code', code: back.code, redirect_uri: REDIRECT_URI, state: 'st' }))
    const audit = await ctx.deps.db.query.auditLogs.findFirst({ where: (row, { eq }) => eq(row.transactionId, token.transaction_id) })
    expect(audit).toMatchObject({ methodClass: 'biometric', method: 'age_pass', verificationLevel: 're_verification', ageOver: 18 })
  })
})

describe('POST /s/{id}/methods/face with FACE_UPLOAD=on (a still photo, documented as weak)', () => {
  let uploading: TestContext
  let client: Awaited<ReturnType<TestContext['createClient']>>
  beforeAll(async () => {
    uploading = await createTestContext({ estimator, env: { FACE_UPLOAD: 'on' } })
    client = await uploading.createClient({ name: 'Wine shop' })
  })
  afterAll(() => uploading.close())

  async function open() {
    const browser = testBrowser(uploading)
    const { page } = await browser.open({ client_id: client.id, state: 'st' })
    return { browser, page }
  }

  test('frames with a median of 30 pass 18; each still photo is read in both views', async () => {
    const { browser, page } = await open()
    expect(callback(await postFrames(browser, page.action('/methods/face'), page.csrf!, ['face:29', 'face:30', 'face:45']))).toBeDefined()
    expect(estimator.views).toEqual(['both', 'both', 'both'])
  })

  test('an estimate inside the buffer fails with a plain reason, the way back, and no second try at the face', async () => {
    const { browser, page } = await open()
    const failed = await postFrames(browser, page.action('/methods/face'), page.csrf!, ['face:25'])
    const html = await failed.text()
    expect(html).toContain('The face check cannot place you')
    expect(html).not.toContain('Check with your face')
    expect(backLink(html)?.href).toBe('https://shop.example/')
  })

  test.each([
    ['none', 'We could not see a face'],
    ['two', 'more than one face'],
  ])('a frame with %s fails with a reason the visitor can act on', async (frame, message) => {
    const { browser, page } = await open()
    const failed = await postFrames(browser, page.action('/methods/face'), page.csrf!, [frame])
    expect(failed.status).toBe(200)
    const html = await failed.text()
    expect(html).toContain(message)
    expect(html).toContain('4 attempts left')
  })

  test('an unreadable picture, no picture, or too many pictures is 400 and no attempt', async () => {
    const { browser, page } = await open()
    const action = page.action('/methods/face')
    for (const frames of [['garbage'], [], Array(MAX_FRAMES + 1).fill('face:40')]) {
      const response = await postFrames(browser, action, page.csrf!, frames)
      expect(response.status).toBe(400)
      const html = await response.text()
      expect(html).toContain('could not be read')
      expect(backLink(html)?.href).toBe('https://shop.example/')
    }
    const still = await readPage(await postFrames(browser, action, page.csrf!, ['none']))
    expect(still.html).toContain('attempts left')
  })
})
