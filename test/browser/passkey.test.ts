import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, BrowserContext } from 'playwright-core'
import { createClient } from '../../src/clients/registry.ts'
import { basic } from '../helpers.ts'
import { axeViolations, exchangeAtCallback, hasChromium, launchChromium, startTestServer, type RunningServer } from './chromium.ts'
import { credentialsOf, pageWithAuthenticator } from './webauthn.ts'

/**
 * Passkey re-verification end to end in headless Chromium, with its virtual authenticator (CDP WebAuthn
 * domain) in place of a phone's. The page is served at http://localhost: WebAuthn needs a secure context
 * and an RP ID that is a domain, and localhost is both.
 */
const SHOP_CALLBACK = 'https://shop.example/callback'

let running: RunningServer
let browser: Browser
let baseUrl: string
let shop: { id: string; secret: string }

beforeAll(async () => {
  if (!hasChromium) return
  running = await startTestServer({}, { hostname: 'localhost' })
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

/** Takes away the WebAuthn L3 JSON helpers, so the page's script uses its own base64url fallback. */
async function withoutJsonHelpers(context: BrowserContext) {
  await context.addInitScript(() => {
    const pkc = window.PublicKeyCredential as unknown as Record<string, unknown> & { prototype: Record<string, unknown> }
    delete pkc.parseCreationOptionsFromJSON
    delete pkc.parseRequestOptionsFromJSON
    delete pkc.prototype.toJSON
  })
}

const site = (state: string) => ({ baseUrl, client: shop, callback: SHOP_CALLBACK, state })

function authorizeUrl(query: Record<string, string>): string {
  return `${baseUrl}/?${new URLSearchParams({ client_id: shop.id, redirect_uri: SHOP_CALLBACK, ...query })}`
}

describe.skipIf(!hasChromium)('passkeys in headless Chromium', () => {
  test('save a passkey after a check, then re-verify in a fresh browser holding a synced copy of it', async () => {
    // The first device: a sandbox check, then back on the page, "Save a passkey".
    const first = await browser.newContext()
    await withoutJsonHelpers(first)
    const one = await pageWithAuthenticator(first, SHOP_CALLBACK)
    await one.page.goto(authorizeUrl({ state: 'pk-1', age_required: '18' }))
    await one.page.getByLabel('Test age').fill('25')
    await one.page.getByLabel('Test method').selectOption('age_only')
    await one.page.getByRole('button', { name: 'Complete test verification' }).click()
    const original = await exchangeAtCallback(one.page, site('pk-1'))
    expect(original.validation.verification_level).toBe('first_verification')

    await one.page.goto(authorizeUrl({ state: 'pk-2', age_required: '18' }))
    await one.page.getByRole('button', { name: 'Save a passkey for your other devices' }).click()
    await one.page.getByText('Your passkey is saved.').waitFor()
    const saved = await credentialsOf(one.cdp, one.authenticatorId)
    expect(saved).toHaveLength(1)
    const passkey = saved[0]!
    expect(passkey).toMatchObject({ isResidentCredential: true, rpId: 'localhost' })
    await first.close()

    // Another device: no age pass, no cookie; the passkey arrives as a synced passkey does.
    const second = await browser.newContext()
    const two = await pageWithAuthenticator(second, SHOP_CALLBACK)
    await two.cdp.send('WebAuthn.addCredential', { authenticatorId: two.authenticatorId, credential: passkey })
    await two.page.goto(authorizeUrl({ state: 'pk-3', age_required: '21' }))
    expect(await two.page.getByRole('button', { name: 'Continue as verified' }).count()).toBe(0)
    expect(await axeViolations(two.page)).toEqual([])
    await two.page.getByRole('button', { name: 'Use my passkey' }).click()
    const again = await exchangeAtCallback(two.page, site('pk-3'))
    expect(again.validation).toMatchObject({ valid: true, age_over: 21, verification_level: 're_verification' })
    expect(again.sub).toBe(original.sub)

    const usage = await (await fetch(`${baseUrl}/api/oauth/usage`, { headers: { authorization: basic(shop.id, shop.secret) } })).json()
    expect(usage.usage).toMatchObject({ total_verifications: 2, reverification_count: 1 })

    // "Delete my saved passkey": the server forgets it, so it no longer re-verifies anywhere.
    await two.page.goto(authorizeUrl({ state: 'pk-4', age_required: '18' }))
    await two.page.getByRole('button', { name: 'Delete my saved passkey' }).click()
    await two.page.getByText('Your passkey is deleted.').waitFor()
    // The script also asks the browser to forget it (WebAuthn Signal API), where the browser has that.
    if (await two.page.evaluate(() => 'signalUnknownCredential' in PublicKeyCredential)) {
      for (let i = 0; i < 50 && (await credentialsOf(two.cdp, two.authenticatorId)).length > 0; i++) await Bun.sleep(50)
      expect(await credentialsOf(two.cdp, two.authenticatorId)).toEqual([])
    }
    await second.close()

    const third = await browser.newContext()
    await withoutJsonHelpers(third)
    const three = await pageWithAuthenticator(third, SHOP_CALLBACK)
    await three.cdp.send('WebAuthn.addCredential', { authenticatorId: three.authenticatorId, credential: passkey })
    await three.page.goto(authorizeUrl({ state: 'pk-5', age_required: '18' }))
    await three.page.getByRole('button', { name: 'Use my passkey' }).click()
    await three.page.getByText('This passkey is not saved with us').waitFor()
    expect(three.page.url().startsWith(baseUrl)).toBe(true)
    await third.close()
  }, 60_000)

  test('without WebAuthn the passkey panel stays hidden, and the page still works', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(authorizeUrl({ state: 'no-js' }))
    expect(await page.getByRole('button', { name: 'Use my passkey' }).isVisible()).toBe(false)
    expect(await page.getByRole('button', { name: 'Complete test verification' }).isVisible()).toBe(true)
    await context.close()
  }, 30_000)
})
