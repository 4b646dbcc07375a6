import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDevIssuer } from '../../src/credentials/dev/issuer.ts'
import type { AgeEstimator, FrameAnalysis } from '../../src/estimator/types.ts'
import { findClient, updateClient } from '../../src/clients/registry.ts'
import { createTestContext, json, type TestContext } from '../helpers.ts'
import { origin, passkeyFlows, type Browser, type Client } from '../passkeys/flows.ts'
import { callback, testBrowser } from './browser.ts'

/**
 * Each client chooses the ways it accepts (issue 22, item 1): the page offers only those, a post to
 * another is refused before anything is read, and a re-verification (age pass, passkey) counts only when
 * the client accepts the way the original check was made. And, item 4: a face the check cannot place is
 * pointed to the other ways this client takes, by name.
 */

/**
 * Still photos only (FACE_UPLOAD=on): "face:AGE#N" is one frontal face of that age (N only makes the bytes
 * unique, as two photos always are). Counts what it analysed.
 */
class StillEstimator implements AgeEstimator {
  readonly ready = Promise.resolve()
  analysed = 0
  async analyze(image: Uint8Array): Promise<FrameAnalysis> {
    this.analysed++
    const age = Number(new TextDecoder().decode(image).replace('face:', '').split('#')[0])
    return { width: 640, height: 480, faces: [{ age, faceScore: 0.9, box: { x: 100, y: 50, width: 220, height: 260 }, sharpness: 120 }], ms: 1 }
  }
  async close() {}
}

let ctx: TestContext
let estimator: StillEstimator
let flows: ReturnType<typeof passkeyFlows>
/** Sandbox clients (their check is simulated, with the method class the test picks). */
let everyWay: Client
let noFace: Client
let faceAndPass: Client
let noPasskey: Client

beforeAll(async () => {
  const issuer = await createDevIssuer(new Date())
  const dir = mkdtempSync(join(tmpdir(), 'ofage-methods-'))
  writeFileSync(join(dir, 'trust-list.pem'), issuer.rootCertificate)
  estimator = new StillEstimator()
  ctx = await createTestContext({ estimator, env: { FACE_UPLOAD: 'on', CREDENTIAL_TRUST_LIST: join(dir, 'trust-list.pem') } })
  everyWay = await ctx.createClient({ name: 'Every way', sandbox: true })
  noFace = await ctx.createClient({ name: 'No face', sandbox: true, methods: ['credential', 'passkey', 'age_pass'] })
  faceAndPass = await ctx.createClient({ name: 'Face and pass', sandbox: true, methods: ['face', 'age_pass'] })
  noPasskey = await ctx.createClient({ name: 'No passkey', sandbox: true, methods: ['face', 'credential', 'age_pass'] })
  flows = passkeyFlows(ctx, everyWay)
})
afterAll(() => ctx.close())

/** A browser that passed a sandbox check made by `methodClass` (biometric: a face; age_only: a digital ID). */
async function provenBrowser(methodClass: 'biometric' | 'age_only'): Promise<Browser> {
  const browser = testBrowser(ctx)
  const { page } = await browser.open({ client_id: everyWay.id, state: 'st' })
  const done = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: methodClass })
  expect(callback(done)).toBeDefined()
  return browser
}

/** Opens `client`'s page in `browser` and tries to continue with its age pass: the callback, if it counted. */
async function continueWithPass(browser: Browser, client: Client) {
  const { page } = await browser.open({ client_id: client.id, state: 'st' })
  const response = await browser.post(page.action('/methods/sandbox').replace(/\/methods\/sandbox.*/, '/continue'), { csrf: page.csrf! })
  return { offered: page.html.includes('This browser was verified recently'), back: callback(response) }
}

describe('the setting', () => {
  test('every way by default, stored in the canonical order, and shown with the client', async () => {
    expect((await findClient(ctx.deps.db, everyWay.id))?.methods).toEqual(['face', 'credential', 'passkey', 'age_pass'])
    const changed = await updateClient(ctx.deps.db, faceAndPass.id, { methods: ['age_pass', 'face'] })
    expect(changed?.methods).toEqual(['face', 'age_pass'])
  })

  test('an empty list, an unknown way or a misspelling is refused with the list of known ways, and nothing changes', async () => {
    for (const methods of [[], [''], ['face', 'selfie'], ['Face']]) {
      await expect(updateClient(ctx.deps.db, noFace.id, { methods })).rejects.toThrow(/methods must (name at least one of|be among) face, credential, passkey, age_pass/)
    }
    expect((await findClient(ctx.deps.db, noFace.id))?.methods).toEqual(['credential', 'passkey', 'age_pass'])
  })

  test('the database itself refuses an empty or unknown list (a row written around the service)', async () => {
    for (const value of ["array[]::text[]", "array['face', 'video']::text[]"]) {
      const written = (async () => ctx.deps.db.execute(sql.raw(`update clients set methods = ${value} where id = '${noFace.id}'`)))()
      await expect(written).rejects.toThrow()
    }
  })
})

