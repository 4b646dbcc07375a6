import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { languageCodes } from '../../src/i18n/language-codes.ts'
import { languages } from '../../src/i18n/languages.ts'
import { createClient } from '../../src/clients/registry.ts'
import { axeViolations, hasChromium, launchChromium, type RunningServer } from '../browser/chromium.ts'
import { startCredentialServer } from '../browser/digital-credentials.ts'

/**
 * The hosted page in each of its 27 languages, in one Chromium against one listening server: a sandbox
 * client's page, and a production client's with the face check and the digital ID (the digital ID tests' server, with the
 * estimator's worker started, as the face check is offered only with one, though no face is checked here).
 */
const CALLBACK = 'https://shop.example/callback'

let running: RunningServer
let browser: Browser
let page: Page
let clientId: string
let liveClientId: string

beforeAll(async () => {
  if (!hasChromium) return
  const started = await startCredentialServer(CALLBACK, { env: { FACE_CHECK: '1' }, estimator: true })
  running = started.running
  liveClientId = started.shop.id
  clientId = (await createClient(running.services.deps, { name: 'Shop Example', redirectUris: [CALLBACK], sandbox: true })).client.id
  browser = await launchChromium()
  page = await browser.newPage()
  await page.setViewportSize({ width: 390, height: 844 })
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  await running?.stop()
})

function pageUrl(lang: string): string {
  return `${running.baseUrl}/?${new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, state: `lang-${lang}`, age_required: '18', lang })}`
}

describe.skipIf(!hasChromium)('the hosted page in every language', () => {
  test.each(languageCodes)('%s: says it is in that language, and axe finds no violation, after a failed check and on an error page too', async (lang) => {
    await page.goto(pageUrl(lang))
    expect(await page.getAttribute('html', 'lang')).toBe(lang)
    expect(await page.textContent('h1')).toBe(languages[lang].heading)
    expect(await page.textContent('.asks')).toBe(languages[lang].asks('Shop Example', 18))
    expect(await axeViolations(page)).toEqual([])
    // A check that fails: the alert with its attempts left and the way back, in the same language.
    await page.locator('input[name=age]').fill('12')
    await page.locator('form button[type=submit]').first().click()
    await page.getByRole('alert').waitFor()
    expect(await page.getAttribute('html', 'lang')).toBe(lang)
    expect(await page.getByRole('alert').textContent()).toContain(languages[lang].attemptsLeft(4))
    expect(await axeViolations(page)).toEqual([])
    // A link no client sent: the error page.
    await page.goto(`${running.baseUrl}/?client_id=nope&redirect_uri=x&lang=${lang}`)
    expect(await page.getAttribute('html', 'lang')).toBe(lang)
    expect(await axeViolations(page)).toEqual([])
  }, 30_000)

  test.each(languageCodes)('%s: a production client’s page, with the face check and the digital ID, passes axe', async (lang) => {
    await page.goto(`${running.baseUrl}/?${new URLSearchParams({ client_id: liveClientId, redirect_uri: CALLBACK, state: `live-${lang}`, age_required: '18', lang })}`)
    expect(await page.getAttribute('html', 'lang')).toBe(lang)
    expect(await page.locator('form.method.face').count()).toBe(1)
    expect(await page.locator('form.method.credential').count()).toBe(1)
    expect(await page.locator('form.method:not(.face):not(.credential)').count()).toBe(0)
    expect(await axeViolations(page)).toEqual([])
  }, 30_000)

  test('Arabic is laid out right to left, and the other languages left to right', async () => {
    await page.goto(pageUrl('ar'))
    expect(await page.getAttribute('html', 'dir')).toBe('rtl')
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('main')!).direction)).toBe('rtl')
    // The heading's words start at the right edge of the card, as Arabic reads.
    const { textLeft, textRight, cardLeft, cardRight } = await page.evaluate(() => {
      const range = document.createRange()
      range.selectNodeContents(document.querySelector('h1')!)
      const text = range.getBoundingClientRect()
      const card = document.querySelector('main')!.getBoundingClientRect()
      return { textLeft: text.left, textRight: text.right, cardLeft: card.left, cardRight: card.right }
    })
    expect(cardRight - textRight).toBeLessThan(textLeft - cardLeft)

    await page.goto(pageUrl('de'))
    expect(await page.getAttribute('html', 'dir')).toBeNull()
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('main')!).direction)).toBe('ltr')
  }, 30_000)

  test('the language switch, opened, names all 27 languages in their own words and passes axe, right to left too', async () => {
    for (const lang of ['ar', 'pl'] as const) {
      await page.goto(pageUrl(lang))
      const names = page.locator('nav.languages li')
      expect(await names.first().isVisible()).toBe(false)
      await page.locator('nav.languages summary').click()
      expect(await names.allTextContents()).toEqual(languageCodes.map((code) => languages[code].languageName))
      expect(await page.locator('nav.languages [aria-current]').textContent()).toBe(languages[lang].languageName)
      // The Arabic name is marked right to left on a left-to-right page, and the other names are not.
      const arabic = page.locator('nav.languages [lang="ar"]')
      expect(await arabic.getAttribute('dir')).toBe(lang === 'ar' ? null : 'rtl')
      expect(await axeViolations(page)).toEqual([])
    }
    await page.getByRole('link', { name: 'Suomi' }).click()
    expect(await page.getAttribute('html', 'lang')).toBe('fi')
    expect(await page.textContent('h1')).toBe(languages.fi.heading)
  }, 30_000)
})
