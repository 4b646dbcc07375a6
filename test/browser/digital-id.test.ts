import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Browser, Page } from 'playwright-core'
import { issueDevCredential, type DevIssuer } from '../../src/credentials/dev/issuer.ts'
import { createDevWallet, type DevWallet } from '../../src/credentials/dev/wallet.ts'
import { generateP256KeyPair } from '../credentials/pki.ts'
import { basic, queryRows } from '../helpers.ts'
import { ageMdocHolder, answerAnnexCRequest, type AnnexCHolder } from '../wallets/annex-c-wallet.ts'
import { issueMdoc } from '../wallets/mdoc.ts'
import { answerCrossDeviceRequest, answerSignedDcApiRequest, answerUnsignedDcApiRequest } from '../wallets/openid4vp-wallet.ts'
import { exchangeAtCallback, hasChromium, launchChromium, type RunningServer } from './chromium.ts'
import { CHROME_WITHOUT_MDOC, EVERY_PROTOCOL, installDigitalCredentials, SAFARI_26, startCredentialServer, type BrowserProfile, type WalletBehind } from './digital-credentials.ts'

/**
 * The digital ID on the hosted page, in headless Chromium against a real server, with the browser's Digital
 * Credentials API stood in for by an init script (digital-credentials.ts) and the wallet behind it written
 * apart from the verifier (test/wallets/): a Safari-like browser that carries only `org-iso-mdoc`, a
 * Chrome-like one without it and a HAIP wallet that answers only signed requests with encrypted answers, the
 * unsigned request, and cross-device `direct_post.jwt`. Every approval is exchanged for a token and counted
 * as `age_only`; every refusal is shown on the page, and costs an attempt only when the wallet's answer was
 * refused, never when the visitor dismissed the picker or the browser could not reach a wallet.
 */
const SHOP_CALLBACK = 'https://shop.example/callback'

let running: RunningServer
let browser: Browser
let shop: { id: string; secret: string }
let issuer: DevIssuer
let wallet: DevWallet
let holder: AnnexCHolder

beforeAll(async () => {
  if (!hasChromium) return
  ;({ running, issuer, shop } = await startCredentialServer(SHOP_CALLBACK))
  wallet = await createDevWallet()
  wallet.credentials.push(await issueDevCredential(issuer, { format: 'sd-jwt', age: 34, holderPublicKey: wallet.holder.publicKey, now: new Date() }))
  wallet.credentials.push(await issueDevCredential(issuer, { format: 'mdl', age: 34, holderPublicKey: wallet.holder.publicKey, now: new Date() }))
  const device = await generateP256KeyPair()
  const mdl = await issueMdoc({
    signerKey: issuer.signerKey,
    signerCertificate: issuer.signerCertificate,
    holderPublicKey: device.publicKey,
    docType: 'org.iso.18013.5.1.mDL',
    namespace: 'org.iso.18013.5.1',
    ages: { '16': true, '18': true, '21': true },
    validFrom: new Date(Date.now() - 86_400_000),
    validUntil: new Date(Date.now() + 90 * 86_400_000),
  })
  holder = ageMdocHolder({ 'org.iso.18013.5.1.mDL': mdl }, device.privateKey)
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  await running?.stop()
})

/** Apple Wallet behind Safari: answers the org-iso-mdoc request for the origin it is told. */
const appleWallet =
  (options: { lieAboutOrigin?: string; tamper?: boolean } = {}): WalletBehind =>
  async (requests, origin) => {
    const request = requests.find((r) => r.protocol === 'org-iso-mdoc')
    if (!request) return 'NotAllowedError'
    const answer = await answerAnnexCRequest(request.data, options.lieAboutOrigin ?? origin, { holder })
    if (!answer.ok) return 'NotAllowedError'
    if (!options.tamper) return { protocol: 'org-iso-mdoc', data: answer.data }
    const bytes = Buffer.from(answer.data.response, 'base64url')
    bytes[bytes.length - 3]! ^= 1
    return { protocol: 'org-iso-mdoc', data: { response: bytes.toString('base64url') } }
  }

