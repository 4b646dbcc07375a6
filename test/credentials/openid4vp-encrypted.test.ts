import { beforeAll, describe, expect, test } from 'bun:test'
import { CompactEncrypt, decodeJwt, importJWK } from 'jose'
import { createDevIssuer, issueDevCredential, type DevCredentialFormat } from '../../src/credentials/dev/issuer.ts'
import { createDevWallet, type DevWallet } from '../../src/credentials/dev/wallet.ts'
import { verifyAgeAnswer, type AnswerBinding } from '../../src/credentials/openid4vp/answer.ts'
import { signedDcApiRequest } from '../../src/credentials/openid4vp/dc-api.ts'
import { decryptResponse, readResponseKeyId, type DecryptedResponse } from '../../src/credentials/openid4vp/encrypted-response.ts'
import { signRequestObject, walletLink } from '../../src/credentials/openid4vp/request-object.ts'
import { generateResponseEncryptionKey, responseKeyThumbprint, type ResponseEncryptionKey } from '../../src/credentials/openid4vp/response-encryption-key.ts'
import { dcApiSessionTranscript, openId4VpSessionTranscript } from '../../src/credentials/openid4vp/session-transcript.ts'
import type { AnswerResult } from '../../src/credentials/presentation.ts'
import { parseTrustList, type TrustList } from '../../src/credentials/trust/trust-list.ts'
import type { VerifierKey } from '../../src/keys/verifier-key.ts'
import { encryptResponse } from '../wallets/jwe-encrypt.ts'
import { walletSessionTranscript } from '../wallets/openid4vp-handover.ts'
import { answerCrossDeviceRequest, answerSignedDcApiRequest, checkSignedRequest, type AnswerOptions } from '../wallets/openid4vp-wallet.ts'
import { createTestVerifierKey } from './test-verifier.ts'
import { offlineRevocation } from './status-fixtures.ts'

/**
 * OpenID4VP 1.0 signed requests and encrypted answers, as HAIP 1.0 and Google Wallet use them: a signed
 * Digital Credentials API request answered `dc_api.jwt`, a cross-device request answered `direct_post.jwt`.
 * The wallet (test/wallets/openid4vp-wallet.ts) checks the request and encrypts with its own WebCrypto
 * code; the verifier decrypts with jose and verifies with its own modules.
 */
const NOW = new Date('2026-11-20T10:00:00Z')
const ORIGIN = 'https://age.example'
const RESPONSE_URI = `${ORIGIN}/api/oid4vp/responses`
const NONCE = 'n-0S6_WzA2Mj-encrypted'
const STATE = 'st-7Hq2'
const FORMATS: DevCredentialFormat[] = ['sd-jwt', 'av', 'mdl']

let verifier: VerifierKey
let trustList: TrustList
const wallets = {} as Record<DevCredentialFormat, DevWallet>

beforeAll(async () => {
  verifier = await createTestVerifierKey(NOW)
  const issuer = await createDevIssuer(NOW)
  trustList = parseTrustList(issuer.rootCertificate)
  for (const format of FORMATS) {
    wallets[format] = await createDevWallet()
    wallets[format].credentials.push(await issueDevCredential(issuer, { format, age: 30, holderPublicKey: wallets[format].holder.publicKey, now: NOW }))
  }
})

const dcApiRequest = (key: ResponseEncryptionKey, expectedOrigins = [ORIGIN]) =>
  signedDcApiRequest(verifier, { nonce: NONCE, threshold: 18, expectedOrigins, encryptionKey: key.publicKey, now: NOW })

/** The wallet's answer to a signed DC API request from our page: the JWE the page hands back. */
async function dcApiAnswer(format: DevCredentialFormat, key: ResponseEncryptionKey, options: Partial<AnswerOptions> = {}): Promise<string> {
  const data = await answerSignedDcApiRequest(wallets[format], await dcApiRequest(key), { origin: ORIGIN, now: NOW, ...options })
  if (!('response' in data)) throw new Error(`the wallet answered ${JSON.stringify(data)}`)
  return data.response
}

