import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { setClientLogo, updateBranding } from '../../src/branding/branding.ts'
import { accentContrast } from '../../src/branding/contrast.ts'
import { createClient } from '../../src/clients/registry.ts'
import { axeViolations, hasChromium, launchChromium, startTestServer, type RunningServer } from './chromium.ts'

/**
 * A branded hosted page in headless Chromium against a real listening server: the logo and the colour load
 * from our origin under the page's CSP (nothing refused), axe finds nothing, and its contrast check, not ours,
 * agrees that the lightest colour our rule accepts is readable wherever the page paints it.
 */
const CALLBACK = 'https://shop.example/callback'
const fixture = (name: string) => new Uint8Array(readFileSync(join(import.meta.dir, '..', 'branding', 'fixtures', name)))

let running: RunningServer
let browser: Browser

beforeAll(async () => {
  if (!hasChromium) return
  running = await startTestServer()
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  await running?.stop()
})

/** A sandbox client with this look, and the address of its page. */
async function brandedClient(accentColour: string): Promise<string> {
  const { deps } = running.services
  const { client } = await createClient(deps, { name: 'internal', redirectUris: [CALLBACK], sandbox: true })
  await updateBranding(deps.db, client.id, { displayName: 'Cellar Door', accentColour, privacyUrl: 'https://shop.example/privacy' })
  await setClientLogo(deps, client.id, fixture('wide-1200x300.jpg'))
  return `${running.baseUrl}/?${new URLSearchParams({ client_id: client.id, redirect_uri: CALLBACK, state: 'st' })}`
}

/** A page that records every CSP violation and failed request. */
async function watchedPage(): Promise<{ page: Page; refused: string[] }> {
  const page = await browser.newPage()
  const refused: string[] = []
  // A CSP refusal is a console error; a missing file, an answer of 400 or more (the browser's own favicon.ico aside).
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) refused.push(message.text())
  })
  page.on('response', (response) => {
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) refused.push(`${response.url()} ${response.status()}`)
  })
  page.on('requestfailed', (request) => refused.push(`${request.url()} ${request.failure()?.errorText}`))
  return { page, refused }
}

/** The page as it shows every place the accent meets text: a failed check's alert and link, the language switch open. */
async function showEveryAccent(page: Page) {
  await page.getByLabel('Test age').fill('12')
  await page.getByRole('button', { name: 'Complete test verification' }).click()
  await page.getByRole('alert').waitFor()
  await page.locator('nav.languages summary').click()
  await page.locator('nav.languages a').first().waitFor({ state: 'visible' })
}

describe.skipIf(!hasChromium)('a branded hosted page in Chromium', () => {
  test('the logo and the colour load from our origin under the page’s CSP; the page is the site’s colour', async () => {
    const { page, refused } = await watchedPage()
    await page.goto(await brandedClient('#14632c'))
    const logo = page.getByRole('img', { name: 'Cellar Door logo' })
    await logo.waitFor()
    expect(await logo.evaluate((img: HTMLImageElement) => [img.complete, img.naturalWidth, img.naturalHeight])).toEqual([true, 1024, 256])
    // Shown at most 4rem (64 px) high, its aspect kept.
    expect(await logo.evaluate((img: HTMLImageElement) => [img.getBoundingClientRect().height, img.getBoundingClientRect().width])).toEqual([64, 256])
    const colours = await page.evaluate(() => ({
      button: getComputedStyle(document.querySelector('button[type=submit]')!).backgroundColor,
      buttonText: getComputedStyle(document.querySelector('button[type=submit]')!).color,
      link: getComputedStyle(document.querySelector('.privacy a')!).color,
      summary: getComputedStyle(document.querySelector('nav.languages summary')!).color,
    }))
    expect(colours).toEqual({ button: 'rgb(20, 99, 44)', buttonText: 'rgb(255, 255, 255)', link: 'rgb(20, 99, 44)', summary: 'rgb(20, 99, 44)' })
    expect(await page.locator('.privacy a').getAttribute('rel')).toBe('noopener noreferrer')
    expect(refused).toEqual([])
    expect(await axeViolations(page)).toEqual([])
    await page.close()
  })

  test('the lightest grey the rule accepts passes axe’s contrast check everywhere the page paints it; the next lighter one is refused', async () => {
    const greys = Array.from({ length: 256 }, (_, v) => `#${v.toString(16).padStart(2, '0').repeat(3)}` as const)
    const lightest = greys.filter((grey) => accentContrast(grey).passes).at(-1)!
    const next = greys[greys.indexOf(lightest) + 1]!
    expect(accentContrast(next).passes).toBe(false)
    const { page, refused } = await watchedPage()
    await page.goto(await brandedClient(lightest))
    await showEveryAccent(page)
    expect(await page.locator('.alert a').evaluate((a) => getComputedStyle(a).color)).not.toBe('rgb(29, 78, 216)')
    expect(await axeViolations(page)).toEqual([])
    expect(refused).toEqual([])
    await page.close()
  })
})
