import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeJwt } from 'jose'
import { createAccessChain, createRegistrar, registrationClaims, RELYING_PARTY, signRegistrationCertificate } from '../credentials/relying-party-pki.ts'
import { json } from '../helpers.ts'
import { answerCrossDeviceRequest, type RequestUriPost } from '../wallets/openid4vp-wallet.ts'
import { callback } from './browser.ts'
import { NOW, openCredentialFlow, type CredentialFlow } from './credential-flow.ts'

/**
 * The request behind the QR code's `openid4vp://` link, fetched as OpenID4VP 1.0 §5.10 lets a wallet fetch
 * it: by POST with its metadata and a nonce of its own (`request_uri_method=post`, as the EUDI reference
 * wallet does), or by GET; and the operator's registration certificate (Implementing Regulation (EU)
 * 2025/848) in `verifier_info` of every signed request. The wallet is test/wallets/openid4vp-wallet.ts.
 */

/** What the EUDI reference wallet posted to the EUDI verifier (a published capture of one exchange, December 2025). */
const EUDI_WALLET_METADATA = {
  issuer: 'https://self-issued.me/v2',
  authorization_endpoint: 'eudi-openid4vp:',
  response_types_supported: ['vp_token'],
  response_modes_supported: ['direct_post.jwt'],
  vp_formats_supported: { mso_mdoc: { issuerauth_alg_values: [-7], deviceauth_alg_values: [-7] }, 'dc+sd-jwt': null },
  client_id_prefixes_supported: ['x509_hash'],
  request_object_signing_alg_values_supported: ['ES256'],
  authorization_encryption_alg_values_supported: ['ECDH-ES'],
  authorization_encryption_enc_values_supported: ['A256GCM'],
}
const EUDI_POST: RequestUriPost = { walletMetadata: EUDI_WALLET_METADATA }

let flow: CredentialFlow
beforeAll(async () => {
  flow = await openCredentialFlow()
})
afterAll(() => flow.ctx.close())

type Started = Awaited<ReturnType<CredentialFlow['startRequest']>>
const requestUriOf = (started: Started) => new URL(started.request.wallet_url).searchParams.get('request_uri')!

/** A POST to the request URI as a wallet makes it, with `form` as its body. */
function post(flow: CredentialFlow, started: Started, form: Record<string, string> | string, headers: Record<string, string> = {}) {
  const body = typeof form === 'string' ? form : new URLSearchParams(form).toString()
  return flow.ctx.handle(new Request(requestUriOf(started), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body }))
}

async function expectApproved(flow: CredentialFlow, started: Started, age: number) {
  const back = callback(await started.redeem())
  expect(back).toBeDefined()
  expect(decodeJwt((await flow.exchange(back!.code)).access_token)).toMatchObject({ age_verified: true, age_over: age })
}