/**
 * A cross-device exchange against a stand-in for the routes: the wallet fetches the signed request from
 * `request_uri` and posts its answer to `response_uri`, which keeps the form.
 */
async function crossDevice(format: DevCredentialFormat, key: ResponseEncryptionKey | undefined, options: Partial<AnswerOptions> & { decline?: boolean } = {}) {
  const requestUri = `${ORIGIN}/api/oid4vp/requests/${STATE}`
  const requestObject = await signRequestObject(verifier, { nonce: NONCE, state: STATE, responseUri: RESPONSE_URI, threshold: 18, encryptionKey: key?.publicKey }, NOW)
  const posted: URLSearchParams[] = []
  const fetcher = (async (input: string | URL | Request, init?: RequestInit) => {
    if (init?.method !== 'POST') return new Response(String(input) === requestUri ? requestObject : 'no', { status: String(input) === requestUri ? 200 : 404 })
    posted.push(new URLSearchParams(init.body as URLSearchParams))
    return Response.json({})
  }) as typeof fetch
  const answered = await answerCrossDeviceRequest(wallets[format], walletLink(verifier, requestUri), { now: NOW, fetcher, ...options })
  expect(answered.status).toBe(200)
  expect(posted).toHaveLength(1)
  return posted[0]!
}

const check = (binding: AnswerBinding) => ({ trustList, nonce: NONCE, threshold: 18, now: NOW, binding, revocation: offlineRevocation(NOW) })
const dcApiJwt = (key: ResponseEncryptionKey): AnswerBinding => ({ responseMode: 'dc_api.jwt', origin: ORIGIN, encryptionKey: key.publicKey })
const directPostJwt = (key: ResponseEncryptionKey): AnswerBinding => ({ responseMode: 'direct_post.jwt', clientId: verifier.clientId, responseUri: RESPONSE_URI, encryptionKey: key.publicKey })

/** What the routes will do with an encrypted answer: decrypt with the request's key, then verify. */
async function verifyEncrypted(jwe: string, key: ResponseEncryptionKey, binding: AnswerBinding): Promise<AnswerResult | DecryptedResponse> {
  const decrypted = await decryptResponse(jwe, key.privateKey)
  return decrypted.ok ? verifyAgeAnswer(decrypted.response.vp_token, check(binding)) : decrypted
}

describe('signed requests', () => {
  test('a cross-device request with an encryption key asks for direct_post.jwt and names the key and both enc values (HAIP 1.0 §5)', async () => {
    const key = await generateResponseEncryptionKey()
    const encrypted = decodeJwt(await signRequestObject(verifier, { nonce: NONCE, state: STATE, responseUri: RESPONSE_URI, threshold: 18, encryptionKey: key.publicKey }, NOW))
    expect(encrypted.response_mode).toBe('direct_post.jwt')
    expect(encrypted.client_metadata).toMatchObject({ jwks: { keys: [key.publicKey] }, encrypted_response_enc_values_supported: ['A128GCM', 'A256GCM'] })
    expect(key.publicKey).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'enc', alg: 'ECDH-ES' })
    expect(JSON.stringify(encrypted)).not.toContain(key.privateKey.d!)
    const plain = decodeJwt(await signRequestObject(verifier, { nonce: NONCE, state: STATE, responseUri: RESPONSE_URI, threshold: 18 }, NOW))
    expect(plain.response_mode).toBe('direct_post')
    expect(plain.client_metadata).toEqual({ vp_formats_supported: expect.any(Object) })
  })

  test('a signed DC API request is openid4vp-v1-signed, data.request a JWS of the x509_hash client id asking for dc_api.jwt from the expected origins', async () => {
    const key = await generateResponseEncryptionKey()
    const request = await dcApiRequest(key, [ORIGIN, 'https://www.age.example'])
    expect(request.protocol).toBe('openid4vp-v1-signed')
    expect(Object.keys(request.data)).toEqual(['request'])
    const checked = await checkSignedRequest(request.data.request, { now: NOW, origin: ORIGIN })
    if (!checked.ok) throw new Error(checked.refusal)
    expect(checked.request).toMatchObject({
      client_id: verifier.clientId,
      expected_origins: [ORIGIN, 'https://www.age.example'],
      response_type: 'vp_token',
      response_mode: 'dc_api.jwt',
      nonce: NONCE,
      client_metadata: { jwks: { keys: [key.publicKey] }, encrypted_response_enc_values_supported: ['A128GCM', 'A256GCM'] },
    })
  })

  test('expected_origins that are not exactly origins are a setup error, refused when the request is built', async () => {
    const key = await generateResponseEncryptionKey()
    for (const origins of [[], ['https://age.example/'], ['https://age.example/page'], ['age.example'], ['javascript:alert(1)']]) {
      await expect(dcApiRequest(key, origins)).rejects.toThrow('expected_origins')
    }
  })

  test('each request gets its own key, whose kid is its RFC 7638 thumbprint', async () => {
    const [first, second] = await Promise.all([generateResponseEncryptionKey(), generateResponseEncryptionKey()])
    expect(first.publicKey.kid).not.toBe(second.publicKey.kid)
    expect(Buffer.from(await responseKeyThumbprint(first.publicKey)).toString('base64url')).toBe(first.publicKey.kid)
  })
})

