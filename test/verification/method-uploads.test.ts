import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { AgeEstimator } from '../../src/estimator/types.ts'
import { MAX_MULTIPART_BYTES } from '../../src/lib/strict-request.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { testBrowser } from './browser.ts'

/**
 * Issue 10: a face upload (up to 24 MiB) must be refused before its body is read unless it comes from a
 * live session of this browser with a plausible token, and only a few may be read at once. Each upload
 * here is a stream that sends a first chunk and then stalls, as a large upload still on its way does: a
 * server that reads it before deciding never answers.
 */

/** The face method is offered only where an estimator runs; none of these posts gets as far as asking it. */
const idleEstimator: AgeEstimator = {
  ready: Promise.resolve(),
  analyze: () => Promise.reject(new Error('the estimator is not reached in these tests')),
  close: async () => {},
}

const CHUNK = 64 * 1024
/** Chunks sent before the upload stalls: more than the request's wrappers buffer ahead (one or two). */
const CHUNKS_BEFORE_STALL = 8
/** What the upload says it weighs: a real capture's size, under every bound, so that only the checks refuse it. */
const DECLARED_BYTES = 1024 * 1024

/**
 * An upload that sends CHUNKS_BEFORE_STALL chunks, then nothing more. A server that stalls with it has
 * taken every chunk: it was reading the body. `pulledBytes` counts what the server side asked for.
 */
function stalledUpload() {
  let pulledBytes = 0
  let fail!: (cause: Error) => void
  let stalled!: () => void
  const reading = new Promise<void>((resolve) => (stalled = resolve))
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      fail = (cause) => controller.error(cause)
    },
    pull(controller) {
      if (pulledBytes < CHUNKS_BEFORE_STALL * CHUNK) {
        controller.enqueue(new Uint8Array(CHUNK).fill(0x2d))
        pulledBytes += CHUNK
        return
      }
      stalled()
      return new Promise<void>(() => {})
    },
  })
  return {
    body,
    /** Resolves once the server has read as far as the stall. */
    reading,
    /** Ends the upload with an error, as when the connection drops. */
    fail,
    get pulledBytes() {
      return pulledBytes
    },
  }
}

type Browser = ReturnType<typeof testBrowser>
type Upload = ReturnType<typeof stalledUpload>

function postUpload(browser: Browser, path: string, upload: Upload, headers: Record<string, string> = {}) {
  return browser.request(path, {
    method: 'POST',
    body: upload.body,
    duplex: 'half',
    headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(DECLARED_BYTES), accept: 'application/json', ...headers },
  } as RequestInit)
}

/** The answer, or "no answer" after two seconds: a server that waits for the whole body never answers. */
function promptly(answer: Promise<Response>): Promise<Response | 'no answer'> {
  return Promise.race([answer, Bun.sleep(2000).then(() => 'no answer' as const)])
}

async function openSession(ctx: TestContext, options: { sandbox?: boolean } = {}) {
  const client = await ctx.createClient({ name: 'Wine shop', sandbox: options.sandbox ?? false })
  const browser = testBrowser(ctx)
  const { page } = await browser.open({ client_id: client.id, state: 'st' })
  const session = /\/s\/[A-Za-z0-9_-]+/.exec(page.html)![0]
  return { browser, csrf: page.csrf!, session, facePath: `${session}/methods/face` }
}

let ctx: TestContext
beforeAll(async () => {
  ctx = await createTestContext({ estimator: idleEstimator })
})
afterAll(() => ctx.close())

