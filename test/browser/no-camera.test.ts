import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import type { AgeEstimator } from '../../src/estimator/types.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { axeViolations, hasChromium, launchChromium } from './chromium.ts'

/**
 * The face check in a Chromium with no camera at all (no fake device): every state of the page has a way
 * forward or a link back (issue 32, item 4). A production client whose only way is the face check was a
 * dead end: "You can use another way, or go back to Wine shop", with neither offered. The estimator is
 * never reached here, so one that refuses to be asked stands in for the models.
 */
const neverAsked: AgeEstimator = {
  ready: Promise.resolve(),
  analyze: () => Promise.reject(new Error('a page without a camera sent a frame')),
  close: () => Promise.resolve(),
}

let ctx: TestContext
let server: ReturnType<typeof Bun.serve>
let baseUrl: string
let browser: Browser
let facesOnly: string
let facesAndPasskeys: string

beforeAll(async () => {
  if (!hasChromium) return
  ctx = await createTestContext({ estimator: neverAsked, env: { FACE_CHECK: '1' } })
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => ctx.handle(rebase(request)) })
  // By name: a passkey (WebAuthn) needs an RP ID that is a domain, so the passkey panel shows on localhost only.
  baseUrl = `http://localhost:${server.port}`
  facesOnly = (await ctx.createClient({ name: 'Wine shop', methods: ['face'], homeUrl: 'https://wine.example/' })).id
  facesAndPasskeys = (await ctx.createClient({ name: 'Bar', methods: ['face', 'passkey'] })).id
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  await server?.stop(true)
  await ctx?.close()
})

/** The test context answers for its own PUBLIC_URL: requests to the listening port are handed to it as such. */
function rebase(request: Request): Request {
  const url = new URL(request.url)
  return new Request(`${ctx.config.publicUrl}${url.pathname}${url.search}`, request)
}

async function openPage(clientId: string, options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: options.javaScriptEnabled ?? true })
  const page = await context.newPage()
  await page.goto(`${baseUrl}/?${new URLSearchParams({ client_id: clientId, redirect_uri: 'https://shop.example/callback', state: 'st', age_required: '18' })}`)
  return page
}

describe.skipIf(!hasChromium)('the face check on a device without a camera', () => {
  test('a site whose only way is the face check says so as the page opens, before anything is asked, and links back to the site', async () => {
    const page = await openPage(facesOnly)
    const said = page.getByText('This site accepts only the face check, and it needs a camera that this device does not offer. Open this page on a phone with a camera, or go back to Wine shop.')
    await said.waitFor({ timeout: 10_000 })
    const back = page.getByRole('link', { name: 'Back to Wine shop' })
    expect(await back.isVisible()).toBe(true)
    expect(await back.getAttribute('href')).toBe('https://wine.example/')
    // Nothing left to press that cannot work here.
    expect(await page.getByRole('button', { name: 'Start camera' }).isVisible()).toBe(false)
    expect(await page.getByRole('button', { name: 'Check my age' }).isVisible()).toBe(false)
    expect(await axeViolations(page)).toEqual([])
    await page.context().close()
  }, 30_000)

  test('with another way on the page (a passkey), the words point to it, and the way back is there too', async () => {
    const page = await openPage(facesAndPasskeys)
    await page.getByText('The face check needs a camera. You can use another way, or go back to Bar.').waitFor({ timeout: 10_000 })
    expect(await page.getByRole('link', { name: 'Back to Bar' }).getAttribute('href')).toBe('https://shop.example/')
    expect(await page.getByRole('button', { name: /passkey/i }).filter({ visible: true }).count()).toBeGreaterThan(0)
    await page.context().close()
  }, 30_000)

  test('without JavaScript the same words and the way back are on the page', async () => {
    const page = await openPage(facesOnly, { javaScriptEnabled: false })
    // Playwright's text and role locators skip <noscript>, whose content is what shows here: read it by CSS.
    const shown = page.locator('noscript')
    expect(await shown.locator('p').first().isVisible()).toBe(true)
    expect(await shown.locator('p').first().textContent()).toStartWith('This site accepts only the face check')
    expect(await shown.locator('a.back').isVisible()).toBe(true)
    expect(await shown.locator('a.back').getAttribute('href')).toBe('https://wine.example/')
    expect(await page.locator('[data-no-camera]').isVisible()).toBe(false)
    await page.context().close()
  }, 30_000)
})
