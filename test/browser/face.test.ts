import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import type { Browser, Page } from 'playwright-core'
import { createClient } from '../../src/oauth/clients.ts'
import { closeUpJpeg } from '../estimator/sample-photos.ts'
import { basic, queryRows } from '../helpers.ts'
import { hasChromium, launchChromium, startTestServer, type RunningServer } from './chromium.ts'

/**
 * The face check end to end: Chromium's fake camera plays a real photo (a close-up cut from the sample
 * photos) into getUserMedia, the page's script captures frames, the server's real estimator decides.
 * The default fake device (a moving test pattern, no face) must fail and stay on the page.
 */
// The shop is a real little server on this machine, so the visitor's browser lands somewhere real.
const shopServer = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('<!doctype html><title>Shop</title><h1>Back at the shop</h1>', { headers: { 'content-type': 'text/html' } }) })
const SHOP_CALLBACK = `http://127.0.0.1:${shopServer.port}/callback`
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const FAKE_MEDIA = ['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream']

const videoDir = mkdtempSync(join(tmpdir(), 'ofage-fake-camera-'))
let running: RunningServer
let faceCamera: Browser
let patternCamera: Browser
let noCamera: Browser
let shop: { id: string; secret: string }
let adultJpeg: Uint8Array
/** When this file began: the privacy check looks only at files written after it, by what runs here. */
let started = 0

beforeAll(async () => {
  if (!hasChromium) return
  started = Date.now()
  // The upload fallback is tested here, and today's capture script hands its frames over through it.
  running = await startTestServer({ FACE_CHECK: '1', FACE_UPLOAD: 'on' }, { estimator: true })
  const created = await createClient(running.services.deps, { name: 'Production shop', redirectUris: [SHOP_CALLBACK] })
  shop = { id: created.client.id, secret: created.secret }
  // An MJPEG file is JPEG frames one after another; Chromium's fake camera plays it in a loop.
  adultJpeg = await closeUpJpeg('olderLooking')
  const video = join(videoDir, 'adult.mjpeg')
  writeFileSync(video, Buffer.concat(Array.from({ length: 10 }, () => Buffer.from(adultJpeg))))
  writeFileSync(join(videoDir, 'selfie.jpg'), adultJpeg)
  faceCamera = await launchChromium([...FAKE_MEDIA, `--use-file-for-fake-video-capture=${video}`])
  patternCamera = await launchChromium(FAKE_MEDIA)
  noCamera = await launchChromium()
  await running.services.deps.estimator!.ready
}, 120_000)

afterAll(async () => {
  if (!hasChromium) return
  await Promise.all([faceCamera?.close(), patternCamera?.close(), noCamera?.close()])
  await running?.stop()
  await shopServer.stop(true)
  rmSync(videoDir, { recursive: true, force: true })
})

async function openPage(browser: Browser, viewport: { width: number; height: number }, state: string): Promise<Page> {
  const context = await browser.newContext({ viewport })
  await context.grantPermissions(['camera'], { origin: running.baseUrl })
  const page = await context.newPage()
  await page.goto(`${running.baseUrl}/?${new URLSearchParams({ client_id: shop.id, redirect_uri: SHOP_CALLBACK, state, age_required: '18' })}`)
  return page
}

async function checkWithCamera(page: Page) {
  await page.getByRole('button', { name: 'Start camera' }).click()
  await page.getByText('Look into the camera').waitFor()
  await page.getByRole('button', { name: 'Check my age' }).click()
}