describe('a face upload is refused before its body is read', () => {
  type Case = { status: number; post: (upload: Upload) => Promise<Response> }
  const cases: [string, () => Promise<Case>][] = [
    ['to a session that does not exist', async () => ({ status: 400, post: (upload) => postUpload(testBrowser(ctx), '/s/nosuchsession/methods/face', upload) })],
    [
      "to another browser's session",
      async () => {
        const victim = await openSession(ctx)
        const other = await openSession(ctx)
        return { status: 400, post: (upload) => postUpload(other.browser, victim.facePath, upload, { 'x-csrf-token': victim.csrf }) }
      },
    ],
    [
      'from a foreign Origin',
      async () => {
        const { browser, csrf, facePath } = await openSession(ctx)
        return { status: 403, post: (upload) => postUpload(browser, facePath, upload, { 'x-csrf-token': csrf, origin: 'https://evil.example' }) }
      },
    ],
    [
      'with a wrong x-csrf-token header',
      async () => {
        const { browser, facePath } = await openSession(ctx)
        return { status: 403, post: (upload) => postUpload(browser, facePath, upload, { 'x-csrf-token': 'wrong' }) }
      },
    ],
    [
      'for a method the client is not offered',
      async () => {
        const { browser, csrf, facePath } = await openSession(ctx, { sandbox: true })
        return { status: 404, post: (upload) => postUpload(browser, facePath, upload, { 'x-csrf-token': csrf }) }
      },
    ],
    [
      'to a session locked after five failed attempts',
      async () => {
        const { browser, csrf, facePath } = await openSession(ctx)
        // The first challenge is free; each one drawn while another is unanswered costs an attempt.
        for (let i = 0; i < 6; i++) await browser.post(`${facePath}/challenge`, { csrf })
        expect((await browser.post(`${facePath}/challenge`, { csrf })).status).toBe(404)
        return { status: 200, post: (upload) => postUpload(browser, facePath, upload, { 'x-csrf-token': csrf }) }
      },
    ],
    [
      'without a Content-Length (chunked)',
      async () => {
        const { browser, csrf, facePath } = await openSession(ctx)
        return {
          status: 400,
          post: (upload) =>
            browser.request(facePath, {
              method: 'POST',
              body: upload.body,
              duplex: 'half',
              headers: { 'content-type': 'multipart/form-data; boundary=x', 'x-csrf-token': csrf },
            } as RequestInit),
        }
      },
    ],
    [
      'declaring more than the multipart bound',
      async () => {
        const { browser, csrf, facePath } = await openSession(ctx)
        return { status: 400, post: (upload) => postUpload(browser, facePath, upload, { 'x-csrf-token': csrf, 'content-length': String(MAX_MULTIPART_BYTES + 1) }) }
      },
    ],
  ]

  test.each(cases)('%s', async (_, setUp) => {
    const { status, post } = await setUp()
    const upload = stalledUpload()
    const answer = await promptly(post(upload))
    expect(answer === 'no answer' ? answer : answer.status).toBe(status)
    expect(upload.pulledBytes).toBeLessThanOrEqual(2 * CHUNK)
  })

  test("a live session's upload without the header is read, and its token checked in the body (the no-JS form)", async () => {
    const { browser, csrf, facePath } = await openSession(ctx)
    const wrong = new FormData()
    wrong.set('csrf', 'wrong')
    wrong.append('frame', new File(['face:40'], 'f.jpg', { type: 'image/jpeg' }))
    expect((await browser.request(facePath, { method: 'POST', body: wrong })).status).toBe(403)
    const right = new FormData()
    right.set('csrf', csrf)
    right.append('frame', new File(['face:40'], 'f.jpg', { type: 'image/jpeg' }))
    const checked = await browser.request(facePath, { method: 'POST', body: right })
    expect(checked.status).toBe(400)
    expect(await checked.text()).toContain('needs the live camera')
  })
})