describe('the wallet refuses a request not made for it', () => {
  test('a signed request checked from another origin is refused (expected_origins, compared as plain strings)', async () => {
    const key = await generateResponseEncryptionKey()
    const request = await dcApiRequest(key)
    for (const origin of ['https://rival.example', 'https://age.example/', 'https://age.example:443', 'http://age.example']) {
      expect(await checkSignedRequest(request.data.request, { now: NOW, origin })).toEqual({ ok: false, refusal: 'origin' })
      expect(await answerSignedDcApiRequest(wallets['sd-jwt'], request, { origin, now: NOW })).toEqual({ error: 'invalid_request' })
    }
    expect(await answerSignedDcApiRequest(wallets['sd-jwt'], request, { origin: ORIGIN, now: NOW })).toHaveProperty('response')
  })

  test('a request changed after signing, signed by another key, or expired is refused', async () => {
    const jws = (await dcApiRequest(await generateResponseEncryptionKey())).data.request
    const [header, payload, signature] = jws.split('.')
    const changed = JSON.parse(Buffer.from(payload!, 'base64url').toString())
    changed.expected_origins.push('https://rival.example')
    const tampered = `${header}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${signature}`
    expect(await checkSignedRequest(tampered, { now: NOW, origin: 'https://rival.example' })).toEqual({ ok: false, refusal: 'signature' })
    // Another verifier's signature over our certificate's header: the key is not the certificate's.
    const other = await createTestVerifierKey(NOW, 'rival.example')
    const theirs = (await signedDcApiRequest({ ...other, x5c: verifier.x5c }, { nonce: NONCE, threshold: 18, expectedOrigins: [ORIGIN], encryptionKey: (await generateResponseEncryptionKey()).publicKey, now: NOW })).data.request
    expect(await checkSignedRequest(theirs, { now: NOW, origin: ORIGIN })).toEqual({ ok: false, refusal: 'signature' })
    // Their own certificate, with our client id claimed: the hash does not match.
    const claimed = (await signedDcApiRequest({ ...other, clientId: verifier.clientId }, { nonce: NONCE, threshold: 18, expectedOrigins: [ORIGIN], encryptionKey: (await generateResponseEncryptionKey()).publicKey, now: NOW })).data.request
    expect(await checkSignedRequest(claimed, { now: NOW, origin: ORIGIN })).toEqual({ ok: false, refusal: 'client_id' })
    expect(await checkSignedRequest(jws, { now: new Date(NOW.getTime() + 3_600_000), origin: ORIGIN })).toEqual({ ok: false, refusal: 'expired' })
  })
})