describe('a live client that refuses the face check', () => {
  let live: Client
  beforeAll(async () => {
    live = await ctx.createClient({ name: 'ID only shop', methods: ['credential'] })
  })

  test('its page never offers the face check, and offers the digital ID and no passkey', async () => {
    const { page } = await testBrowser(ctx).open({ client_id: live.id, state: 'st' })
    expect(page.html).not.toContain('Check with your face')
    expect(page.html).not.toContain('face-capture.js')
    expect(page.html).toContain('/methods/credential')
    expect(page.html).not.toContain('passkey.js')
  })

  test('attack: frames posted straight to the face method with a valid CSRF token are refused unread, and no code is issued', async () => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: live.id, state: 'st' })
    const action = page.action('/methods/credential').replace('/methods/credential', '/methods/face')
    const before = estimator.analysed
    const form = new FormData()
    form.set('csrf', page.csrf!)
    form.append('frame', new File(['face:60'], 'frame.jpg', { type: 'image/jpeg' }))
    const response = await browser.request(action, { method: 'POST', body: form, headers: { 'x-csrf-token': page.csrf! } })
    expect({ status: response.status, body: await response.text() }).toMatchObject({ status: 404 })
    expect(response.headers.get('location')).toBeNull()
    expect(estimator.analysed).toBe(before)
    const challenge = await browser.post(action.replace('/methods/face', '/methods/face/challenge'), { csrf: page.csrf! })
    expect({ status: challenge.status, body: await challenge.text() }).toMatchObject({ status: 404 })
  })

  test('the same client accepting the face again is offered it again', async () => {
    await updateClient(ctx.deps.db, live.id, { methods: ['face', 'credential'] })
    const { page } = await testBrowser(ctx).open({ client_id: live.id, state: 'st' })
    expect(page.html).toContain('Check with your face')
  })
})

describe('re-verification counts only for a client that accepts the way of the original check', () => {
  test('a face-proven age pass is not honoured by a client that refuses the face check: not offered, and /continue issues no code', async () => {
    const browser = await provenBrowser('biometric')
    expect(await continueWithPass(browser, noFace)).toEqual({ offered: false, back: undefined })
    const accepted = await continueWithPass(browser, faceAndPass)
    expect(accepted.offered).toBe(true)
    expect(accepted.back).toBeDefined()
  })

  test('an ID-proven age pass is honoured where the digital ID and age passes are accepted, and not where age passes are not', async () => {
    const browser = await provenBrowser('age_only')
    expect((await continueWithPass(browser, noFace)).back).toBeDefined()
    const strict = await ctx.createClient({ name: 'Check every time', sandbox: true, methods: ['face', 'credential', 'passkey'] })
    expect(await continueWithPass(browser, strict)).toEqual({ offered: false, back: undefined })
    // Face-proven passes are not honoured by a client that takes faces only, either.
    expect(await continueWithPass(browser, faceAndPass)).toEqual({ offered: false, back: undefined })
  })

  test('a passkey saved after a face check is refused (method_not_accepted) by a client that refuses the face check, and used where it is accepted', async () => {
    const browser = await provenBrowser('biometric')
    const { authenticator } = await flows.savePasskey(browser)
    const refused = await flows.usePasskey(authenticator, { client: noFace })
    expect(refused.response.status).toBe(200)
    expect(refused.body).toMatchObject({ outcome: 'refused', error: 'method_not_accepted' })
    expect(refused.body.message).toContain('does not accept this passkey')
    const used = await flows.usePasskey(authenticator, { client: everyWay })
    expect(used.body).toMatchObject({ outcome: 'approved' })
  })

  test('a client that refuses passkeys shows no passkey panel, and a script asking anyway is told so', async () => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: noPasskey.id, state: 'st' })
    expect(page.html).not.toContain('passkey.js')
    const path = page.action('/methods/sandbox').replace(/\/methods\/sandbox.*/, '/passkey/options')
    const response = await flows.postJson(browser, path, { csrf: page.csrf!, purpose: 'verify' })
    expect(await json(response)).toMatchObject({ outcome: 'refused', error: 'method_not_accepted' })
    // A ceremony started elsewhere and finished here is refused the same way.
    const proven = await provenBrowser('biometric')
    const { authenticator } = await flows.savePasskey(proven)
    const started = await json(await flows.postJson(browser, path, { csrf: page.csrf!, purpose: 'delete' }))
    const assertion = authenticator.assert(started.options, { origin })
    const posted = await flows.postJson(browser, path.replace('/passkey/options', '/passkey'), { csrf: page.csrf!, response: assertion })
    expect(await json(posted)).toMatchObject({ outcome: 'refused', error: 'method_not_accepted' })
  })
})

describe('a face the check cannot place is pointed to the other ways the client takes', () => {
  let photos = 0
  async function refusedAt(client: Client, age: number) {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: client.id, state: 'st' })
    const form = new FormData()
    form.set('csrf', page.csrf!)
    form.append('frame', new File([`face:${age}#${photos++}`], 'frame.jpg', { type: 'image/jpeg' }))
    const response = await browser.request(page.action('/methods/face'), { method: 'POST', body: form, headers: { accept: 'application/json' } })
    return json(response)
  }

  test('digital ID and passkey, by name, for a client taking both; the face check closed, no retry', async () => {
    const shop = await ctx.createClient({ name: 'Wine shop' })
    const body = await refusedAt(shop, 29 - 2)
    expect(body).toMatchObject({ outcome: 'refused', retry: false })
    expect(body.message).toContain('The face check cannot place you')
    expect(body.message).toContain('You can still use a digital ID or a passkey you saved earlier here.')
  })

  test('only the digital ID for a client refusing passkeys; "no other way" for a client taking only faces', async () => {
    const idToo = await ctx.createClient({ name: 'Bar', methods: ['face', 'credential'] })
    expect((await refusedAt(idToo, 20)).message).toContain('You can still use a digital ID here.')
    const faceOnly = await ctx.createClient({ name: 'Cinema', methods: ['face'] })
    const body = await refusedAt(faceOnly, 20)
    expect(body.message).toContain('There is no other way to confirm your age here.')
    expect(body.message).not.toContain('digital ID')
    expect(body.message).not.toContain('passkey')
  })
})