describe('concurrent uploads', () => {
  let limited: TestContext
  beforeAll(async () => {
    // 2 × FACE_WORKERS + FACE_QUEUE = 4 uploads read or analysed at once, 2 from one address; a body has
    // one second to arrive. Addresses come from X-Forwarded-For, as behind the operator's proxy.
    limited = await createTestContext({ estimator: idleEstimator, env: { FACE_WORKERS: '1', FACE_QUEUE: '2', FACE_UPLOAD_SECONDS: '1', TRUST_PROXY: '1' } })
  })
  afterAll(() => limited.close())

  const from = (address: string, csrf: string) => ({ 'x-csrf-token': csrf, 'x-forwarded-for': address })

  /** A small upload gets a place: it is read and checked (and refused, having no live capture). */
  async function expectReadAndChecked(browser: Browser, facePath: string, headers: Record<string, string>, csrf: string) {
    const form = new FormData()
    form.set('csrf', csrf)
    form.append('frame', new File(['face:40'], 'f.jpg', { type: 'image/jpeg' }))
    const next = await browser.request(facePath, { method: 'POST', body: form, headers })
    expect(next.status).toBe(400)
    expect(await next.text()).toContain('needs the live camera')
  }

  test('beyond 2 × FACE_WORKERS + FACE_QUEUE at once are answered 503 with Retry-After, unread; a finished upload frees its place', async () => {
    const { browser, csrf, facePath } = await openSession(limited)
    const held = [stalledUpload(), stalledUpload(), stalledUpload(), stalledUpload()]
    const heldAnswers = held.map((upload, i) => postUpload(browser, facePath, upload, from(i < 2 ? '10.0.0.1' : '10.0.0.2', csrf)))
    await Promise.all(held.map((upload) => upload.reading))

    const fifth = stalledUpload()
    const refused = await promptly(postUpload(browser, facePath, fifth, from('10.0.0.3', csrf)))
    if (refused === 'no answer') throw new Error('the fifth upload was not answered')
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('5')
    expect(await refused.json()).toMatchObject({ outcome: 'refused', retry: true })
    expect(fifth.pulledBytes).toBeLessThanOrEqual(2 * CHUNK)

    for (const upload of held) upload.fail(new Error('connection lost'))
    expect((await Promise.all(heldAnswers)).map((answer) => answer.status)).toEqual([400, 400, 400, 400])
    await expectReadAndChecked(browser, facePath, from('10.0.0.3', csrf), csrf)
  })

  test('one address holds at most half the places: its third upload is refused unread while another address is read', async () => {
    const { browser, csrf, facePath } = await openSession(limited)
    const held = [stalledUpload(), stalledUpload()]
    const heldAnswers = held.map((upload) => postUpload(browser, facePath, upload, from('10.0.1.1', csrf)))
    await Promise.all(held.map((upload) => upload.reading))
    const third = stalledUpload()
    const refused = await promptly(postUpload(browser, facePath, third, from('10.0.1.1', csrf)))
    expect(refused === 'no answer' ? refused : refused.status).toBe(503)
    expect(third.pulledBytes).toBeLessThanOrEqual(2 * CHUNK)
    const elsewhere = stalledUpload()
    const elsewhereAnswer = postUpload(browser, facePath, elsewhere, from('10.0.1.2', csrf))
    await elsewhere.reading
    for (const upload of [...held, elsewhere]) upload.fail(new Error('connection lost'))
    await Promise.all([...heldAnswers, elsewhereAnswer])
  })

  test('an upload trickled in slower than FACE_UPLOAD_SECONDS is refused and gives its place back', async () => {
    const { browser, csrf, facePath } = await openSession(limited)
    const slow = [stalledUpload(), stalledUpload()]
    const started = performance.now()
    const answers = await Promise.all(slow.map((upload) => postUpload(browser, facePath, upload, from('10.0.2.1', csrf))))
    expect(answers.map((answer) => answer.status)).toEqual([400, 400])
    expect(performance.now() - started).toBeLessThan(3_000)
    expect(await answers[0]!.text()).toContain('invalid_request')
    // The same address has its places again, although the slow bodies never finished.
    await expectReadAndChecked(browser, facePath, from('10.0.2.1', csrf), csrf)
    for (const upload of slow) upload.fail(new Error('connection lost'))
  })
})