describe('encrypted answers, end to end', () => {
  for (const format of FORMATS) {
    test(`${format}: a signed DC API request answered dc_api.jwt decrypts with the request's key and proves 18`, async () => {
      const key = await generateResponseEncryptionKey()
      const jwe = await dcApiAnswer(format, key)
      expect(readResponseKeyId(jwe)).toBe(key.publicKey.kid)
      expect(await verifyEncrypted(jwe, key, dcApiJwt(key))).toEqual({ valid: true, ageOver: 18 })
    })

    test(`${format}: a cross-device request answered direct_post.jwt posts only the JWE, which carries the state and proves 18`, async () => {
      const key = await generateResponseEncryptionKey()
      const form = await crossDevice(format, key)
      expect([...form.keys()]).toEqual(['response'])
      const jwe = form.get('response')!
      expect(readResponseKeyId(jwe)).toBe(key.publicKey.kid)
      const decrypted = await decryptResponse(jwe, key.privateKey)
      if (!decrypted.ok) throw new Error(decrypted.failure)
      expect(decrypted.response.state).toBe(STATE)
      expect(await verifyAgeAnswer(decrypted.response.vp_token, check(directPostJwt(key)))).toEqual({ valid: true, ageOver: 18 })
    })
  }

  test('plain direct_post stays available: vp_token and state in the clear verify as before', async () => {
    for (const format of FORMATS) {
      const form = await crossDevice(format, undefined)
      expect(form.get('state')).toBe(STATE)
      const binding = { clientId: verifier.clientId, responseUri: RESPONSE_URI }
      expect(await verifyAgeAnswer(JSON.parse(form.get('vp_token')!), check(binding))).toEqual({ valid: true, ageOver: 18 })
      expect(await verifyAgeAnswer(JSON.parse(form.get('vp_token')!), check({ responseMode: 'direct_post', ...binding }))).toEqual({ valid: true, ageOver: 18 })
    }
  })

  test('A128GCM is accepted as well as A256GCM (HAIP 1.0 §5: Verifiers MUST support both)', async () => {
    const key = await generateResponseEncryptionKey()
    const jwe = await dcApiAnswer('mdl', key, { enc: 'A128GCM' })
    expect(JSON.parse(Buffer.from(jwe.split('.')[0]!, 'base64url').toString()).enc).toBe('A128GCM')
    expect(await verifyEncrypted(jwe, key, dcApiJwt(key))).toEqual({ valid: true, ageOver: 18 })
  })

  test('a declined cross-device answer decrypts to access_denied with the state', async () => {
    const key = await generateResponseEncryptionKey()
    const form = await crossDevice('sd-jwt', key, { decline: true })
    expect(await decryptResponse(form.get('response'), key.privateKey)).toEqual({ ok: true, response: { error: 'access_denied', state: STATE } })
  })

  test("the specification's example encrypted response (§8.3) decrypts with its example key", async () => {
    const example = {
      response:
        'eyJhbGciOiJFQ0RILUVTIiwiZW5jIjoiQTEyOEdDTSIsImtpZCI6ImFjIiwiZXBrIjp7Imt0eSI6IkVDIiwieCI6Im5ubVZwbTNWM2piaGNhZlFhUkJrU1ZOSGx3Wkh3dC05ck9wSnVmeVlJdWsiLCJ5IjoicjRmakRxd0p5czlxVU9QLV9iM21SNVNaRy0tQ3dPMm1pYzVWU05UWU45ZyIsImNydiI6IlAtMjU2In19..uAYcHRUSSn2X0WPX.yVzlGSYG4qbg0bq18JcUiDRw56yVnbKR8E7S7YlEtzT00RqE3Pw5oTpUG3hdLN4taHZ9gC1kwak8JOnJgQ.1wR024_3-qtAlx1oFIUpQQ',
    }
    const key = { kty: 'EC', kid: 'ac', use: 'enc', crv: 'P-256', alg: 'ECDH-ES', x: 'YO4epjifD-KWeq1sL2tNmm36BhXnkJ0He-WqMYrp9Fk', y: 'Hekpm0zfK7C-YccH5iBjcIXgf6YdUvNUac_0At55Okk', d: 'Et-3ce0omz8_TuZ96Df9lp0GAaaDoUnDe6X-CRO7Aww' }
    expect(readResponseKeyId(example.response)).toBe('ac')
    expect(await decryptResponse(example.response, key)).toEqual({ ok: true, response: { vp_token: { example_credential_id: ['eyJhb...YMetA'] } } })
  })
})