describe('request_uri_method=post (OpenID4VP 1.0 §5.10)', () => {
  test('the QR code’s link invites a POST: request_uri_method=post beside client_id and request_uri', async () => {
    const link = new URL((await flow.startRequest()).request.wallet_url)
    expect([...link.searchParams.keys()]).toEqual(['client_id', 'request_uri', 'request_uri_method'])
    expect(link.searchParams.get('request_uri_method')).toBe('post')
  })

  test('a wallet that posts its metadata and nonce, as the EUDI wallet does, gets its nonce back signed and is approved', async () => {
    const started = await flow.startRequest({ age_required: '21' })
    const answer = await answerCrossDeviceRequest(await flow.walletWith('av', 40), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher, requestUriPost: EUDI_POST })
    // The wallet checked it (§5.10.1) and it came in standard base64, as the EUDI wallet sends it.
    expect(answer.request.wallet_nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/)
    expect(answer.status).toBe(200)
    await expectApproved(flow, started, 21)
  })

  test('the nonce is the wallet’s own, exactly as sent; a POST without one, and a GET, get the same request without wallet_nonce', async () => {
    const started = await flow.startRequest()
    const posted = await post(flow, started, { wallet_nonce: 'kxbJ//QQ/qheqcBnVzjZPg==', wallet_metadata: JSON.stringify(EUDI_WALLET_METADATA) })
    expect(posted.status).toBe(200)
    expect(posted.headers.get('content-type')).toBe('application/oauth-authz-req+jwt')
    expect(posted.headers.get('cache-control')).toBe('no-store')
    const withNonce = decodeJwt(await posted.text())
    expect(withNonce.wallet_nonce).toBe('kxbJ//QQ/qheqcBnVzjZPg==')
    const bare = decodeJwt(await (await post(flow, started, '')).text())
    const got = decodeJwt(await (await flow.fetcher(requestUriOf(started))).text())
    for (const request of [bare, got]) {
      expect(request).not.toHaveProperty('wallet_nonce')
      expect(request).toMatchObject({ state: withNonce.state, nonce: withNonce.nonce, client_id: withNonce.client_id })
    }
  })

  test('a wallet that does not post (no request_uri_method support) still fetches by GET and is approved', async () => {
    const started = await flow.startRequest()
    const answer = await answerCrossDeviceRequest(await flow.walletWith('sd-jwt', 30), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher })
    expect(answer.status).toBe(200)
    expect(answer.request).not.toHaveProperty('wallet_nonce')
    await expectApproved(flow, started, 18)
  })

  test('what the wallet’s metadata rules out is refused with invalid_request, and the request stays open', async () => {
    const started = await flow.startRequest()
    const ruledOut: Record<string, unknown>[] = [
      { request_object_signing_alg_values_supported: ['ES384'] },
      { client_id_prefixes_supported: ['x509_san_dns', 'pre-registered'] },
      { response_types_supported: ['id_token'] },
      { response_modes_supported: ['direct_post'] },
      { authorization_encryption_alg_values_supported: ['RSA-OAEP-256'] },
      { authorization_encryption_enc_values_supported: ['A192GCM'] },
      { vp_formats_supported: { jwt_vc_json: { alg_values: ['ES256'] } } },
      { vp_formats_supported: { mso_mdoc: { issuerauth_alg_values: [-35] }, 'dc+sd-jwt': { 'kb-jwt_alg_values': ['EdDSA'] } } },
      // §5.10: a wallet that wants an encrypted request object sends its keys; ours are signed only.
      { jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }] } },
    ]
    for (const metadata of ruledOut) {
      const refused = await post(flow, started, { wallet_metadata: JSON.stringify({ ...EUDI_WALLET_METADATA, ...metadata }), wallet_nonce: 'n' })
      expect(refused.status, JSON.stringify(metadata)).toBe(400)
      expect((await json(refused)).error).toBe('invalid_request')
    }
    await expect(answerCrossDeviceRequest(await flow.walletWith('av', 40), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher, requestUriPost: { walletMetadata: ruledOut[0] } })).rejects.toThrow('HTTP 400')
    // Nothing was spent: the same request, fetched by a wallet whose metadata it meets, is answered.
    const answer = await answerCrossDeviceRequest(await flow.walletWith('av', 40), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher, requestUriPost: EUDI_POST })
    expect(answer.status).toBe(200)
  })

  test('metadata the request meets, or that says nothing we read, is accepted; unknown parameters are ignored', async () => {
    const started = await flow.startRequest()
    const accepted = [
      {},
      { vp_formats_supported: { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256', 'ES384'] }, mso_mdoc: null } },
      { vp_formats_supported: { mso_mdoc: {} }, something_new: { deeply: ['nested'] }, authorization_encryption_enc_values_supported: ['A128GCM'] },
    ]
    for (const metadata of accepted) expect((await post(flow, started, { wallet_metadata: JSON.stringify(metadata) })).status, JSON.stringify(metadata)).toBe(200)
    expect((await post(flow, started, { wallet_nonce: 'n', another_parameter: 'x' })).status).toBe(200)
  })

  test('malformed or oversized input is refused before anything is signed', async () => {
    const started = await flow.startRequest()
    const refusals: (Record<string, string> | string)[] = [
      { wallet_metadata: 'not json' },
      { wallet_metadata: '[]' },
      { wallet_metadata: `${'{"a":'.repeat(9)}1${'}'.repeat(9)}` },
      { wallet_metadata: '{"response_modes_supported":["direct_post.jwt"],"response_modes_supported":["direct_post"]}' },
      { wallet_metadata: JSON.stringify({ padding: 'x'.repeat(9000) }) },
      { wallet_metadata: JSON.stringify({ response_modes_supported: 'direct_post.jwt' }) },
      { wallet_metadata: JSON.stringify({ vp_formats_supported: ['mso_mdoc'] }) },
      { wallet_nonce: '' },
      { wallet_nonce: 'n'.repeat(257) },
      'wallet_nonce=a&wallet_nonce=b',
      'wallet_nonce=%00',
    ]
    for (const form of refusals) {
      const refused = await post(flow, started, form)
      expect(refused.status, JSON.stringify(form)).toBe(400)
      expect((await json(refused)).error).toBe('invalid_request')
    }
    const asJson = await post(flow, started, JSON.stringify({ wallet_nonce: 'n' }), { 'content-type': 'application/json' })
    expect(asJson.status).toBe(400)
    const huge = await post(flow, started, { wallet_nonce: 'n', filler: 'x'.repeat(20_000) })
    expect(huge.status).toBe(400)
  })

  test('a request that was answered, or never existed, is not found by POST as by GET', async () => {
    const started = await flow.startRequest()
    await answerCrossDeviceRequest(await flow.walletWith('av', 40), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher, requestUriPost: EUDI_POST })
    expect((await post(flow, started, { wallet_nonce: 'n' })).status).toBe(404)
    expect((await flow.fetcher(requestUriOf(started))).status).toBe(404)
    const unknown = await flow.ctx.handle(new Request(requestUriOf(started).replace(/[^/]+$/, 'no-such-state'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'wallet_nonce=n' }))
    expect(unknown.status).toBe(404)
  })
})

