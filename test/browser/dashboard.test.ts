import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { runCommand } from '../../src/cli/run.ts'
import { createClient } from '../../src/clients/registry.ts'
import { addWebhookEndpoint } from '../../src/webhooks/endpoints.ts'
import { enqueueTestEvent } from '../../src/webhooks/events.ts'
import { basic } from '../helpers.ts'
import { axeViolations, fitsTheScreen, hasChromium, launchChromium, startTestServer, tablesFitTheirBoxes, type RunningServer } from './chromium.ts'
import { credentialsOf, pageWithAuthenticator } from './webauthn.ts'

/**
 * The client dashboard in headless Chromium against a real listening server: an operator creates a user
 * with the CLI, the user sets a password through the link, signs in, and finds a verification made on the
 * hosted page by its transaction_id, sees the month's usage, and rotates the secret on the settings page.
 * The README's walk-through with /demo, too. axe-core on every page, on a desktop and on a phone.
 */
const CALLBACK = 'https://shop.example/callback'
const PASSWORD = 'a long and memorable phrase'

let running: RunningServer
let browser: Browser
let shop: { id: string; secret: string }

beforeAll(async () => {
  if (!hasChromium) return
  // The demo on, as the README's start command has it with the embedded database.
  // Under a name, not an IP address: WebAuthn (the passkey test) refuses IP addresses.
  running = await startTestServer({ OFAGE_DEMO: '1' }, { hostname: 'localhost' })
  const created = await createClient(running.services.deps, { name: 'Shop Example', redirectUris: [CALLBACK], sandbox: true })
  shop = { id: created.client.id, secret: created.secret }
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  await running?.stop()
})

/** A verification made on the hosted page and exchanged by the shop: its transaction_id. */
async function verifyOnHostedPage(page: Page): Promise<string> {
  await page.route(`${CALLBACK}**`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title><h1>Back at the shop</h1>' }))
  await page.goto(`${running.baseUrl}/?${new URLSearchParams({ client_id: shop.id, redirect_uri: CALLBACK, state: 'dash', age_required: '18' })}`)
  await page.getByLabel('Test age').fill('30')
  await page.getByLabel('Test method').selectOption('biometric')
  await page.getByRole('button', { name: 'Complete test verification' }).click()
  await page.waitForURL(`${CALLBACK}**`)
  const response = await fetch(`${running.baseUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic(shop.id, shop.secret) },
    body: JSON.stringify({ grant_type: 'authorization_code', code: new URL(page.url()).searchParams.get('code'), redirect_uri: CALLBACK, state: 'dash' }),
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { transaction_id: string }).transaction_id
}

/** `ofage users create` as an operator runs it: the one-time link it prints. */
async function createUserWithCli(clientId: string, email: string): Promise<string> {
  const out: string[] = []
  const status = await runCommand(running.services, ['users', 'create', '--client', clientId, '--email', email, '--json'], { out: (text) => out.push(text), err: (text) => out.push(text) })
  expect(status).toBe(0)
  return (JSON.parse(out.join('\n')) as { set_password_url: string }).set_password_url
}

/** Through the link: set the password, then sign in with it; lands on the audit log. */
async function setPasswordAndSignIn(page: Page, link: string, email: string): Promise<void> {
  await page.goto(link)
  await page.getByLabel('New password').fill(PASSWORD)
  await page.getByLabel('Repeat the password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Save password' }).click()
  await page.waitForURL('**/dashboard/sign-in?notice=password_set')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.waitForURL('**/dashboard/audit')
}

/** Whether the token endpoint takes this secret: a made-up code is then invalid_grant (400), a wrong secret 401. */
async function secretWorks(secret: string): Promise<boolean> {
  const response = await fetch(`${running.baseUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic(shop.id, secret) },
    body: JSON.stringify({ grant_type: 'authorization_code', code: 'made-up', redirect_uri: CALLBACK }),
  })
  return response.status === 400
}