async function exchange(code: string, state: string) {
  const response = await fetch(`${running.baseUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic(shop.id, shop.secret) },
    body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: SHOP_CALLBACK, state }),
  })
  expect(response.status).toBe(200)
  return (await response.json()) as { access_token: string; transaction_id: string }
}

describe.skipIf(!hasChromium)('the face check in headless Chromium', () => {
  test.each([
    ['desktop', { width: 1280, height: 900 }],
    ['phone', { width: 390, height: 844 }],
  ])('%s: camera → frames → real estimate → redirect with code → biometric token', async (name, viewport) => {
    const page = await openPage(faceCamera, viewport, `face-${name}`)
    expect(await page.textContent('body')).toContain('never stored')
    await checkWithCamera(page)
    await page.waitForURL(`${SHOP_CALLBACK}**`, { timeout: 30_000 })
    const callback = new URL(page.url())
    expect(callback.searchParams.get('state')).toBe(`face-${name}`)
    const token = await exchange(callback.searchParams.get('code')!, `face-${name}`)
    const [audit] = await queryRows<{ method: string; method_class: string; age_buffer: number; age_over: number }>(
      running.services.deps.db,
      sql`select method, method_class, age_buffer, age_over from audit_logs where transaction_id = ${token.transaction_id}`,
    )
    expect(audit).toEqual({ method: 'face', method_class: 'biometric', age_buffer: 7, age_over: 18 })
    await page.context().close()
  }, 60_000)

  test('usage counts the face checks as biometric', async () => {
    const usage = await (await fetch(`${running.baseUrl}/api/oauth/usage`, { headers: { authorization: basic(shop.id, shop.secret) } })).json()
    expect(usage.usage).toMatchObject({ total_verifications: 2, biometric_count: 2, age_only_count: 0 })
  })

  test('a test pattern with no face fails, says why, and stays on the page', async () => {
    const page = await openPage(patternCamera, { width: 1280, height: 900 }, 'pattern')
    await checkWithCamera(page)
    await page.getByRole('alert').waitFor({ timeout: 30_000 })
    expect(await page.getByRole('alert').textContent()).toContain('We could not see a face')
    expect(page.url().startsWith(running.baseUrl)).toBe(true)
    expect(await page.getByRole('button', { name: 'Start camera' }).isVisible()).toBe(true)
    await page.context().close()
  }, 60_000)

  test('without a camera the page falls back to a selfie upload, which works', async () => {
    const page = await openPage(noCamera, { width: 390, height: 844 }, 'upload')
    await page.getByRole('button', { name: 'Start camera' }).click()
    await page.getByText('The camera could not be started').waitFor()
    // From a file in the test's own folder, so the browser driver writes no copy of the picture anywhere.
    await page.getByLabel('Take a selfie').setInputFiles(join(videoDir, 'selfie.jpg'))
    await page.getByRole('button', { name: 'Check my age' }).click()
    await page.waitForURL(`${SHOP_CALLBACK}**`, { timeout: 30_000 })
    await page.context().close()
  }, 60_000)

  test('axe-core finds no accessibility violations on the face check page', async () => {
    const page = await openPage(noCamera, { width: 1280, height: 900 }, 'a11y')
    await page.evaluate(axeSource)
    const violations = await page.evaluate(async () => {
      const result = await (window as unknown as { axe: { run(): Promise<{ violations: { id: string }[] }> } }).axe.run()
      return result.violations.map((v) => v.id)
    })
    expect(violations).toEqual([])
    await page.context().close()
  }, 60_000)

  test.skipIf(!process.env.UPDATE_SCREENSHOTS)('screenshots of the face check for docs/ (UPDATE_SCREENSHOTS=1)', async () => {
    mkdirSync('docs/screenshots', { recursive: true })
    for (const [name, viewport] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
      const page = await openPage(patternCamera, viewport, `shot-${name}`)
      await page.screenshot({ path: `docs/screenshots/face-${name}.png`, fullPage: true })
      await checkWithCamera(page)
      await page.getByRole('alert').waitFor({ timeout: 30_000 })
      await page.screenshot({ path: `docs/screenshots/face-failed-${name}.png`, fullPage: true })
      await page.context().close()
    }
  }, 60_000)

  test('nothing of the pictures is kept: no image bytes in the database or in any file written', async () => {
    // A JPEG starts with FF D8 FF; base64 of that is "/9j/". Look in every text column of every table.
    const tables = await queryRows<{ table_name: string }>(running.services.deps.db, sql`select table_name from information_schema.tables where table_schema = 'public'`)
    for (const { table_name } of tables) {
      const rows = await queryRows<Record<string, unknown>>(running.services.deps.db, sql.raw(`select * from "${table_name}"`))
      const text = JSON.stringify(rows)
      expect(text).not.toContain('/9j/')
      expect(text).not.toContain('\\u00ff\\u00d8')
    }
    // Files: nothing written in the temp folder or the working tree since this file began holds the
    // picture's bytes, apart from the test's own fake-camera input and Chromium's profile.
    const signature = Buffer.from(adultJpeg.subarray(600, 664))
    const written = [tmpdir(), process.cwd()].flatMap((dir) => recentFiles(dir, started))
    expect(written.length).toBeGreaterThan(0)
    const holding = written.filter((file) => !file.startsWith(videoDir) && !/playwright|chromium/i.test(file) && readFileSync(file).includes(signature))
    expect(holding).toEqual([])
  })
})

/** Files under `dir` modified since `since`, skipping node_modules, .git and anything unreadable. */
function recentFiles(dir: string, since: number, depth = 0): string[] {
  if (depth > 4) return []
  const found: string[] = []
  let names: string[] = []
  try {
    names = readdirSync(dir)
  } catch {
    return found
  }
  for (const name of names) {
    if (name === 'node_modules' || name === '.git' || name === 'dist') continue
    const path = join(dir, name)
    try {
      const stat = statSync(path)
      if (stat.isDirectory()) found.push(...recentFiles(path, since, depth + 1))
      else if (stat.isFile() && stat.mtimeMs >= since && stat.size < 50 * 1024 * 1024) found.push(path)
    } catch {}
  }
  return found
}