/** A HAIP wallet: signed requests only, answered encrypted (dc_api.jwt); it never looks at the unsigned one. */
const haipWallet: WalletBehind = async (requests, origin) => {
  const signed = requests.find((r) => r.protocol === 'openid4vp-v1-signed')
  if (!signed) return 'NotAllowedError'
  const data = await answerSignedDcApiRequest(wallet, signed as never, { origin, now: new Date() })
  return 'error' in data ? 'NotAllowedError' : { protocol: signed.protocol, data }
}

async function openPage(profile: BrowserProfile, behind: WalletBehind, state: string) {
  const context = await browser.newContext()
  const installed = await installDigitalCredentials(context, profile, behind)
  const page = await context.newPage()
  await page.route(`${SHOP_CALLBACK}**`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title><h1>Back at the shop</h1>' }))
  await page.goto(`${running.baseUrl}/?${new URLSearchParams({ client_id: shop.id, redirect_uri: SHOP_CALLBACK, state })}`)
  return { page, calls: installed.calls, close: () => context.close() }
}

const site = (state: string) => ({ baseUrl: running.baseUrl, client: shop, callback: SHOP_CALLBACK, state })

/** The failed attempts of the session this page shows (its id is in the method form's action). */
async function failedAttempts(page: Page): Promise<number> {
  const action = (await page.locator('[data-credential-form]').getAttribute('action'))!
  const id = /\/s\/([^/]+)\//.exec(new URL(action, running.baseUrl).pathname)![1]!
  const [row] = await queryRows<{ n: number }>(running.services.deps.db, sql`select failed_attempts as n from verification_sessions where id_hash = ${createHash('sha256').update(id).digest('hex')}`)
  return row!.n
}

async function ageOnlyCount(): Promise<number> {
  const usage = (await (await fetch(`${running.baseUrl}/api/oauth/usage?client_id=${shop.id}`, { headers: { authorization: basic(shop.id, shop.secret) } })).json()) as { usage: Record<string, number> }
  return usage.usage.age_only_count ?? 0
}

async function useWalletOnThisDevice(page: Page) {
  await page.getByRole('button', { name: 'Use a wallet on this device' }).click()
}

describe.skipIf(!hasChromium)('digital ID through the Digital Credentials API, in Chromium', () => {
  test('Safari-like (org-iso-mdoc only): Apple Wallet answers the Annex C request, the site gets its token, counted age_only', async () => {
    const before = await ageOnlyCount()
    const { page, calls, close } = await openPage(SAFARI_26, appleWallet(), 'safari-1')
    await useWalletOnThisDevice(page)
    const { validation } = await exchangeAtCallback(page, site('safari-1'))
    expect(validation).toMatchObject({ valid: true, age_verified: true, age_over: 18 })
    // One call carried all three requests; the browser kept the one it speaks.
    expect(calls.map((requests) => requests.map((r) => r.protocol))).toEqual([['org-iso-mdoc']])
    expect(await ageOnlyCount()).toBe(before + 1)
    await close()
  }, 30_000)

  test('Chrome-like without org-iso-mdoc: a HAIP-only wallet answers the signed request encrypted, the site gets its token', async () => {
    const before = await ageOnlyCount()
    const { page, calls, close } = await openPage(CHROME_WITHOUT_MDOC, haipWallet, 'haip-1')
    await useWalletOnThisDevice(page)
    const { validation } = await exchangeAtCallback(page, site('haip-1'))
    expect(validation).toMatchObject({ valid: true, age_over: 18 })
    expect(calls[0]!.map((r) => r.protocol)).toEqual(['openid4vp-v1-signed', 'openid4vp-v1-unsigned'])
    expect(await ageOnlyCount()).toBe(before + 1)
    await close()
  }, 30_000)

  test('a wallet that takes the unsigned request answers it encrypted (dc_api.jwt) and completes', async () => {
    const unsignedWallet: WalletBehind = async (requests, origin) => {
      const unsigned = requests.find((r) => r.protocol === 'openid4vp-v1-unsigned')!
      return { protocol: unsigned.protocol, data: await answerUnsignedDcApiRequest(wallet, unsigned, { origin, now: new Date() }) }
    }
    const { page, close } = await openPage(EVERY_PROTOCOL, unsignedWallet, 'unsigned-1')
    await useWalletOnThisDevice(page)
    expect((await exchangeAtCallback(page, site('unsigned-1'))).validation).toMatchObject({ valid: true, age_over: 18 })
    await close()
  }, 30_000)

  test('an Annex C answer made for another origin, or tampered with, is refused with a message and costs an attempt', async () => {
    for (const [state, behind] of [['lie-1', appleWallet({ lieAboutOrigin: 'https://rival.example' })], ['tamper-1', appleWallet({ tamper: true })]] as const) {
      const { page, close } = await openPage(SAFARI_26, behind, state)
      await useWalletOnThisDevice(page)
      await page.getByText('could not be opened').waitFor()
      expect(page.url()).toStartWith(running.baseUrl)
      expect(await failedAttempts(page)).toBe(1)
      await close()
    }
  }, 30_000)

  test('an answer in a protocol the page did not ask in is refused with a message', async () => {
    const oldWallet: WalletBehind = async (requests, origin) => {
      const signed = requests.find((r) => r.protocol === 'openid4vp-v1-signed')!
      return { protocol: 'openid4vp', data: await answerSignedDcApiRequest(wallet, signed as never, { origin, now: new Date() }) }
    }
    const { page, close } = await openPage(CHROME_WITHOUT_MDOC, oldWallet, 'protocol-1')
    await useWalletOnThisDevice(page)
    await page.getByText('did not ask for').waitFor()
    await close()
  }, 30_000)

  test('a dismissed picker, or a browser that reaches no wallet, is explained on the page, never a reload, and costs nothing', async () => {
    const { page, close } = await openPage(SAFARI_26, async () => 'NotAllowedError', 'dismiss-1')
    let reloaded = false
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) reloaded = true
    })
    await useWalletOnThisDevice(page)
    await page.getByText('No wallet on this device shared an answer').waitFor()
    expect(reloaded).toBe(false)
    expect(await failedAttempts(page)).toBe(0)
    await close()

    // Announces no protocol of ours: the page says so instead of calling the API.
    const none = await openPage({ protocols: ['some-other-protocol'], announcesProtocols: true }, async () => 'NotAllowedError', 'none-1')
    await useWalletOnThisDevice(none.page)
    await none.page.getByText('could not reach a wallet on this device').waitFor()
    expect(none.calls).toEqual([])
    // Carries none of them and says so only by throwing (a TypeError from the API).
    await none.close()
    const quiet = await openPage({ protocols: ['some-other-protocol'], announcesProtocols: false }, async () => 'NotAllowedError', 'none-2')
    await useWalletOnThisDevice(quiet.page)
    await quiet.page.getByText('could not reach a wallet on this device').waitFor()
    await quiet.close()
  }, 30_000)

  test('cross-device: the phone answers direct_post.jwt (only the JWE is posted) and the page completes by itself', async () => {
    const { page, close } = await openPage(CHROME_WITHOUT_MDOC, haipWallet, 'cross-1')
    await page.getByRole('button', { name: 'Use my ID wallet' }).click()
    const walletUrl = await page.getByRole('link', { name: 'Open the wallet on this device' }).getAttribute('href')
    const posted: string[] = []
    const fetcher = (async (input: string | URL | Request, init?: RequestInit) => {
      if (init?.method === 'POST') posted.push(String(init.body))
      return fetch(input, init)
    }) as typeof fetch
    const answer = await answerCrossDeviceRequest(wallet, walletUrl!, { now: new Date(), fetcher })
    expect(answer.status).toBe(200)
    expect(posted.map((body) => [...new URLSearchParams(body).keys()])).toEqual([['response']])
    expect((await exchangeAtCallback(page, site('cross-1'))).validation).toMatchObject({ valid: true, age_over: 18 })
    await close()
  }, 30_000)
})
