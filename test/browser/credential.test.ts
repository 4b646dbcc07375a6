import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import type { Browser } from 'playwright-core'
import { issueDevCredential } from '../../src/credentials/dev/issuer.ts'
import { createDevWallet, presentToVerifier, type DevWallet } from '../../src/credentials/dev/wallet.ts'
import { basic } from '../helpers.ts'
import { generateP256KeyPair } from '../credentials/pki.ts'
import { answerAvLink, type AvAppHolder } from '../wallets/av-app-wallet.ts'
import { issueMdoc } from '../wallets/mdoc.ts'
import { axeViolations, exchangeAtCallback, hasChromium, launchChromium, updatingScreenshots, type RunningServer } from './chromium.ts'
import { startCredentialServer } from './digital-credentials.ts'
import { credentialsOf, pageWithAuthenticator } from './webauthn.ts'

/**
 * A visitor without a camera at a production client, in headless Chromium against a real server: the
 * page shows a QR code, the test wallet (standing in for a phone that scanned it) answers over HTTP, and
 * the page, which never reloads by hand, notices and returns to the site with a code.
 */
const SHOP_CALLBACK = 'https://shop.example/callback'

let running: RunningServer
let browser: Browser
let shop: { id: string; secret: string }
let wallet: DevWallet
let avApp: AvAppHolder

beforeAll(async () => {
  if (!hasChromium) return
  // At localhost: the passkey that follows needs a domain as its RP ID.
  const started = await startCredentialServer(SHOP_CALLBACK)
  ;({ running, shop } = started)
  const issuer = started.issuer
  wallet = await createDevWallet()
  wallet.credentials.push(await issueDevCredential(issuer, { format: 'av', age: 34, holderPublicKey: wallet.holder.publicKey, now: new Date() }))
  // The EU age verification app's attestation, issued by the same trusted issuer with the independent mdoc code.
  const device = await generateP256KeyPair()
  const now = Date.now()
  const mdoc = await issueMdoc({
    signerKey: issuer.signerKey,
    signerCertificate: issuer.signerCertificate,
    holderPublicKey: device.publicKey,
    docType: 'eu.europa.ec.av.1',
    namespace: 'eu.europa.ec.av.1',
    ages: { '18': true },
    validFrom: new Date(now - 86_400_000),
    validUntil: new Date(now + 90 * 86_400_000),
  })
  avApp = { mdoc, privateKey: device.privateKey }
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  await running?.stop()
})

