import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import * as oauth from 'oauth4webapi'
import * as openid from 'openid-client'
import type { Browser, Page } from 'playwright-core'
import { createClient } from '../../src/clients/registry.ts'
import { hasChromium, launchChromium, startTestServer, type RunningServer } from './chromium.ts'

/**
 * Issue 11: two standard OAuth libraries as the site's backend, configured only by discovery (RFC 8414),
 * with no adapter code: authorization URL with PKCE (and with PAR) → the page in Chromium (sandbox check)
 * → callback (with iss) → form-encoded exchange → the token checked locally through `jwks_uri`.
 * The only setting beyond the defaults is allowing http, since the test server has no TLS.
 */
const CALLBACK = 'https://shop.example/callback'

let running: RunningServer
let browser: Browser
let shop: { id: string; secret: string }
let parOnly: { id: string; secret: string }

beforeAll(async () => {
  if (!hasChromium) return
  running = await startTestServer()
  const create = async (name: string, requirePushedRequests = false) => {
    const { client, secret } = await createClient(running.services.deps, { name, redirectUris: [CALLBACK], sandbox: true, requirePushedRequests })
    return { id: client.id, secret }
  }
  shop = await create('Standard Shop')
  parOnly = await create('Pushed Shop', true)
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  await running?.stop()
})

/** The visitor: opens the URL the library built, passes the sandbox check, lands on the site's callback. */
async function visit(url: URL | string, age = '30'): Promise<{ callback: URL; page: Page }> {
  const page = await browser.newPage()
  await page.route(`${CALLBACK}**`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title>' }))
  await page.goto(String(url))
  await page.getByLabel('Test age').fill(age)
  await page.getByRole('button', { name: 'Complete test verification' }).click()
  await page.waitForURL(`${CALLBACK}**`, { timeout: 15_000 })
  return { callback: new URL(page.url()), page }
}

/** What the site does with the access token: verify it locally with the key set the metadata names. */
async function verifyLocally(accessToken: string, metadata: { issuer: string; jwks_uri?: string }, audience: string) {
  const keys = createRemoteJWKSet(new URL(metadata.jwks_uri!))
  const { payload } = await jwtVerify(accessToken, keys, { issuer: metadata.issuer, audience, algorithms: ['RS256'] })
  return payload
}

describe.skipIf(!hasChromium)('oauth4webapi 3.8.8', () => {
  const options = { [oauth.allowInsecureRequests]: true }
  const discover = async () => {
    const issuer = new URL(running.baseUrl)
    return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...options }))
  }

  test('authorization code with PKCE and state, client_secret_basic, the token verified through jwks_uri', async () => {
    const as = await discover()
    const client: oauth.Client = { client_id: shop.id }
    const verifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      client_id: client.client_id,
      response_type: 'code',
      redirect_uri: CALLBACK,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      age_required: '18',
    }).toString()
    const { callback, page } = await visit(url)
    const params = oauth.validateAuthResponse(as, client, callback, state)
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(shop.secret), params, CALLBACK, verifier, options)
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response)
    expect(tokens.token_type).toBe('bearer')
    const claims = await verifyLocally(tokens.access_token, as, shop.id)
    expect(claims).toMatchObject({ age_verified: true, age_over: 18, sandbox: true })
    await page.close()
  }, 60_000)

  test('a pushed request, client_secret_post; a wrong code_verifier is refused', async () => {
    const as = await discover()
    const client: oauth.Client = { client_id: parOnly.id }
    const auth = oauth.ClientSecretPost(parOnly.secret)
    const push = async (verifier: string) => {
      const params = new URLSearchParams({ response_type: 'code', redirect_uri: CALLBACK, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', age_required: '21' })
      const pushed = await oauth.processPushedAuthorizationResponse(as, client, await oauth.pushedAuthorizationRequest(as, client, auth, params, options))
      const url = new URL(as.authorization_endpoint!)
      url.search = new URLSearchParams({ client_id: client.client_id, request_uri: pushed.request_uri }).toString()
      return url
    }
    const verifier = oauth.generateRandomCodeVerifier()
    const { callback, page } = await visit(await push(verifier))
    const params = oauth.validateAuthResponse(as, client, callback, oauth.expectNoState)
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, CALLBACK, verifier, options))
    expect((await verifyLocally(tokens.access_token, as, parOnly.id)).age_over).toBe(21)
    await page.close()

    const second = await visit(await push(oauth.generateRandomCodeVerifier()))
    const secondParams = oauth.validateAuthResponse(as, client, second.callback, oauth.expectNoState)
    const refused = await oauth.authorizationCodeGrantRequest(as, client, auth, secondParams, CALLBACK, oauth.generateRandomCodeVerifier(), options)
    const error = await oauth.processAuthorizationCodeResponse(as, client, refused).catch((cause: unknown) => cause)
    expect(error).toBeInstanceOf(oauth.ResponseBodyError)
    expect((error as oauth.ResponseBodyError).error).toBe('invalid_grant')
    await second.page.close()
  }, 60_000)
})

describe.skipIf(!hasChromium)('openid-client 6.8.9', () => {
  const discover = (client: { id: string; secret: string }) =>
    openid.discovery(new URL(running.baseUrl), client.id, client.secret, undefined, { algorithm: 'oauth2', execute: [openid.allowInsecureRequests] })

  test('authorization code with PKCE, its default client_secret_post, the token verified through jwks_uri', async () => {
    const config = await discover(shop)
    const verifier = openid.randomPKCECodeVerifier()
    const url = openid.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      code_challenge: await openid.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      age_required: '18',
    })
    const { callback, page } = await visit(url)
    const tokens = await openid.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier })
    const claims = await verifyLocally(tokens.access_token, config.serverMetadata(), shop.id)
    expect(claims).toMatchObject({ age_verified: true, age_over: 18 })
    await page.close()
  }, 60_000)

  test('with PAR: the threshold the site pushed holds; the visitor editing the plain URL of a PAR-only client gets no page', async () => {
    const config = await discover(parOnly)
    const verifier = openid.randomPKCECodeVerifier()
    const url = await openid.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: CALLBACK,
      code_challenge: await openid.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      age_required: '21',
    })
    // The visitor adds a lower threshold to the URL: ignored.
    url.searchParams.set('age_required', '18')
    const { callback, page } = await visit(url)
    const tokens = await openid.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier })
    expect((await verifyLocally(tokens.access_token, config.serverMetadata(), parOnly.id)).age_over).toBe(21)

    // The same visitor builds a plain URL for the PAR-only site, with the threshold they like.
    const plain = new URL(config.serverMetadata().authorization_endpoint!)
    plain.search = new URLSearchParams({ client_id: parOnly.id, redirect_uri: CALLBACK, age_required: '18', response_type: 'code' }).toString()
    const refused = await page.goto(plain.href)
    expect(refused!.status()).toBe(400)
    expect(await page.textContent('body')).toContain('invalid_request')
    await page.close()
  }, 60_000)
})