/** Opens a section of the settings page by its heading, as a user taps it. */
async function openSection(page: Page, heading: string): Promise<void> {
  const section = page.locator('details.section', { has: page.getByRole('heading', { name: heading, exact: true }) })
  if (!(await section.evaluate((details: HTMLDetailsElement) => details.open))) await section.locator('summary').click()
}

describe.skipIf(!hasChromium)('the client dashboard in headless Chromium', () => {
  test('CLI link → set password → sign in → search the transaction id → its detail; axe finds nothing on any page', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.setViewportSize({ width: 1280, height: 900 })
    const transactionId = await verifyOnHostedPage(page)
    // Another verification, so that the search has something to leave out.
    await verifyOnHostedPage(page)

    const out: string[] = []
    const status = await runCommand(running.services, ['users', 'create', '--client', shop.id, '--email', 'owner@shop.example', '--json'], { out: (text) => out.push(text), err: (text) => out.push(text) })
    expect(status).toBe(0)
    const { set_password_url } = JSON.parse(out.join('\n')) as { set_password_url: string }
    expect(set_password_url.startsWith(`${running.baseUrl}/dashboard/set-password?token=`)).toBe(true)

    await page.goto(set_password_url)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Choose your password')
    expect(await axeViolations(page)).toEqual([])
    await page.getByLabel('New password').fill(PASSWORD)
    await page.getByLabel('Repeat the password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Save password' }).click()
    await page.waitForURL('**/dashboard/sign-in?notice=password_set')
    expect(await page.getByRole('status').textContent()).toContain('Your password is saved')
    expect(await axeViolations(page)).toEqual([])

    await page.getByLabel('Email').fill('owner@shop.example')
    await page.getByLabel('Password').fill('not the right one!')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByRole('alert').waitFor()
    expect(await page.getByRole('alert').textContent()).toContain('The email or the password is not right.')
    expect(await axeViolations(page)).toEqual([])
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL('**/dashboard/audit')
    expect(await page.getByRole('table', { name: 'Verifications, newest first' }).getByRole('link').count()).toBe(2)
    expect(await axeViolations(page)).toEqual([])
    // On a 1280 px desktop, and a 1024 px one, the audit table fits as a table in every dashboard language:
    // codes and ids stay whole, words wrap (it scrolled sideways in its box at 1280 px).
    for (const width of [1280, 1024]) {
      await page.setViewportSize({ width, height: 900 })
      for (const lang of ['en', 'de', 'fr', 'es', 'it']) {
        await page.goto(`${running.baseUrl}/dashboard/audit?lang=${lang}`)
        expect({ width, lang, fits: await fitsTheScreen(page), table: await tablesFitTheirBoxes(page) }).toEqual({ width, lang, fits: true, table: true })
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goto(`${running.baseUrl}/dashboard/audit`)

    await page.getByLabel('Transaction ID').fill(transactionId)
    await page.getByRole('button', { name: 'Search' }).click()
    await page.waitForURL(`**/dashboard/audit?transaction_id=${transactionId}**`)
    const links = page.getByRole('table', { name: 'Verifications, newest first' }).getByRole('link')
    expect(await links.count()).toBe(1)
    expect(await links.first().textContent()).toBe(transactionId)
    expect(await axeViolations(page)).toEqual([])

    await links.first().click()
    await page.waitForURL(`**/dashboard/audit/${transactionId}`)
    const body = (await page.textContent('main'))!
    expect(body).toContain('Biometric (biometric)')
    expect(body).toContain('sandbox')
    expect(body).toContain('What we do not keep')
    expect(await axeViolations(page)).toEqual([])

    // The usage page, from the navigation: the two verifications, the chart as one image, the table behind <details>.
    await page.getByRole('link', { name: 'Usage' }).click()
    await page.waitForURL('**/dashboard/usage')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Usage')
    expect(await page.getByRole('img', { name: 'Verifications per day' }).count()).toBe(1)
    expect(await axeViolations(page)).toEqual([])
    await page.getByText('Show the numbers per day as a table').click()
    expect(await page.getByRole('table', { name: 'Verifications per day (UTC)' }).getByRole('row').count()).toBeGreaterThan(1)
    expect(await axeViolations(page)).toEqual([])
    await page.goBack()

    // On a phone: the same pages, nothing wider than the screen, still no violations.
    await page.setViewportSize({ width: 375, height: 740 })
    expect(await fitsTheScreen(page)).toBe(true)
    expect(await axeViolations(page)).toEqual([])
    await page.goto(`${running.baseUrl}/dashboard/audit`)
    expect(await fitsTheScreen(page)).toBe(true)
    expect(await axeViolations(page)).toEqual([])
    await page.goto(`${running.baseUrl}/dashboard/usage`)
    expect(await fitsTheScreen(page)).toBe(true)
    expect(await axeViolations(page)).toEqual([])

    // Settings: add a redirect URI, rotate the secret keeping the old one a day; both work, the page says until when.
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.getByRole('link', { name: 'Settings' }).click()
    await page.waitForURL('**/dashboard/settings')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Settings')
    expect(await page.locator('[data-snippet="environment"]').textContent()).toContain(`OFAGE_CLIENT_ID=${shop.id}`)
    expect(await axeViolations(page)).toEqual([])
    await openSection(page, 'Redirect URIs')
    await page.getByLabel('New redirect URI').fill('https://shop.example/other-callback')
    await page.getByRole('button', { name: 'Add redirect URI' }).click()
    await page.waitForURL('**/dashboard/settings?notice=redirect_uri_added')
    expect(await page.getByRole('status').textContent()).toBe('The redirect URI is added.')
    expect(await page.getByRole('button', { name: 'Remove https://shop.example/other-callback' }).count()).toBe(1)
    expect(await axeViolations(page)).toEqual([])
    // A day is what the form offers unless told otherwise (issue 19: "none" by default was an outage).
    await openSection(page, 'Client secret')
    expect(await page.getByLabel('Keep the current secret working for').inputValue()).toBe('86400')
    await page.getByLabel('Your password', { exact: true }).fill(PASSWORD)
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    await page.getByRole('heading', { name: 'Your new client secret' }).waitFor()
    // Post/redirect/get: the secret is on the settings page's own address, which a reload does not post again.
    expect(page.url()).toBe(`${running.baseUrl}/dashboard/settings`)
    const secret = (await page.locator('#new-secret').textContent())!
    expect(await page.textContent('.secret-box')).toContain('Both are accepted until then.')
    expect(await page.locator('[data-snippet="environment"]').textContent()).toContain(`OFAGE_CLIENT_SECRET=${secret}`)
    expect(await page.locator('[data-snippet="environment"]').isVisible()).toBe(true)
    expect(await axeViolations(page)).toEqual([])
    expect(await secretWorks(secret)).toBe(true)
    expect(await secretWorks(shop.secret)).toBe(true)
    // A reload shows the page without the secret, and rotates nothing: the new secret still works.
    await page.reload()
    expect(await page.content()).not.toContain(secret)
    expect(await secretWorks(secret)).toBe(true)
    expect(await page.textContent('[data-overlap-until]')).toContain('The previous secret also works until')
    await page.setViewportSize({ width: 375, height: 740 })
    expect(await fitsTheScreen(page)).toBe(true)
    expect(await axeViolations(page)).toEqual([])
    shop.secret = secret

    // The error pages: a verification that is not this client's, a spent link.
    const missing = await page.goto(`${running.baseUrl}/dashboard/audit/00000000-0000-4000-8000-000000000000`)
    expect(missing!.status()).toBe(404)
    expect(await page.getByRole('alert').textContent()).toContain('There is nothing at this address.')
    expect(await axeViolations(page)).toEqual([])
    const spent = await page.goto(`${running.baseUrl}/dashboard/set-password?token=spent-or-made-up`)
    expect(spent!.status()).toBe(400)
    expect(await axeViolations(page)).toEqual([])

    // German, and signing out everywhere: a page of its own first, which offers to remove passkeys (none here).
    await page.goto(`${running.baseUrl}/dashboard/audit?lang=de`)
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Prüfprotokoll')
    expect(await axeViolations(page)).toEqual([])
    await page.getByRole('link', { name: 'Überall abmelden' }).click()
    await page.waitForURL('**/dashboard/sign-out-everywhere?lang=de')
    expect(await axeViolations(page)).toEqual([])
    await page.getByRole('button', { name: 'Überall abmelden' }).click()
    await page.waitForURL('**/dashboard/sign-in?notice=signed_out_everywhere&lang=de')
    await page.goto(`${running.baseUrl}/dashboard/audit`)
    expect(page.url()).toBe(`${running.baseUrl}/dashboard/sign-in`)
    await context.close()
  }, 90_000)

  test('a passkey added on the settings page, after the password again, signs in without the password', async () => {
    const context = await browser.newContext()
    const { page, cdp, authenticatorId } = await pageWithAuthenticator(context, CALLBACK)
    await setPasswordAndSignIn(page, await createUserWithCli(shop.id, 'keys@shop.example'), 'keys@shop.example')
    await page.getByRole('link', { name: 'Settings' }).click()
    await openSection(page, 'Your passkeys')
    // Without the password the browser asks for it; with a wrong one the server refuses; nothing is added.
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    expect(await page.getByLabel('Your password, to add a passkey').evaluate((input: HTMLInputElement) => input.validity.valueMissing)).toBe(true)
    await page.getByLabel('Your password, to add a passkey').fill('not the right one!')
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await page.getByText('The password is not right. No passkey was added.').waitFor()
    expect(await credentialsOf(cdp, authenticatorId)).toHaveLength(0)
    await page.getByLabel('Your password, to add a passkey').fill(PASSWORD)
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await page.waitForURL('**/dashboard/settings?notice=passkey_added')
    expect(await page.getByRole('status').first().textContent()).toContain('Your passkey is added')
    const rows = page.getByRole('table', { name: 'Your passkeys' }).getByRole('row')
    expect(await rows.count()).toBe(2)
    // Headless Chromium on Linux (this test server hands the app no socket address, so no network is shown).
    expect(await rows.nth(1).textContent()).toContain('Chrome, Linux')
    expect(await axeViolations(page)).toEqual([])
    const [credential] = await credentialsOf(cdp, authenticatorId)
    expect(credential!.isResidentCredential).toBe(true)
    // "Sign out everywhere" offers to remove it, ticked; the page passes axe with the list and the box.
    await page.getByRole('link', { name: 'Sign out everywhere' }).click()
    expect(await page.getByLabel('Also remove the 1 passkey of this account').isChecked()).toBe(true)
    expect(await axeViolations(page)).toEqual([])
    await page.goBack()

    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.waitForURL('**/dashboard/sign-in?notice=signed_out')
    expect(await axeViolations(page)).toEqual([])
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
    await page.waitForURL('**/dashboard/audit')
    expect(await page.textContent('main')).toContain('Signed in as keys@shop.example')
    await context.close()
  }, 90_000)

  test("the README's walk-through: verify on /demo, one CLI call, sign in, find it by transaction_id, see it in the chart", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${running.baseUrl}/demo`)
    await page.getByRole('link', { name: 'Verify I am 18 or older' }).click()
    await page.getByLabel('Test age').fill('30')
    await page.getByRole('button', { name: 'Complete test verification' }).click()
    await page.waitForURL(`${running.baseUrl}/demo/callback**`)
    const transactionId = (await page.locator('#transaction-id').textContent())!.trim()
    expect(transactionId).toMatch(/^[0-9a-f-]{36}$/)

    await setPasswordAndSignIn(page, await createUserWithCli('demo', 'you@example.com'), 'you@example.com')
    await page.getByLabel('Transaction ID').fill(transactionId)
    await page.getByRole('button', { name: 'Search' }).click()
    await page.waitForURL(`**/dashboard/audit?transaction_id=${transactionId}**`)
    expect(await page.getByRole('table', { name: 'Verifications, newest first' }).getByRole('link').allTextContents()).toEqual([transactionId])

    await page.getByRole('link', { name: 'Usage' }).click()
    const today = new Date().toISOString().slice(0, 10)
    expect(await page.locator(`rect.bar[data-day="${today}"]`).getAttribute('data-total')).toBe('1')
    expect(await page.locator('[data-count="total_verifications"]').textContent()).toBe('1')

    await context.close()
  }, 90_000)

  test('on a 360×740 phone nothing scrolls sideways and axe finds nothing: every dashboard page, the hosted page and its pass panel, the demo (issue 24)', async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 } })
    const page = await context.newPage()
    const check = async (name: string) => {
      expect({ name, fits: await fitsTheScreen(page) }).toEqual({ name, fits: true })
      expect({ name, axe: await axeViolations(page) }).toEqual({ name, axe: [] })
    }
    const height = () => page.evaluate(() => document.documentElement.scrollHeight)

    // The hosted page, then its "Verified recently" panel: the age the site asks for, not the test age typed in.
    await page.route(`${CALLBACK}**`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title><h1>Back at the shop</h1>' }))
    const hosted = `${running.baseUrl}/?${new URLSearchParams({ client_id: shop.id, redirect_uri: CALLBACK, state: 'phone', age_required: '18' })}`
    await page.goto(hosted)
    await check('the hosted page')
    await page.getByLabel('Test age').fill('25')
    await page.getByRole('button', { name: 'Complete test verification' }).click()
    await page.waitForURL(`${CALLBACK}**`)
    await page.goto(hosted)
    expect(await page.locator('section.pass').textContent()).toContain('verified recently as 18 or older')
    await check('the hosted page with its pass panel')

    // The demo's callback: every claim on one line but the 64-digit sub, which breaks only where it must.
    await page.goto(`${running.baseUrl}/demo/start?age=18`)
    await page.getByLabel('Test age').fill('30')
    await page.getByRole('button', { name: 'Complete test verification' }).click()
    await page.waitForURL(`${running.baseUrl}/demo/callback**`)
    await check('the demo callback')
    const claimLines = await page.evaluate(() =>
      Object.fromEntries(
        [...document.querySelectorAll('dl.claims dd')].map((dd) => {
          const range = document.createRange()
          range.selectNodeContents(dd)
          return [dd.previousElementSibling!.textContent!, new Set([...range.getClientRects()].map((rect) => Math.round(rect.bottom))).size]
        }),
      ),
    )
    expect(claimLines).toMatchObject({ verification_id: 1, verification_level: 1, iss: 1 })
    expect(claimLines.sub).toBeLessThanOrEqual(2)

    // The dashboard, signed in through the CLI's link.
    await page.goto(await createUserWithCli(shop.id, 'phone@shop.example'))
    await check('set password')
    await page.getByLabel('New password').fill(PASSWORD)
    await page.getByLabel('Repeat the password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Save password' }).click()
    await page.waitForURL('**/dashboard/sign-in?notice=password_set')
    await check('sign in')
    await page.getByLabel('Email').fill('phone@shop.example')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL('**/dashboard/audit')
    await check('the audit log')
    // The navigation: two short rows at most (it took about 190 px), the page shown marked.
    expect(await page.locator('header.topbar').evaluate((header) => header.getBoundingClientRect().height)).toBeLessThan(110)
    expect(await page.locator('nav[aria-label="Dashboard"] [aria-current="page"]').textContent()).toBe('Audit log')
    // The list: each verification a card, each value beside its column's name.
    const time = page.getByRole('table', { name: 'Verifications, newest first' }).locator('td[data-label="Time (UTC)"]').first()
    expect(await time.evaluate((cell) => getComputedStyle(cell, '::before').content)).toBe('"Time (UTC)"')
    await page.goto(`${running.baseUrl}/dashboard/audit?from=2026-01-01&to=2099-12-31`)
    await check('the audit log, filtered by dates')
    await page.getByRole('table', { name: 'Verifications, newest first' }).getByRole('link').first().click()
    await page.waitForURL('**/dashboard/audit/*')
    await check('a verification')
    await page.goto(`${running.baseUrl}/dashboard/usage`)
    expect(await page.getByRole('img', { name: 'Verifications per day' }).count()).toBe(1)
    await check('usage')
    await page.getByText('Show the numbers per day as a table').click()
    await check('usage, the table open')
    await page.goto(`${running.baseUrl}/dashboard/settings`)
    await check('settings')
    // Closed to its headings, the page is about a screen and a half; each section opens where it is.
    const closed = await height()
    expect(closed).toBeLessThanOrEqual(2 * 740)
    await page.evaluate(() => document.querySelectorAll('main details').forEach((details) => ((details as HTMLDetailsElement).open = true)))
    await check('settings, every section open')
    expect(await height()).toBeGreaterThan(3 * closed)
    const endpoint = await addWebhookEndpoint(running.services.deps, shop.id, { url: 'https://hooks.shop.example/a/rather/long/path/for/a/phone?token=0123456789abcdef' })
    await enqueueTestEvent(running.services.deps.db, endpoint, new Date())
    await page.goto(`${running.baseUrl}/dashboard/webhooks`)
    await check('webhooks')
    await page.goto(`${running.baseUrl}/dashboard/webhooks/${endpoint.id}`)
    expect(await page.locator('nav[aria-label="Dashboard"] [aria-current]').textContent()).toBe('Webhooks')
    await check('a webhook endpoint and its deliveries')
    await page.goto(`${running.baseUrl}/dashboard/sign-out-everywhere`)
    await check('sign out everywhere')
    // Without SMTP here, "Forgot password?" is the page that says the operator resets passwords.
    await page.goto(`${running.baseUrl}/dashboard/forgot-password`)
    await check('forgot password')
    // Longer words in other languages: still nothing wider than the screen, and axe still finds nothing.
    for (const lang of ['de', 'fr', 'es', 'it']) {
      for (const path of ['/dashboard/audit?from=2026-01-01', '/dashboard/usage', '/dashboard/webhooks', `/dashboard/webhooks/${endpoint.id}`, '/dashboard/settings', '/dashboard/forgot-password']) {
        await page.goto(`${running.baseUrl}${path}${path.includes('?') ? '&' : '?'}lang=${lang}`)
        await page.evaluate(() => document.querySelectorAll('main details').forEach((details) => ((details as HTMLDetailsElement).open = true)))
        expect(await page.getAttribute('html', 'lang')).toBe(lang)
        expect({ lang, path, fits: await fitsTheScreen(page), axe: await axeViolations(page) }).toEqual({ lang, path, fits: true, axe: [] })
      }
    }

    // A client with no verification yet: the usage page says so instead of an empty chart.
    const quiet = await createClient(running.services.deps, { name: 'Quiet Shop', redirectUris: [CALLBACK], sandbox: true })
    const quietPage = await (await browser.newContext({ viewport: { width: 360, height: 740 } })).newPage()
    await setPasswordAndSignIn(quietPage, await createUserWithCli(quiet.client.id, 'quiet@shop.example'), 'quiet@shop.example')
    await quietPage.goto(`${running.baseUrl}/dashboard/usage`)
    expect(await quietPage.locator('[data-empty-chart]').textContent()).toContain('No verifications yet this month.')
    expect(await fitsTheScreen(quietPage)).toBe(true)
    expect(await axeViolations(quietPage)).toEqual([])
    await quietPage.context().close()
    await context.close()
  }, 120_000)
})