describe('request_uri_method=post where answers come in the clear (CREDENTIAL_PLAIN_ANSWERS=1)', () => {
  test('a wallet that answers only direct_post.jwt is told so; one that answers direct_post gets the request', async () => {
    const plain = await openCredentialFlow({ CREDENTIAL_PLAIN_ANSWERS: '1' })
    try {
      const started = await plain.startRequest()
      expect((await post(plain, started, { wallet_metadata: JSON.stringify(EUDI_WALLET_METADATA) })).status).toBe(400)
      const metadata = { ...EUDI_WALLET_METADATA, response_modes_supported: ['direct_post', 'direct_post.jwt'], authorization_encryption_alg_values_supported: ['RSA-OAEP-256'] }
      const answer = await answerCrossDeviceRequest(await plain.walletWith('mdl', 40), started.request.wallet_url, { now: NOW, fetcher: plain.fetcher, requestUriPost: { walletMetadata: metadata } })
      expect(answer.request.response_mode).toBe('direct_post')
      expect(answer.status).toBe(200)
    } finally {
      await plain.ctx.close()
    }
  })
})

describe('verifier_info: the registration certificate in every signed request (Implementing Regulation (EU) 2025/848)', () => {
  let registered: CredentialFlow
  let wrprc: string
  let dir: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ofage-registered-'))
    const [access, registrar] = await Promise.all([createAccessChain(), createRegistrar()])
    wrprc = await signRegistrationCertificate(registrar, registrationClaims())
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text)
      return join(dir, name)
    }
    registered = await openCredentialFlow({
      CREDENTIAL_VERIFIER_CERT_FILE: file('access.pem', access.leafPem + access.rootPem),
      CREDENTIAL_VERIFIER_KEY_FILE: file('access-key.pem', access.keyPem),
      CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE: file('registration.jwt', wrprc),
      CREDENTIAL_VERIFIER_ROOTS_FILE: file('roots.pem', access.rootPem + registrar.rootPem),
    })
  })
  afterAll(async () => {
    await registered.ctx.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('the cross-device request object carries it, by POST as by GET; a wallet that requires one reads it and answers', async () => {
    const started = await registered.startRequest()
    const got = decodeJwt(await (await registered.fetcher(requestUriOf(started))).text())
    expect(got.verifier_info).toEqual([{ format: 'registration_cert', data: wrprc }])
    const answer = await answerCrossDeviceRequest(await registered.walletWith('av', 40), started.request.wallet_url, {
      now: NOW,
      fetcher: registered.fetcher,
      requestUriPost: EUDI_POST,
      requireRegistration: true,
    })
    expect(answer.request.verifier_info).toEqual([{ format: 'registration_cert', data: wrprc }])
    expect(answer.registration).toMatchObject({ sub: RELYING_PARTY, name: 'Test Shop' })
    expect(answer.status).toBe(200)
    await expectApproved(registered, started, 18)
  })

  test('the signed Digital Credentials API request carries it; the unsigned one, which no certificate signs, does not', async () => {
    const started = await registered.startRequest()
    const signed = started.request.dc_api.find((request) => request.protocol === 'openid4vp-v1-signed')!
    expect(decodeJwt(signed.data.request).verifier_info).toEqual([{ format: 'registration_cert', data: wrprc }])
    const unsigned = started.request.dc_api.find((request) => request.protocol === 'openid4vp-v1-unsigned')!
    expect(unsigned.data).not.toHaveProperty('verifier_info')
  })

  test('without one configured no request carries verifier_info, and a wallet that requires it refuses', async () => {
    const started = await flow.startRequest()
    expect(decodeJwt(await (await flow.fetcher(requestUriOf(started))).text())).not.toHaveProperty('verifier_info')
    const signed = started.request.dc_api.find((request) => request.protocol === 'openid4vp-v1-signed')!
    expect(decodeJwt(signed.data.request)).not.toHaveProperty('verifier_info')
    await expect(
      answerCrossDeviceRequest(await flow.walletWith('av', 40), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher, requestUriPost: EUDI_POST, requireRegistration: true }),
    ).rejects.toThrow('registration missing')
  })
})