/** `jwe` with one of its five parts changed by `change`. */
function alter(jwe: string, part: number, change: (bytes: Buffer) => Buffer): string {
  const parts = jwe.split('.')
  parts[part] = change(Buffer.from(parts[part]!, 'base64url')).toString('base64url')
  return parts.join('.')
}
const flipFirstBit = (bytes: Buffer) => Buffer.from(bytes.map((byte, index) => (index === 0 ? byte ^ 1 : byte)))

describe('encrypted answers that are refused', () => {
  let key: ResponseEncryptionKey
  let jwe: string
  beforeAll(async () => {
    key = await generateResponseEncryptionKey()
    jwe = await dcApiAnswer('sd-jwt', key)
  })
  const payload = { vp_token: { pid_sd_jwt: ['x'] } }

  test('a bit changed in the ciphertext, the tag, the IV or the protected header is undecryptable', async () => {
    for (const part of [4, 3, 2]) expect(await decryptResponse(alter(jwe, part, flipFirstBit), key.privateKey)).toEqual({ ok: false, failure: 'undecryptable' })
    // A header member added: still our alg, enc and kid, but the header is the AEAD's additional data.
    const header = alter(jwe, 0, (bytes) => Buffer.from(JSON.stringify({ ...JSON.parse(bytes.toString()), typ: 'JWT' })))
    expect(await decryptResponse(header, key.privateKey)).toEqual({ ok: false, failure: 'undecryptable' })
    expect(await decryptResponse(jwe.slice(0, -4), key.privateKey)).toMatchObject({ ok: false })
  })

  test('apu and apv, as wallets on @openid4vc/openid4vp send them, are part of the key derivation (RFC 7518 §4.6.2)', async () => {
    const party = { apu: Buffer.from('wallet-nonce').toString('base64url'), apv: Buffer.from('request-nonce').toString('base64url') }
    expect(await decryptResponse(await encryptResponse(payload, key.publicKey, party), key.privateKey)).toEqual({ ok: true, response: payload })
    // The same header with a key derived without them: the content key differs, so the JWE does not open.
    const underived = await encryptResponse(payload, key.publicKey, { header: party })
    expect(await decryptResponse(underived, key.privateKey)).toEqual({ ok: false, failure: 'undecryptable' })
  })

  test("a JWE to another request's key is undecryptable, whether it names that key or claims ours", async () => {
    const other = await generateResponseEncryptionKey()
    const toOther = await encryptResponse(payload, other.publicKey)
    expect(readResponseKeyId(toOther)).toBe(other.publicKey.kid)
    expect(await decryptResponse(toOther, key.privateKey)).toEqual({ ok: false, failure: 'undecryptable' })
    const claimingOurs = await encryptResponse(payload, other.publicKey, { header: { kid: key.publicKey.kid } })
    expect(await decryptResponse(claimingOurs, key.privateKey)).toEqual({ ok: false, failure: 'undecryptable' })
  })

  test('an alg other than ECDH-ES is malformed: dir, RSA-OAEP, ECDH-ES with key wrapping, none, or no alg', async () => {
    for (const alg of ['dir', 'RSA-OAEP', 'RSA-OAEP-256', 'ECDH-ES+A256KW', 'A256GCMKW', 'none', 'ecdh-es', undefined]) {
      expect(await decryptResponse(await encryptResponse(payload, key.publicKey, { header: { alg } }), key.privateKey)).toEqual({ ok: false, failure: 'malformed' })
    }
  })

  test('an enc we did not advertise is malformed, even a JWE jose itself made with it', async () => {
    for (const enc of ['A128CBC-HS256', 'A192GCM', 'A256CBC-HS512', 'none']) {
      expect(await decryptResponse(await encryptResponse(payload, key.publicKey, { header: { enc } }), key.privateKey)).toEqual({ ok: false, failure: 'malformed' })
    }
    const cbc = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128CBC-HS256', kid: key.publicKey.kid })
      .encrypt(await importJWK(key.publicKey, 'ECDH-ES'))
    expect(await decryptResponse(cbc, key.privateKey)).toEqual({ ok: false, failure: 'malformed' })
  })

  test('a JWE without kid, or with an epk that is not a P-256 public key, is malformed', async () => {
    expect(await decryptResponse(await encryptResponse(payload, key.publicKey, { header: { kid: undefined } }), key.privateKey)).toEqual({ ok: false, failure: 'malformed' })
    for (const epk of [undefined, 'key', { kty: 'EC', crv: 'P-384', x: 'a', y: 'b' }, { kty: 'OKP', crv: 'X25519', x: 'a' }, { ...key.privateKey }]) {
      expect(await decryptResponse(await encryptResponse(payload, key.publicKey, { header: { epk } }), key.privateKey)).toEqual({ ok: false, failure: 'malformed' })
    }
    // A point that is not on the curve never reaches the key agreement's arithmetic.
    const offCurve = { kty: 'EC', crv: 'P-256', x: key.publicKey.x, y: Buffer.alloc(32, 1).toString('base64url') }
    expect(await decryptResponse(await encryptResponse(payload, key.publicKey, { header: { epk: offCurve } }), key.privateKey)).toEqual({ ok: false, failure: 'undecryptable' })
  })

  test('a huge or malformed header, or no compact JWE at all, is malformed, never an exception', async () => {
    const huge = await encryptResponse(payload, key.publicKey, { header: { pad: 'x'.repeat(10_000) } })
    const [, ...rest] = jwe.split('.')
    const header = (text: string) => [Buffer.from(text).toString('base64url'), ...rest].join('.')
    const inputs: unknown[] = [
      huge,
      header('not json'),
      header('[]'),
      header('null'),
      header('"ECDH-ES"'),
      jwe.split('.').slice(0, 4).join('.'),
      `${jwe}.extra`,
      jwe.replace('.', '.+/'),
      `${jwe.slice(0, 40)}=${jwe.slice(40)}`,
      `${jwe}${'A'.repeat(200_000)}`,
      '',
      '....',
      undefined,
      null,
      42,
      { response: jwe },
    ]
    for (const input of inputs) {
      expect(await decryptResponse(input, key.privateKey)).toEqual({ ok: false, failure: 'malformed' })
      expect(readResponseKeyId(input)).toBeUndefined()
    }
  })

  test('a payload that is no authorization response is malformed', async () => {
    for (const content of ['a string', [payload], { state: STATE }, { vp_token: {}, state: 7 }, { error: 42 }, null]) {
      expect(await decryptResponse(await encryptResponse(content, key.publicKey), key.privateKey)).toEqual({ ok: false, failure: 'malformed' })
    }
  })
})

