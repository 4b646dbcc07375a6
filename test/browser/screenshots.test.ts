import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { eq, isNull, sql } from 'drizzle-orm'
import type { Browser, Page } from 'playwright-core'
import { setClientLogo, updateBranding } from '../../src/branding/branding.ts'
import { createDashboardUser, setPasswordWithToken } from '../../src/dashboard/users.ts'
import { webhookDeliveries } from '../../src/db/schema.ts'
import { fixedClock } from '../../src/lib/clock.ts'
import { createClient } from '../../src/clients/registry.ts'
import { issueCode } from '../../src/oauth/issue-code.ts'
import { addWebhookEndpoint } from '../../src/webhooks/endpoints.ts'
import { axeViolations, fitsTheScreen, hasChromium, launchChromium, startTestServer, updatingScreenshots, type RunningServer } from './chromium.ts'

/**
 * `npm run screenshots` only (UPDATE_SCREENSHOTS=1): the pictures in docs/screenshots/ that show the page in
 * three languages (Arabic right to left), a site's own look, and every dashboard page at desktop and phone
 * widths, on a client with a month of verifications and a webhook endpoint with deliveries of each kind. Each
 * picture's page is also checked by axe and for sideways scroll, so a picture never shows a broken page.
 * Registered only then, so that an ordinary run reports no skipped test.
 */
const CALLBACK = 'https://shop.example/callback'
const PASSWORD = 'a long and memorable phrase'
const VIEWPORTS = [
  ['desktop', { width: 1280, height: 860 }],
  ['phone', { width: 360, height: 740 }],
] as const

let running: RunningServer
let browser: Browser
let shop: { id: string }
let cellar: { id: string }
let transactionId: string
let endpointId: string

/** This month so far: a few verifications a day of each kind, a re-verification now and then, webhooks for each. */
async function monthOfVerifications() {
  const { deps } = running.services
  const now = new Date()
  for (let day = 1; day <= now.getUTCDate(); day++) {
    const clock = fixedClock(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), day, 9)))
    // The endpoint is added yesterday: its list shows a few deliveries, not the month's.
    if (day === Math.max(1, now.getUTCDate() - 1)) endpointId = (await addWebhookEndpoint({ ...deps, clock }, shop.id, { url: 'https://shop.example/webhooks/ofage' })).id
    // A repeatable pattern of weekday traffic: a calm start of the month, busier weekends.
    const count = 2 + ((day * 7) % 5) + (new Date(clock.now()).getUTCDay() % 6 === 0 ? 4 : 0)
    for (let i = 0; i < count && clock.now() < now; i++) {
      const methodClass = i % 3 === 0 ? 'biometric' : 'age_only'
      const issued = await issueCode({ ...deps, clock }, { clientId: shop.id, redirectUri: CALLBACK, ageOver: 18, methodClass, reverification: i % 4 === 3, method: methodClass === 'biometric' ? 'face' : 'sandbox' })
      transactionId = issued.transactionId
      clock.advance(47 * 60_000)
    }
  }
  // Every delivery but the last answered 204 on its first try; one gave up after its eleventh.
  await deps.db
    .update(webhookDeliveries)
    .set({ attempts: 1, lastStatus: 204, deliveredAt: sql`${webhookDeliveries.createdAt} + interval '1 second'` })
    .where(eq(webhookDeliveries.endpointId, endpointId))
  const [dead] = await deps.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId)).orderBy(webhookDeliveries.createdAt).limit(1).offset(3)
  await deps.db
    .update(webhookDeliveries)
    .set({ attempts: 11, lastStatus: 503, lastError: 'the receiver answered 503 Service Unavailable', deliveredAt: null, deadAt: sql`${webhookDeliveries.createdAt} + interval '3 days'` })
    .where(eq(webhookDeliveries.id, dead!.id))
  expect(await deps.db.$count(webhookDeliveries, isNull(webhookDeliveries.deliveredAt))).toBe(1)
}

beforeAll(async () => {
  if (!hasChromium || !updatingScreenshots) return
  // SMTP set, so that the sign-in page offers "Forgot password?" and its page the form (nothing is sent).
  running = await startTestServer({ SMTP_URL: 'smtp://127.0.0.1:2525', SMTP_FROM: 'Shop Example <no-reply@shop.example>' })
  const { deps } = running.services
  shop = (await createClient(deps, { name: 'Shop Example', redirectUris: [CALLBACK], sandbox: true })).client
  cellar = (await createClient(deps, { name: 'internal name', redirectUris: [CALLBACK], sandbox: true })).client
  await updateBranding(deps.db, cellar.id, { displayName: 'Cellar Door', accentColour: '#14632c', privacyUrl: 'https://shop.example/privacy' })
  const { link } = await createDashboardUser(deps, { clientId: shop.id, email: 'owner@shop.example' })
  await setPasswordWithToken(deps, { token: link.token, password: PASSWORD })
  await monthOfVerifications()
  browser = await launchChromium()
  await setClientLogo(deps, cellar.id, await drawLogo())
}, 120_000)

