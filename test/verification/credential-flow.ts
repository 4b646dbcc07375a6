import { expect } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDevIssuer, issueDevCredential, type DevCredentialFormat, type DevStatusReference } from '../../src/credentials/dev/issuer.ts'
import { createDevWallet, type DevWallet } from '../../src/credentials/dev/wallet.ts'
import { createTestContext, json, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { testBrowser } from './browser.ts'

/**
 * The digital credential method over HTTP, for tests: an app with a trust list holding a development
 * issuer, a shop, wallets holding that issuer's credentials, and the page's steps (open a request, ask how it
 * stands, redeem it). A wallet's HTTP goes to the app in-process; `sent` keeps what it posted, for replays.
 */
export const NOW = new Date('2026-11-22T12:00:00.000Z')

export type StartedRequest = { request: string; wallet_url: string; qr_svg: string; dc_api: { protocol: string; data: any }[]; expires_in: number }

export async function openCredentialFlow(env: Record<string, string> = {}) {
  const issuer = await createDevIssuer(NOW)
  const dir = mkdtempSync(join(tmpdir(), 'ofage-trust-'))
  writeFileSync(join(dir, 'trust-list.pem'), issuer.rootCertificate)
  const ctx: TestContext = await createTestContext({ env: { CREDENTIAL_TRUST_LIST: join(dir, 'trust-list.pem'), ...env } })
  const shop = await ctx.createClient({ name: 'Wine shop' })
  const wallets: Partial<Record<string, DevWallet>> = {}
  const sent: { url: string; body: string }[] = []
  const fetcher = (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init)
    if (request.method === 'POST') sent.push({ url: request.url, body: await request.clone().text() })
    return ctx.handle(request)
  }) as typeof fetch

  /** A wallet holding one credential of the flow's issuer; `status` names its status list entry (SD-JWT only). */
  async function walletWith(format: DevCredentialFormat, age: number, options: { status?: DevStatusReference } = {}): Promise<DevWallet> {
    const key = `${format}:${age}:${options.status ? `${options.status.idx}@${options.status.uri}` : ''}`
    if (!wallets[key]) {
      const wallet = await createDevWallet()
      wallet.credentials.push(await issueDevCredential(issuer, { format, age, holderPublicKey: wallet.holder.publicKey, now: NOW, status: options.status }))
      wallets[key] = wallet
    }
    return wallets[key]!
  }

  /** Opens the page for the shop and starts a wallet request, as the page's script does. */
  async function startRequest(query: Record<string, string> = {}) {
    const browser = testBrowser(ctx)
    const { response, page } = await browser.open({ client_id: shop.id, state: 'st', ...query })
    expect(response.status).toBe(200)
    const action = page.action('/methods/credential')
    const base = action.split('?')[0]!
    const started = await browser.post(`${base}/start`, { csrf: page.csrf! })
    expect(started.status).toBe(200)
    const request = (await json(started)) as StartedRequest
    const status = async () => (await json(await browser.request(`${base}/status?request=${request.request}`))).status as string
    const redeem = (id = request.request) => browser.post(action, { csrf: page.csrf!, request: id }, { accept: 'text/html' })
    /** Hands the page a Digital Credentials API answer, `{ protocol, data }`, as its script does. */
    const answerInPage = (credential: unknown) => browser.post(`${base}/dc-response`, { csrf: page.csrf!, request: request.request, response: JSON.stringify(credential) })
    /** Opens another wallet request in the same session, as the page does when the visitor tries again. */
    const startAnother = async () => {
      const again = await browser.post(`${base}/start`, { csrf: page.csrf! })
      expect(again.status).toBe(200)
      return (await json(again)) as StartedRequest
    }
    return { browser, page, action, base, request, status, redeem, answerInPage, startAnother }
  }

  async function exchange(code: string) {
    return json(await ctx.exchange(shop.authorization, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 'st' }))
  }

  return { ctx, issuer, shop, sent, fetcher, walletWith, startRequest, exchange }
}

export type CredentialFlow = Awaited<ReturnType<typeof openCredentialFlow>>