describe.skipIf(!hasChromium)('digital credential in headless Chromium', () => {
  test('cross-device: QR code, the wallet posts its answer, the page completes by itself; the token is validated and counted', async () => {
    const page = await (await browser.newContext()).newPage()
    const blocked: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') blocked.push(message.text())
    })
    await page.route(`${SHOP_CALLBACK}**`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title><h1>Back at the shop</h1>' }))
    const query = new URLSearchParams({ client_id: shop.id, redirect_uri: SHOP_CALLBACK, state: 'cred-1' })
    await page.goto(`${running.baseUrl}/?${query}`)
    expect(await page.textContent('body')).toContain('Use a digital ID')

    await page.getByRole('button', { name: 'Use my ID wallet' }).click()
    await page.getByRole('img', { name: 'QR code' }).waitFor()
    expect(await axeViolations(page)).toEqual([])
    const walletUrl = await page.getByRole('link', { name: 'Open the wallet on this device' }).getAttribute('href')
    expect(walletUrl).toStartWith('openid4vp://')

    // The phone: fetches the signed request, discloses age_over_18 from its mdoc, posts to our endpoint.
    const answer = await presentToVerifier(wallet, walletUrl!)
    expect(answer.status).toBe(200)

    const { validation: validated, callback: back } = await exchangeAtCallback(page, site('cred-1'))
    expect(back.searchParams.get('state')).toBe('cred-1')
    expect(validated).toMatchObject({ valid: true, age_verified: true, age_over: 18, verification_level: 'first_verification' })
    const usage = (await (await fetch(`${running.baseUrl}/api/oauth/usage?client_id=${shop.id}`, { headers: { authorization: basic(shop.id, shop.secret) } })).json()) as {
      usage: Record<string, number>
    }
    expect(usage.usage).toMatchObject({ total_verifications: 1, age_only_count: 1, biometric_count: 0 })
    expect(blocked.filter((line) => line.includes('Content Security Policy'))).toEqual([])
  }, 30_000)

  test('the EU age verification app: its own QR code and av:// link, named apart from the ID wallets; the page completes by itself', async () => {
    const page = await (await browser.newContext()).newPage()
    await page.route(`${SHOP_CALLBACK}**`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title><h1>Back at the shop</h1>' }))
    await page.goto(authorize('av-1', '18'))
    await page.getByRole('button', { name: 'Use my ID wallet' }).click()
    await page.getByRole('img', { name: 'EU age verification app' }).waitFor()
    // Each code under the name of the app it is for, and each link saying which app it opens.
    expect(await page.getByRole('heading', { name: 'EU age verification app' }).isVisible()).toBe(true)
    expect(await page.getByRole('heading', { name: 'EU Digital Identity Wallet and other ID wallets' }).isVisible()).toBe(true)
    expect(await page.getByRole('link', { name: 'Open the wallet on this device' }).getAttribute('href')).toStartWith('openid4vp://')
    const avUrl = await page.getByRole('link', { name: 'Open the age verification app on this device' }).getAttribute('href')
    expect(avUrl).toStartWith('av://?')
    expect(await axeViolations(page)).toEqual([])

    // The phone: the app reads the request from the link and posts its answer in the clear to the response URI.
    expect((await answerAvLink(avUrl!, avApp)).status).toBe(200)
    const { validation } = await exchangeAtCallback(page, site('av-1'))
    expect(validation).toMatchObject({ valid: true, age_verified: true, age_over: 18 })
  }, 30_000)

  test('the promise of issue 9: no camera, a digital ID, a passkey saved, then back on another device with it', async () => {
    const first = await browser.newContext()
    const one = await pageWithAuthenticator(first, SHOP_CALLBACK)
    await one.page.goto(authorize('promise-1', '18'))
    await one.page.getByRole('button', { name: 'Use my ID wallet' }).click()
    const walletUrl = await one.page.getByRole('link', { name: 'Open the wallet on this device' }).getAttribute('href')
    expect((await presentToVerifier(wallet, walletUrl!)).status).toBe(200)
    const original = await exchangeAtCallback(one.page, site('promise-1'))

    // Back on the page in that browser: the age pass offers a passkey for the visitor's other devices.
    await one.page.goto(authorize('promise-2', '18'))
    await one.page.getByRole('button', { name: 'Save a passkey for your other devices' }).click()
    await one.page.getByText('Your passkey is saved.').waitFor()
    const [passkey] = await credentialsOf(one.cdp, one.authenticatorId)
    await first.close()

    const second = await browser.newContext()
    const two = await pageWithAuthenticator(second, SHOP_CALLBACK)
    await two.cdp.send('WebAuthn.addCredential', { authenticatorId: two.authenticatorId, credential: passkey! })
    await two.page.goto(authorize('promise-3', '18'))
    await two.page.getByRole('button', { name: 'Use my passkey' }).click()
    const again = await exchangeAtCallback(two.page, site('promise-3'))
    expect(again.validation).toMatchObject({ valid: true, age_over: 18, verification_level: 're_verification' })
    expect(again.sub).toBe(original.sub)
    await second.close()
  }, 60_000)

  // `bun run screenshots` only: registered then, so that an ordinary run reports no skipped test.
  if (updatingScreenshots) test('screenshots for docs/', async () => {
    mkdirSync('docs/screenshots', { recursive: true })
    for (const [name, viewport] of [['desktop', { width: 1280, height: 860 }], ['phone', { width: 390, height: 844 }]] as const) {
      const page = await browser.newPage({ viewport })
      await page.goto(`${running.baseUrl}/?${new URLSearchParams({ client_id: shop.id, redirect_uri: SHOP_CALLBACK, state: 'shot' })}`)
      await page.getByRole('button', { name: 'Use my ID wallet' }).click()
      await page.getByRole('img', { name: 'QR code' }).waitFor()
      await page.screenshot({ path: `docs/screenshots/credential-${name}.png`, fullPage: true })
      await page.close()
    }
  }, 60_000)
})

const site = (state: string) => ({ baseUrl: running.baseUrl, client: shop, callback: SHOP_CALLBACK, state })

function authorize(state: string, age: string): string {
  return `${running.baseUrl}/?${new URLSearchParams({ client_id: shop.id, redirect_uri: SHOP_CALLBACK, state, age_required: age })}`
}

