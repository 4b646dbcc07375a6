import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { createLocalJWKSet, jwtVerify } from 'jose'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { createClient } from '../../src/clients/registry.ts'
import { basic } from '../helpers.ts'
import { axeViolations, hasChromium, launchChromium, startTestServer, updatingScreenshots, type RunningServer } from './chromium.ts'

/** The whole flow in headless Chromium against a real listening server. */
const SHOP_CALLBACK = 'https://shop.example/callback'

let running: RunningServer
let browser: Browser
let baseUrl: string
let shop: { id: string; secret: string }

beforeAll(async () => {
  if (!hasChromium) return
  running = await startTestServer({ OFAGE_DEMO: '1' })
  baseUrl = running.baseUrl
  const created = await createClient(running.services.deps, { name: 'Shop Example', redirectUris: [SHOP_CALLBACK], sandbox: true })
  shop = { id: created.client.id, secret: created.secret }
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  await running?.stop()
})

/** A page whose shop callback is answered by the test, so the browser lands somewhere real. */
async function newShopPage(context: Browser | BrowserContext = browser, viewport = { width: 1280, height: 900 }) {
  const page = await context.newPage()
  await page.setViewportSize(viewport)
  await page.route(`${SHOP_CALLBACK}**`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title><h1>Back at the shop</h1>' }))
  return page
}

function authorizeUrl(query: Record<string, string>): string {
  return `${baseUrl}/?${new URLSearchParams({ client_id: shop.id, redirect_uri: SHOP_CALLBACK, ...query })}`
}

async function exchange(code: string, state: string) {
  const response = await fetch(`${baseUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic(shop.id, shop.secret) },
    body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: SHOP_CALLBACK, state }),
  })
  expect(response.status).toBe(200)
  return (await response.json()) as { access_token: string; transaction_id: string }
}

async function completeTestForm(page: Page, age: string, method: 'age_only' | 'biometric') {
  await page.getByLabel('Test age').fill(age)
  await page.getByLabel('Test method').selectOption(method)
  await page.getByRole('button', { name: 'Complete test verification' }).click()
}


describe.skipIf(!hasChromium)('the hosted page in headless Chromium', () => {
  test('sandbox flow: page → check → redirect with code and state → exchange → validation by endpoint and locally', async () => {
    const context = await browser.newContext()
    const page = await newShopPage(context)
    await page.goto(authorizeUrl({ state: 'browser-1', age_required: '18' }))
    await page.getByRole('heading', { level: 1 }).waitFor({ state: 'visible' })
    expect(await page.getByRole('heading', { level: 1 }).count()).toBe(1)
    expect(await page.textContent('body')).toContain('Shop Example asks you to confirm that you are 18 or older.')

    // A failed check stays on the page and says why.
    await completeTestForm(page, '16', 'biometric')
    await page.getByRole('alert').waitFor()
    expect(await page.getByRole('alert').textContent()).toContain('did not confirm')
    expect(page.url().startsWith(baseUrl)).toBe(true)

    await completeTestForm(page, '25', 'biometric')
    await page.waitForURL(`${SHOP_CALLBACK}**`)
    const callback = new URL(page.url())
    expect(callback.searchParams.get('state')).toBe('browser-1')
    const token = await exchange(callback.searchParams.get('code')!, 'browser-1')

    const validation = await (await fetch(`${baseUrl}/api/verify/token/${token.access_token}`)).json()
    expect(validation).toMatchObject({ valid: true, age_over: 18, verification_level: 'first_verification', transaction_id: token.transaction_id })
    const jwks = createLocalJWKSet(await (await fetch(`${baseUrl}/api/.well-known/jwks.json`)).json())
    const { payload } = await jwtVerify(token.access_token, jwks, { algorithms: ['RS256'], issuer: baseUrl })
    expect(payload.age_verified).toBe(true)

    // A second visit in the same browser re-verifies without a new check.
    await page.goto(authorizeUrl({ state: 'browser-2', age_required: '21' }))
    await page.getByRole('button', { name: 'Continue as verified' }).click()
    await page.waitForURL(`${SHOP_CALLBACK}**`)
    const again = await exchange(new URL(page.url()).searchParams.get('code')!, 'browser-2')
    const second = await (await fetch(`${baseUrl}/api/verify/token/${again.access_token}`)).json()
    expect(second).toMatchObject({ verification_level: 're_verification', age_over: 21, session_id: validation.session_id })

    const usage = await (await fetch(`${baseUrl}/api/oauth/usage`, { headers: { authorization: basic(shop.id, shop.secret) } })).json()
    expect(usage.usage).toEqual({ total_verifications: 2, age_only_count: 0, biometric_count: 2, reverification_count: 1 })
    await context.close()
  }, 60_000)

  test('the /demo flow works by clicking', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${baseUrl}/demo`)
    await page.getByRole('link', { name: 'Verify I am 18 or older' }).click()
    await page.getByLabel('Test age').waitFor()
    await completeTestForm(page, '19', 'age_only')
    await page.waitForURL(`${baseUrl}/demo/callback**`)
    expect(await page.getByRole('status').textContent()).toContain('Verified: 18 or older.')
    expect(await page.textContent('dl.claims')).toContain('"first_verification"')
    await context.close()
  }, 60_000)

  test('keyboard: the test form is reached in order, with a visible focus', async () => {
    const page = await newShopPage()
    await page.goto(authorizeUrl({ state: 'kb' }))
    const order: string[] = []
    while (order.length < 10 && order.at(-1) !== 'Complete test verification') {
      await page.keyboard.press('Tab')
      order.push(await page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent?.trim() || ''))
    }
    expect(order).toEqual(['test-age', 'test-method', 'Complete test verification'])
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)
    expect(outline).not.toBe('none')
    await page.close()
  }, 60_000)

  test('phone width: nothing overflows sideways and the button is a comfortable target', async () => {
    const page = await newShopPage(browser, { width: 360, height: 740 })
    await page.goto(authorizeUrl({ state: 'phone' }))
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    expect(overflow).toBeLessThanOrEqual(0)
    const box = await page.getByRole('button', { name: 'Complete test verification' }).boundingBox()
    expect(box!.height).toBeGreaterThanOrEqual(44)
    await page.close()
  }, 60_000)

  test('axe-core finds no accessibility violations on the page, an error page, and the demo', async () => {
    const context = await browser.newContext()
    const page = await newShopPage(context)
    await page.goto(authorizeUrl({ state: 'a11y' }))
    expect(await axeViolations(page)).toEqual([])
    await completeTestForm(page, '10', 'age_only')
    await page.getByRole('alert').waitFor()
    expect(await axeViolations(page)).toEqual([])
    await page.goto(`${baseUrl}/?client_id=nope&redirect_uri=x`)
    expect(await axeViolations(page)).toEqual([])
    await page.goto(`${baseUrl}/demo`)
    expect(await axeViolations(page)).toEqual([])
    await page.goto(authorizeUrl({ state: 'a11y-de' }), { referer: undefined })
    await page.locator('nav.languages summary').click()
    await page.getByRole('link', { name: 'Deutsch' }).click()
    expect(await page.getAttribute('html', 'lang')).toBe('de')
    expect(await axeViolations(page)).toEqual([])
    await context.close()
  }, 60_000)

  // `bun run screenshots` only: registered then, so that an ordinary run reports no skipped test.
  if (updatingScreenshots) test('screenshots for docs/', async () => {
    mkdirSync('docs/screenshots', { recursive: true })
    for (const [name, viewport] of [['desktop', { width: 1280, height: 860 }], ['phone', { width: 390, height: 844 }]] as const) {
      const page = await newShopPage(browser, viewport)
      await page.goto(authorizeUrl({ state: 'shot' }))
      await page.screenshot({ path: `docs/screenshots/page-${name}.png`, fullPage: true })
      await completeTestForm(page, '15', 'age_only')
      await page.getByRole('alert').waitFor()
      await page.screenshot({ path: `docs/screenshots/page-failed-${name}.png`, fullPage: true })
      await page.close()
    }
  }, 60_000)
})