describe('the answer is bound to this request, its channel and its key', () => {
  test('an SD-JWT whose KB-JWT audience is of the wrong kind is refused: the client id over the DC API, origin: cross-device', async () => {
    const key = await generateResponseEncryptionKey()
    // A.4: "This is the case even for signed requests": the signed request's client id is not the audience.
    const clientIdAudience = await dcApiAnswer('sd-jwt', key, { audience: verifier.clientId })
    expect(await verifyEncrypted(clientIdAudience, key, dcApiJwt(key))).toEqual({ valid: false, failure: 'wrong_audience' })
    const originAudience = (await crossDevice('sd-jwt', key, { audience: `origin:${ORIGIN}` })).get('response')!
    expect(await verifyEncrypted(originAudience, key, directPostJwt(key))).toEqual({ valid: false, failure: 'wrong_audience' })
  })

  test('an mdoc signed over the transcript without the key thumbprint is refused under an encrypted mode', async () => {
    const key = await generateResponseEncryptionKey()
    const dcApi = await dcApiAnswer('av', key, { omitThumbprint: true })
    expect(await verifyEncrypted(dcApi, key, dcApiJwt(key))).toEqual({ valid: false, failure: 'key_binding' })
    const crossDeviceJwe = (await crossDevice('mdl', key, { omitThumbprint: true })).get('response')!
    expect(await verifyEncrypted(crossDeviceJwe, key, directPostJwt(key))).toEqual({ valid: false, failure: 'key_binding' })
    // Nor does a transcript with the thumbprint pass for an unencrypted answer.
    const decrypted = await decryptResponse(await dcApiAnswer('av', key), key.privateKey)
    expect(decrypted.ok && (await verifyAgeAnswer(decrypted.response.vp_token, check({ origin: ORIGIN })))).toEqual({ valid: false, failure: 'key_binding' })
  })

  test("an mdoc answered to one key and verified as an answer to another key is refused (a re-encrypted response)", async () => {
    const [first, second] = await Promise.all([generateResponseEncryptionKey(), generateResponseEncryptionKey()])
    const decrypted = await decryptResponse(await dcApiAnswer('mdl', first), first.privateKey)
    if (!decrypted.ok) throw new Error(decrypted.failure)
    const reEncrypted = await encryptResponse(decrypted.response, second.publicKey)
    expect(await verifyEncrypted(reEncrypted, second, dcApiJwt(second))).toEqual({ valid: false, failure: 'key_binding' })
  })
})

