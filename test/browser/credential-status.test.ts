import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { issueDevCredential, type DevIssuer, type DevStatusReference } from '../../src/credentials/dev/issuer.ts'
import { createDevWallet, presentToVerifier, type DevWallet } from '../../src/credentials/dev/wallet.ts'
import { signDevStatusList, startStatusServer, type StatusServer } from '../credentials/status-fixtures.ts'
import { freePort } from '../helpers.ts'
import { exchangeAtCallback, hasChromium, launchChromium, type RunningServer } from './chromium.ts'
import { startCredentialServer } from './digital-credentials.ts'

/**
 * Revocation as the visitor sees it, in headless Chromium against a real server: a PID (SD-JWT VC) names its
 * entry in its issuer's Token Status List, served over loopback http and signed by the issuer's document signer.
 * The phone (the dev wallet) answers the QR code's request over HTTP; the page, which the visitor never reloads,
 * completes, or says why not and what to do next.
 */
const SHOP_CALLBACK = 'https://shop.example/callback'
// draft-ietf-oauth-status-list §7.1.
const VALID = 0
const INVALID = 1

let running: RunningServer
let browser: Browser
let shop: { id: string; secret: string }
let issuer: DevIssuer
let lists: StatusServer
let listUri: string

beforeAll(async () => {
  if (!hasChromium) return
  ;({ running, issuer, shop } = await startCredentialServer(SHOP_CALLBACK))
  lists = startStatusServer()
  listUri = lists.url('/pid-statuses.jwt')
  lists.route('/pid-statuses.jwt', await signDevStatusList(issuer, { statuses: [VALID, INVALID], sub: listUri, iat: Math.floor(Date.now() / 1000) - 60, ttl: 300 }))
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  lists?.stop()
  await running?.stop()
})

async function pidWallet(status: DevStatusReference): Promise<DevWallet> {
  const wallet = await createDevWallet()
  wallet.credentials.push(await issueDevCredential(issuer, { format: 'sd-jwt', age: 34, holderPublicKey: wallet.holder.publicKey, now: new Date(), status }))
  return wallet
}

async function openPage(state: string) {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.route(`${SHOP_CALLBACK}**`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title><h1>Back at the shop</h1>' }))
  await page.goto(`${running.baseUrl}/?${new URLSearchParams({ client_id: shop.id, redirect_uri: SHOP_CALLBACK, state })}`)
  return { page, close: () => context.close() }
}

/** The visitor asks for the QR code; the phone scans it and answers. Returns the wallet's HTTP status. */
async function scanWith(page: Page, wallet: DevWallet): Promise<number> {
  await page.getByRole('button', { name: 'Use my ID wallet' }).click()
  const walletUrl = await page.getByRole('link', { name: 'Open the wallet on this device' }).getAttribute('href')
  return (await presentToVerifier(wallet, walletUrl!)).status
}

const site = (state: string) => ({ baseUrl: running.baseUrl, client: shop, callback: SHOP_CALLBACK, state })

describe.skipIf(!hasChromium)('a digital ID checked against its issuer’s status list, in Chromium', () => {
  test('a PID whose entry is VALID completes: back at the site with a validated age token', async () => {
    const { page, close } = await openPage('status-valid')
    expect(await scanWith(page, await pidWallet({ idx: 0, uri: listUri }))).toBe(200)
    const { validation } = await exchangeAtCallback(page, site('status-valid'))
    expect(validation).toMatchObject({ valid: true, age_verified: true, age_over: 18 })
    await close()
  }, 30_000)

  test('a PID whose entry is INVALID: the page says it was withdrawn by its issuer and stays on the page', async () => {
    const { page, close } = await openPage('status-invalid')
    expect(await scanWith(page, await pidWallet({ idx: 1, uri: listUri }))).toBe(400)
    await page.getByText('This ID has been withdrawn by its issuer').waitFor()
    expect(await page.getByText('4 attempts left.').count()).toBe(1)
    expect(page.url()).toStartWith(running.baseUrl)
    await close()
  }, 30_000)

  test('an unreachable list: the page says try again in a moment and offers the wallet again, which completes once the list is back', async () => {
    const port = await freePort()
    const uri = `http://127.0.0.1:${port}/later.jwt`
    const wallet = await pidWallet({ idx: 0, uri })
    const { page, close } = await openPage('status-later')
    expect(await scanWith(page, wallet)).toBe(400)
    await page.getByText('Try again in a moment; this did not use up a try.').waitFor()
    expect(await page.getByText('attempts left').count()).toBe(0)
    await page.getByRole('button', { name: 'Use my ID wallet' }).waitFor()

    const back = startStatusServer({}, port)
    try {
      back.route('/later.jwt', await signDevStatusList(issuer, { statuses: [VALID], sub: uri, iat: Math.floor(Date.now() / 1000) - 60 }))
      expect(await scanWith(page, wallet)).toBe(200)
      const { validation } = await exchangeAtCallback(page, site('status-later'))
      expect(validation).toMatchObject({ valid: true, age_over: 18 })
      expect(back.hits.get('/later.jwt')).toBe(1)
    } finally {
      back.stop()
      await close()
    }
  }, 30_000)
})
