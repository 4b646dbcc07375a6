import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import type { Browser } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import { createDashboardUser, setPasswordWithToken } from '../../src/dashboard/users.ts'
import { webhookDeliveries } from '../../src/db/schema.ts'
import { systemClock } from '../../src/lib/clock.ts'
import { createClient } from '../../src/clients/registry.ts'
import { deliverDue } from '../../src/webhooks/delivery.ts'
import { enqueueTestEvent } from '../../src/webhooks/events.ts'
import { axeViolations, fitsTheScreen, hasChromium, launchChromium, startTestServer, type RunningServer } from './chromium.ts'

/**
 * The webhooks page (issue 24, item 4) in headless Chromium on a phone (360×740): add an endpoint, copy the
 * secret the page shows once, send a test event that a real receiver verifies with it, and see a dead
 * delivery with its Replay button; the page never scrolls sideways and axe-core finds nothing.
 */
const PASSWORD = 'a long and memorable phrase'

let running: RunningServer
let browser: Browser
let shop: { id: string }
let receiver: ReturnType<typeof Bun.serve>
const received: { headers: Record<string, string>; body: string }[] = []

beforeAll(async () => {
  if (!hasChromium) return
  running = await startTestServer()
  const { deps } = running.services
  shop = (await createClient(deps, { name: 'Shop Example', redirectUris: ['https://shop.example/callback'], sandbox: true })).client
  const { link } = await createDashboardUser(deps, { clientId: shop.id, email: 'owner@shop.example' })
  await setPasswordWithToken(deps, { token: link.token, password: PASSWORD })
  receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      received.push({ headers: Object.fromEntries(request.headers), body: await request.text() })
      return new Response(null, { status: 204 })
    },
  })
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  receiver?.stop(true)
  await running?.stop()
})


describe.skipIf(!hasChromium)('the webhooks page in headless Chromium', () => {
  test('on a phone: add an endpoint, its secret once, a test event verified by the receiver, a dead delivery to replay; no sideways scroll, axe finds nothing', async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true })
    const page = await context.newPage()
    try {
      await page.goto(`${running.baseUrl}/dashboard/sign-in`)
      await page.getByLabel('Email').fill('owner@shop.example')
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.waitForURL('**/dashboard/audit')

      await page.getByRole('link', { name: 'Webhooks' }).click()
      await page.waitForURL('**/dashboard/webhooks')
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Webhooks')
      expect(await fitsTheScreen(page)).toBe(true)
      expect(await axeViolations(page)).toEqual([])

      // A refusal first: the alert, the field marked, the typed value kept.
      await page.getByLabel('Endpoint address').fill('https://10.0.0.7/hooks')
      await page.getByRole('button', { name: 'Add endpoint' }).click()
      await page.getByRole('alert').waitFor()
      expect(await page.getByRole('alert').textContent()).toContain('private or local network')
      expect(await fitsTheScreen(page)).toBe(true)
      expect(await axeViolations(page)).toEqual([])

      const url = `http://127.0.0.1:${receiver.port}/hooks/a/rather/long/path/that/a/phone/must/wrap?token=0123456789abcdef0123456789abcdef`
      await page.getByLabel('Endpoint address').fill(url)
      await page.getByRole('button', { name: 'Add endpoint' }).click()
      await page.waitForURL('**/dashboard/webhooks?notice=endpoint_added')
      const secret = (await page.locator('#new-secret').textContent())!
      expect(secret).toMatch(/^whsec_/)
      expect(await fitsTheScreen(page)).toBe(true)
      expect(await axeViolations(page)).toEqual([])
      // Reloaded, the secret is gone.
      await page.reload()
      expect(await page.locator('#new-secret').count()).toBe(0)

      await page.getByRole('link', { name: url }).click()
      await page.waitForURL('**/dashboard/webhooks/we_*')
      await page.getByRole('button', { name: 'Send a test event' }).click()
      await page.waitForURL('**?notice=test_sent')
      expect(await page.getByRole('status').textContent()).toContain('A test event is on its way')
      expect(await deliverDue({ ...running.services.deps, clock: systemClock })).toBe(1)
      const [message] = received
      const headers = { 'webhook-id': message!.headers['webhook-id']!, 'webhook-timestamp': message!.headers['webhook-timestamp']!, 'webhook-signature': message!.headers['webhook-signature']! }
      expect(new Webhook(secret).verify(message!.body, headers)).toMatchObject({ type: 'webhook.test', data: { client_id: shop.id } })

      // A delivery that gave up, with a long error summary, beside the delivered one.
      const endpointId = new URL(page.url()).pathname.split('/').at(-1)!
      const deadId = await enqueueTestEvent(running.services.deps.db, { id: endpointId, clientId: shop.id }, new Date())
      const error = 'TypeError: ECONNREFUSED: Unable to connect. Is the computer able to access the url? The receiver at [endpoint URL] refused the connection'
      await running.services.deps.db.update(webhookDeliveries).set({ deadAt: new Date(), attempts: 11, lastError: error }).where(eq(webhookDeliveries.id, deadId))
      await page.reload()
      expect(await page.locator(`tr[data-delivery-id="${deadId}"] td.last-answer`).textContent()).toBe(error)
      // On a phone each cell is read with its column's name first (the list layout's label): "Status Delivered".
      expect(await page.getByRole('cell', { name: 'Status Delivered', exact: true }).count()).toBe(1)
      expect(await fitsTheScreen(page)).toBe(true)
      expect(await axeViolations(page)).toEqual([])

      await page.locator(`tr[data-delivery-id="${deadId}"]`).getByRole('button', { name: 'Replay' }).click()
      await page.waitForURL('**?notice=replayed')
      expect(await page.locator(`tr[data-delivery-id="${deadId}"]`).getAttribute('data-status')).toBe('pending')
      expect(await fitsTheScreen(page)).toBe(true)
      expect(await axeViolations(page)).toEqual([])
    } finally {
      await context.close()
    }
  })
})