describe('SessionTranscripts of encrypted answers (OpenID4VP 1.0 Appendix B.2.6)', () => {
  // The example key of B.2.6.1 and B.2.6.2; the examples' nonce, client id, response URI and origin.
  const exampleKey = { kty: 'EC', crv: 'P-256', x: 'DxiH5Q4Yx3UrukE2lWCErq8N8bqC9CHLLrAwLz5BmE0', y: 'XtLM4-3h5o3HUH0MHVJV0kyq0iBlrBwlh8qEDMZ4-Pc', use: 'enc', alg: 'ECDH-ES', kid: '1' }
  const nonce = 'exc7gBkxjx1rdc9udRrveKvSsJIq80avlXeLHhGwqtA'
  const redirect = { clientId: 'x509_san_dns:example.com', responseUri: 'https://example.com/response' }
  const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

  test("the example key's RFC 7638 thumbprint is the examples' jwkThumbprint", async () => {
    expect(hex(await responseKeyThumbprint(exampleKey))).toBe('4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047')
  })

  test("with that key's thumbprint, the verifier's and the wallet's transcripts are the examples' bytes", async () => {
    const jwkThumbprint = await responseKeyThumbprint(exampleKey)
    const redirectExample = '83f6f682714f70656e494434565048616e646f7665725820048bc053c00442af9b8eed494cefdd9d95240d254b046b11b68013722aad38ac'
    const dcApiExample = '83f6f682764f70656e4944345650444341504948616e646f7665725820fbece366f4212f9762c74cfdbf83b8c69e371d5d68cea09cb4c48ca6daab761a'
    expect(hex(openId4VpSessionTranscript({ ...redirect, nonce, jwkThumbprint }))).toBe(redirectExample)
    expect(hex(dcApiSessionTranscript({ origin: 'https://example.com', nonce, jwkThumbprint }))).toBe(dcApiExample)
    expect(hex(await walletSessionTranscript({ ...redirect, jwkThumbprint }, nonce))).toBe(redirectExample)
    expect(hex(await walletSessionTranscript({ origin: 'https://example.com', jwkThumbprint }, nonce))).toBe(dcApiExample)
  })
})