afterAll(async () => {
  if (!hasChromium || !updatingScreenshots) return
  await browser?.close()
  await running?.stop()
})

function pageUrl(client: { id: string }, query: Record<string, string> = {}): string {
  return `${running.baseUrl}/?${new URLSearchParams({ client_id: client.id, redirect_uri: CALLBACK, state: 'shot', ...query })}`
}

/**
 * Checked, then pictured: axe finds nothing and nothing scrolls sideways. The whole page, but at most two
 * screens and a half of it: a list of fifty verifications on a phone is fifteen thousand pixels long.
 */
async function shoot(page: Page, file: string) {
  expect({ file, fits: await fitsTheScreen(page), axe: await axeViolations(page) }).toEqual({ file, fits: true, axe: [] })
  const size = await page.evaluate(() => ({ width: document.documentElement.clientWidth, height: document.documentElement.scrollHeight }))
  const height = Math.min(size.height, Math.round(page.viewportSize()!.height * 2.5))
  await page.screenshot({ path: `docs/screenshots/${file}.png`, fullPage: true, clip: { x: 0, y: 0, width: size.width, height } })
}

/** A wordmark for the branded page, drawn by Chromium itself: nothing from outside the repository. */
async function drawLogo(): Promise<Uint8Array> {
  const page = await browser.newPage({ viewport: { width: 480, height: 120 } })
  await page.setContent(`<body style="margin:0"><div id="logo" style="width:480px;height:120px;display:flex;align-items:center;gap:20px;font:700 52px Georgia,serif;color:#14632c">
    <svg width="96" height="96" viewBox="0 0 96 96"><circle cx="48" cy="48" r="44" fill="#14632c"/><path d="M34 22h28c0 20-6 30-14 30s-14-10-14-30zM48 52v20M36 74h24" stroke="#fff" stroke-width="5" fill="none" stroke-linecap="round"/></svg>
    Cellar Door</div></body>`)
  const png = await page.locator('#logo').screenshot({ omitBackground: true })
  await page.close()
  return new Uint8Array(png)
}

if (updatingScreenshots) describe.skipIf(!hasChromium)('screenshots for docs/', () => {
  test('the hosted page in German, Polish and Arabic (right to left), and a site’s own look', async () => {
    mkdirSync('docs/screenshots', { recursive: true })
    for (const [name, viewport] of VIEWPORTS) {
      const context = await browser.newContext({ viewport })
      const page = await context.newPage()
      for (const lang of ['de', 'pl', 'ar']) {
        await page.goto(pageUrl(shop, { lang }))
        expect(await page.getAttribute('html', 'lang')).toBe(lang)
        await shoot(page, `page-${lang}-${name}`)
      }
      await page.goto(pageUrl(cellar))
      await page.getByRole('img', { name: 'Cellar Door logo' }).waitFor()
      await shoot(page, `page-branded-${name}`)
      await context.close()
    }
  }, 120_000)

  test('every dashboard page, signed out and signed in, in English and one in German', async () => {
    for (const [name, viewport] of VIEWPORTS) {
      const context = await browser.newContext({ viewport, locale: 'en-GB' })
      const page = await context.newPage()
      await page.goto(`${running.baseUrl}/dashboard/sign-in`)
      await shoot(page, `dashboard-sign-in-${name}`)
      await page.getByRole('link', { name: 'Forgot your password?' }).click()
      await page.waitForURL('**/dashboard/forgot-password**')
      await shoot(page, `dashboard-forgot-password-${name}`)

      await page.goto(`${running.baseUrl}/dashboard/sign-in`)
      await page.getByLabel('Email').fill('owner@shop.example')
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.waitForURL('**/dashboard/audit')
      for (const [shot, path] of [
        ['audit', '/dashboard/audit'],
        ['verification', `/dashboard/audit/${transactionId}`],
        ['usage', '/dashboard/usage'],
        ['settings', '/dashboard/settings'],
        ['webhooks', '/dashboard/webhooks'],
        ['webhook-endpoint', `/dashboard/webhooks/${endpointId}`],
      ]) {
        await page.goto(`${running.baseUrl}${path}`)
        await shoot(page, `dashboard-${shot}-${name}`)
      }
      await page.goto(`${running.baseUrl}/dashboard/usage?lang=de`)
      expect(await page.getAttribute('html', 'lang')).toBe('de')
      await shoot(page, `dashboard-usage-de-${name}`)
      await context.close()
    }
  }, 120_000)
})
