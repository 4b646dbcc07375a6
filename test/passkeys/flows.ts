import { expect } from 'bun:test'
import { decodeJwt } from 'jose'
import type { AgeTokenClaimsType } from '../../src/oauth/model.ts'
import { json, PUBLIC_URL, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { callback, testBrowser } from '../verification/browser.ts'
import { softwareAuthenticator } from './authenticator.ts'

export type Browser = ReturnType<typeof testBrowser>
export type Client = Awaited<ReturnType<TestContext['createClient']>>

/** The page's origin in the HTTP tests (APP_URL defaults to PUBLIC_URL): what the authenticator signs. */
export const origin = PUBLIC_URL

/**
 * The visitor's side of the passkey ceremonies over HTTP, for one test context: open a page, pass a sandbox
 * check, save a passkey, use or delete it, with a software authenticator in place of the browser's.
 */
export function passkeyFlows(ctx: TestContext, sandbox: Client) {
  /** Opens the page for a client and returns its session path and CSRF token (read from the passkey panel). */
  async function openPage(browser: Browser, client: Client, query: Record<string, string> = {}) {
    const { response, page } = await browser.open({ client_id: client.id, state: 'st', ...query })
    expect(response.status).toBe(200)
    const sessionPath = /\/s\/[A-Za-z0-9_-]+/.exec(page.html)![0]
    const csrf = /data-csrf="([^"]+)"/.exec(page.html)![1]!
    return { html: page.html, sessionPath, csrf, page }
  }

  function postJson(browser: Browser, path: string, body: unknown, headers: Record<string, string> = {}) {
    return browser.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  }

  async function exchange(client: Client, code: string) {
    const response = await ctx.exchange(client.authorization, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 'st' })
    expect(response.status).toBe(200)
    const body = await json(response)
    return { token: body.access_token as string, claims: decodeJwt<AgeTokenClaimsType>(body.access_token) }
  }

  /** A browser that passed a sandbox check (test age `age`), and the `sub` the client got for it. */
  async function checkedBrowser(age = '25', client = sandbox) {
    const browser = testBrowser(ctx)
    const { page } = await openPage(browser, client)
    const done = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age, method_class: 'biometric' })
    const { claims } = await exchange(client, callback(done)!.code)
    return { browser, sub: claims.sub! }
  }

  /** Saves a passkey from a browser holding an age pass; returns the authenticator that holds it. */
  async function savePasskey(browser: Browser, authenticator = softwareAuthenticator(), options: { synced?: boolean } = {}) {
    const { sessionPath, csrf } = await openPage(browser, sandbox)
    const started = await json(await postJson(browser, `${sessionPath}/passkey/options`, { csrf, purpose: 'register' }))
    const { response, credential } = authenticator.register(started.options, { origin, synced: options.synced })
    const saved = await postJson(browser, `${sessionPath}/passkey/register`, { csrf, response })
    expect(saved.status).toBe(200)
    expect(await json(saved)).toMatchObject({ outcome: 'saved' })
    return { authenticator, credential }
  }

  /** One "Use my passkey" (or delete) ceremony on a fresh page; returns the server's answer. */
  async function usePasskey(
    authenticator: ReturnType<typeof softwareAuthenticator>,
    { browser = testBrowser(ctx), client = sandbox, query = {}, purpose = 'verify', bend = {} }: {
      browser?: Browser
      client?: Client
      query?: Record<string, string>
      purpose?: 'verify' | 'delete'
      bend?: Omit<Parameters<ReturnType<typeof softwareAuthenticator>['assert']>[1], 'origin'>
    } = {},
  ) {
    const { sessionPath, csrf } = await openPage(browser, client, query)
    const started = await json(await postJson(browser, `${sessionPath}/passkey/options`, { csrf, purpose }))
    const assertion = authenticator.assert(started.options, { origin, ...bend })
    const path = purpose === 'verify' ? `${sessionPath}/passkey` : `${sessionPath}/passkey/delete`
    const response = await postJson(browser, path, { csrf, response: assertion })
    return { response, body: await json(response), browser, sessionPath, csrf, assertion }
  }

  return { openPage, postJson, exchange, checkedBrowser, savePasskey, usePasskey }
}
