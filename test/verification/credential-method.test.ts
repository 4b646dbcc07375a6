import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { createDevIssuer, issueDevCredential } from '../../src/credentials/dev/issuer.ts'
import { answerRequest, createDevWallet, fetchRequest, presentToVerifier } from '../../src/credentials/dev/wallet.ts'
import { json, PUBLIC_URL, queryRows, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { callback, testBrowser } from './browser.ts'
import { NOW, openCredentialFlow, type CredentialFlow } from './credential-flow.ts'
import { claimRequest, findOpenRequest, releaseClaim } from '../../src/verification/credential-requests.ts'
import { encryptResponse } from '../wallets/jwe-encrypt.ts'
import { answerUnsignedDcApiRequest } from '../wallets/openid4vp-wallet.ts'

/**
 * The digital credential method over HTTP: the page opens a wallet request, the test wallet (speaking
 * OpenID4VP to the public endpoints, as a phone would) answers it, and the page redeems the answer.
 */
let ctx: TestContext
let flow: CredentialFlow
let shop: CredentialFlow['shop']
let sent: CredentialFlow['sent']
let fetcher: typeof fetch
const walletWith = (...args: Parameters<CredentialFlow['walletWith']>) => flow.walletWith(...args)
const startRequest = (query?: Record<string, string>) => flow.startRequest(query)
const exchange = (code: string) => flow.exchange(code)

beforeAll(async () => {
  flow = await openCredentialFlow()
  ;({ ctx, shop, sent, fetcher } = flow)
})
afterAll(() => ctx.close())

describe('a visitor with no camera proves their age with a digital credential', () => {
  for (const format of ['sd-jwt', 'av', 'mdl'] as const) {
    test(`cross-device (${format}): QR code, the wallet answers the response endpoint, the page redeems it for a code`, async () => {
      const flow = await startRequest()
      expect(flow.request.qr_svg).toStartWith('<svg role="img"')
      expect(flow.request.wallet_url).toStartWith('openid4vp://?client_id=x509_hash%3A')
      expect(await flow.status()).toBe('pending')
      const answer = await presentToVerifier(await walletWith(format, 30), flow.request.wallet_url, { now: NOW, fetcher })
      expect(answer).toEqual({ status: 200, body: {} })
      expect(await flow.status()).toBe('answered')
      const back = callback(await flow.redeem())
      expect(back?.url.origin + back!.url.pathname).toBe(REDIRECT_URI)
      const token = await exchange(back!.code)
      const claims = decodeJwt(token.access_token)
      expect(claims).toMatchObject({ age_verified: true, age_over: 18, verification_level: 'first_verification', reverification: false })
      const [audit] = await queryRows<{ method: string; method_class: string }>(ctx.deps.db, sql`select method, method_class from audit_logs where transaction_id = ${token.transaction_id}`)
      expect(audit).toEqual({ method: 'credential', method_class: 'age_only' })
    })
  }

  test('the usage report counts a credential check as age_only', async () => {
    const usage = await json(await ctx.request(`/api/oauth/usage?client_id=${shop.id}`, { headers: { authorization: shop.authorization } }))
    expect(usage.usage.age_only_count).toBeGreaterThanOrEqual(3)
    expect(usage.usage.biometric_count).toBe(0)
  })

  test('same device: an answer from the Digital Credentials API, bound to the page origin, completes the session', async () => {
    const flow = await startRequest({ age_required: '21' })
    expect(flow.request.dc_api.map((request) => request.protocol)).toEqual(['org-iso-mdoc', 'openid4vp-v1-signed', 'openid4vp-v1-unsigned'])
    const unsigned = flow.request.dc_api[2]!
    expect(unsigned.data.response_mode).toBe('dc_api.jwt')
    const data = await answerUnsignedDcApiRequest(await walletWith('sd-jwt', 30), unsigned, { origin: new URL(PUBLIC_URL).origin, now: NOW })
    expect(Object.keys(data)).toEqual(['response'])
    const base = flow.action.split('?')[0]
    const posted = await flow.browser.post(`${base}/dc-response`, { csrf: flow.page.csrf!, request: flow.request.request, response: JSON.stringify({ protocol: 'openid4vp-v1-unsigned', data }) })
    expect(await json(posted)).toEqual({ status: 'answered' })
    const token = await exchange(callback(await flow.redeem())!.code)
    expect(decodeJwt(token.access_token).age_over).toBe(21)
  })

  test('a Digital Credentials API answer made for another origin is refused', async () => {
    const flow = await startRequest()
    const data = await answerUnsignedDcApiRequest(await walletWith('av', 30), flow.request.dc_api[2]!, { origin: 'https://rival.example', now: NOW })
    const base = flow.action.split('?')[0]
    await flow.browser.post(`${base}/dc-response`, { csrf: flow.page.csrf!, request: flow.request.request, response: JSON.stringify({ protocol: 'openid4vp-v1-unsigned', data }) })
    const refused = await flow.redeem()
    expect(refused.status).toBe(200)
    expect(await refused.text()).toContain('could not prove it holds')
  })
})

describe('the request a wallet fetches', () => {
  test('is signed by the key of its x509_hash client id and asks for the age statement only', async () => {
    const flow = await startRequest({ age_required: '21' })
    const request = await fetchRequest(flow.request.wallet_url, fetcher, NOW)
    // HAIP 1.0 §5: encrypted answers, to a key of this request's own.
    expect(request.response_mode).toBe('direct_post.jwt')
    expect(request.client_metadata?.jwks?.keys).toHaveLength(1)
    const requestUri = new URL(flow.request.wallet_url).searchParams.get('request_uri')!
    const jwt = await (await ctx.handle(new Request(requestUri))).text()
    expect(decodeProtectedHeader(jwt)).toMatchObject({ alg: 'ES256', typ: 'oauth-authz-req+jwt' })
    const claims = request.dcql_query.credentials.flatMap((query) => query.claims!.map((claim) => claim.path.join('.')))
    expect(claims).toEqual(['age_equal_or_over.21', 'eu.europa.ec.av.1.age_over_21', 'org.iso.18013.5.1.age_over_21'])
  })

  test('an unknown or answered state finds no request (404, JSON)', async () => {
    const response = await ctx.request('/api/oid4vp/requests/nosuchstate')
    expect(response.status).toBe(404)
    expect((await json(response)).error).toBe('not_found')
  })
})

describe('answers that must not complete a session', () => {
  test('a presentation replayed to the response endpoint is refused, and completes nothing twice', async () => {
    const flow = await startRequest()
    sent.length = 0
    await presentToVerifier(await walletWith('sd-jwt', 30), flow.request.wallet_url, { now: NOW, fetcher })
    const original = sent.at(-1)!
    const replay = await ctx.handle(new Request(original.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: original.body }))
    expect(replay.status).toBe(400)
    expect((await json(replay)).error).toBe('invalid_request')
    expect(callback(await flow.redeem())).toBeDefined()
    // The same answer redeemed again, or the session used again: nothing.
    expect((await flow.redeem()).status).toBe(400)
  })

  test('of many answers posted at once to one request, one is verified; the rest are refused before verification (issue 19)', async () => {
    const flow = await startRequest()
    // The wallet's post, kept instead of sent: then the same post many times at once.
    let post: { url: string; body: string } | undefined
    const keep = (async (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input, init)
      if (request.method !== 'POST') return ctx.handle(request)
      post = { url: request.url, body: await request.text() }
      return Response.json({})
    }) as typeof fetch
    await presentToVerifier(await walletWith('sd-jwt', 30), flow.request.wallet_url, { now: NOW, fetcher: keep })
    const verified = async () => (await ctx.deps.metrics.verifications.get()).values.filter((v) => v.labels.method === 'credential').reduce((sum, v) => sum + v.value, 0)
    const before = await verified()
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => ctx.handle(new Request(post!.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: post!.body }))),
    )
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1)
    const refused = answers.filter((answer) => answer.status !== 200)
    expect(refused).toHaveLength(39)
    for (const answer of refused) expect((await json(answer)).error).toBe('invalid_request')
    expect((await verified()) - before).toBe(1)
    expect(await flow.status()).toBe('answered')
    expect(callback(await flow.redeem())).toBeDefined()
  })

  test('a request claimed but still being verified reads as pending and cannot be redeemed yet', async () => {
    const flow = await startRequest()
    const state = (await fetchRequest(flow.request.wallet_url, fetcher, NOW)).state
    const request = (await findOpenRequest(ctx.deps, state))!
    expect(await claimRequest(ctx.deps, request)).toBe(true)
    expect(await claimRequest(ctx.deps, request)).toBe(false)
    expect(await flow.status()).toBe('pending')
    expect((await flow.redeem()).status).toBe(400)
    // A verification that failed inside (not a refusal) gives the claim back: the wallet may post again.
    await releaseClaim(ctx.deps, request)
    expect(await claimRequest(ctx.deps, request)).toBe(true)
  })

  test("another session's presentation, posted with this session's state, is refused (wrong nonce)", async () => {
    const first = await fetchRequest((await startRequest()).request.wallet_url, fetcher, NOW)
    const wallet = await walletWith('sd-jwt', 30)
    const stolen = await answerRequest(wallet, first, { clientId: first.client_id, responseUri: first.response_uri }, NOW)
    const second = await startRequest()
    const request = await fetchRequest(second.request.wallet_url, fetcher, NOW)
    // Sealed properly to the second request's key, with its state: only the nonce inside is another's.
    const key = request.client_metadata!.jwks!.keys![0]!
    const jwe = await encryptResponse({ vp_token: stolen, state: request.state }, key as never, { enc: 'A128GCM' })
    const response = await ctx.request('/api/oid4vp/responses', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ response: jwe }).toString() })
    expect(response.status).toBe(400)
    expect((await json(response)).error_description).toContain('wrong_nonce')
    const refused = await second.redeem()
    expect(callback(refused)).toBeUndefined()
    expect(await refused.text()).toContain('another request')
  })

  test("one browser cannot redeem another session's answered request", async () => {
    const victim = await startRequest()
    await presentToVerifier(await walletWith('sd-jwt', 30), victim.request.wallet_url, { now: NOW, fetcher })
    const thief = await startRequest()
    const taken = await thief.redeem(victim.request.request)
    expect(callback(taken)).toBeUndefined()
    expect(await taken.text()).toContain('has not answered yet')
    expect(callback(await victim.redeem())).toBeDefined()
  })

  test('a request of a completed session takes no answer', async () => {
    const flow = await startRequest()
    const base = flow.action.split('?')[0]
    const spare = (await json(await flow.browser.post(`${base}/start`, { csrf: flow.page.csrf! }))) as { wallet_url: string }
    await presentToVerifier(await walletWith('sd-jwt', 30), flow.request.wallet_url, { now: NOW, fetcher })
    expect(callback(await flow.redeem())).toBeDefined()
    await expect(fetchRequest(spare.wallet_url, fetcher, NOW)).rejects.toThrow('HTTP 404')
  })

  test('a credential of a 16-year-old is refused at 18 and counts as a failed attempt; the wallet hears why', async () => {
    const flow = await startRequest()
    const answer = await presentToVerifier(await walletWith('sd-jwt', 16), flow.request.wallet_url, { now: NOW, fetcher })
    expect(answer.status).toBe(400)
    expect(String(answer.body.error_description)).toContain('under_threshold')
    const refused = await flow.redeem()
    const html = await refused.text()
    expect(html).toContain('does not show that you are 18 or older')
    expect(html).toContain('4 attempts left')
  })

  test('a credential from an issuer outside the trust list is refused', async () => {
    const rogue = await createDevIssuer(NOW)
    const wallet = await createDevWallet()
    wallet.credentials.push(await issueDevCredential(rogue, { format: 'sd-jwt', age: 40, holderPublicKey: wallet.holder.publicKey, now: NOW }))
    const flow = await startRequest()
    const answer = await presentToVerifier(wallet, flow.request.wallet_url, { now: NOW, fetcher })
    expect(String(answer.body.error_description)).toContain('untrusted_issuer')
    expect(await (await flow.redeem()).text()).toContain('does not accept')
  })

  test('declining in the wallet is said plainly and costs no attempt', async () => {
    const flow = await startRequest()
    expect((await presentToVerifier(await walletWith('sd-jwt', 30), flow.request.wallet_url, { now: NOW, fetcher, decline: true })).status).toBe(200)
    const html = await (await flow.redeem()).text()
    expect(html).toContain('You declined in your wallet')
    expect(html).not.toContain('attempts left')
  })

  test('a session opens at most 20 wallet requests: a page reloading in a loop does not grow the table', async () => {
    const flow = await startRequest()
    const base = flow.action.split('?')[0]
    for (let i = 1; i < 20; i++) expect((await flow.browser.post(`${base}/start`, { csrf: flow.page.csrf! })).status).toBe(200)
    expect((await flow.browser.post(`${base}/start`, { csrf: flow.page.csrf! })).status).toBe(403)
  })

  test('without the CSRF token or from another browser, no request is opened', async () => {
    const flow = await startRequest()
    const base = flow.action.split('?')[0]
    expect((await flow.browser.post(`${base}/start`, { csrf: 'wrong' })).status).toBe(403)
    expect((await testBrowser(ctx).post(`${base}/start`, { csrf: flow.page.csrf! })).status).toBe(400)
  })

  test('garbage at the response endpoint is a 400 JSON error, never a 500', async () => {
    const flow = await startRequest()
    const state = (await fetchRequest(flow.request.wallet_url, fetcher, NOW)).state
    for (const body of [`vp_token=%7B&state=${state}`, 'state=', 'vp_token=x', `vp_token=${'a'.repeat(70_000)}&state=${state}`]) {
      const response = await ctx.request('/api/oid4vp/responses', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })
      expect(response.status).toBe(400)
      expect((await json(response)).error).toBe('invalid_request')
    }
  })
})

describe('what is kept', () => {
  test('an answered request keeps its outcome and threshold, never the presentation', async () => {
    const flow = await startRequest()
    sent.length = 0
    const wallet = await walletWith('sd-jwt', 30)
    await presentToVerifier(wallet, flow.request.wallet_url, { now: NOW, fetcher })
    const posted = new URLSearchParams(sent.at(-1)!.body).get('response')!
    const rows = await queryRows<Record<string, unknown>>(ctx.deps.db, sql`select * from credential_requests where outcome = 'approved'`)
    const stored = JSON.stringify(rows)
    // Every disclosure the credential holds (a presentation carries some of them, unchanged).
    const disclosures = wallet.credentials[0]!.credential.split('~').slice(1, -1)
    expect(disclosures.length).toBeGreaterThan(0)
    for (const disclosure of disclosures) expect(stored).not.toContain(disclosure)
    expect(stored).not.toContain(posted)
    expect(stored).not.toContain(flow.request.request)
    // The keys that opened the answers are forgotten with their outcome.
    expect(rows.every((row) => row.response_keys === null)).toBe(true)
    expect(rows.every((row) => row.age_over === 18 || row.age_over === 21)).toBe(true)
  })
})
