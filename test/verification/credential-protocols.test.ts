import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { decodeJwt } from 'jose'
import { generateP256KeyPair } from '../credentials/pki.ts'
import { json, PUBLIC_URL, queryRows } from '../helpers.ts'
import { ageMdocHolder, answerAnnexCRequest, sealAnnexCResponse } from '../wallets/annex-c-wallet.ts'
import { issueMdoc } from '../wallets/mdoc.ts'
import { answerCrossDeviceRequest, answerSignedDcApiRequest, answerUnsignedDcApiRequest } from '../wallets/openid4vp-wallet.ts'
import { callback } from './browser.ts'
import { NOW, openCredentialFlow, type CredentialFlow } from './credential-flow.ts'

/**
 * Every protocol the method offers, answered by test wallets written apart from the verifier (test/wallets/):
 * ISO 18013-7 Annex C (`org-iso-mdoc`, HPKE) as Safari and Apple Wallet speak it, OpenID4VP signed requests
 * with `dc_api.jwt` as Google Wallet and HAIP wallets do, the unsigned request, and cross-device
 * `direct_post.jwt`. Each approval is redeemed for a token; each refusal is recorded with its reason.
 */
let flow: CredentialFlow
const origin = new URL(PUBLIC_URL).origin

beforeAll(async () => {
  flow = await openCredentialFlow()
})
afterAll(() => flow.ctx.close())

/** An Annex C holder of both age doc types, issued by the trusted development issuer. */
async function annexCHolder() {
  const holder = await generateP256KeyPair()
  const issue = (docType: string, namespace: string) =>
    issueMdoc({
      signerKey: flow.issuer.signerKey,
      signerCertificate: flow.issuer.signerCertificate,
      holderPublicKey: holder.publicKey,
      docType,
      namespace,
      ages: { '16': true, '18': true, '21': true },
      validFrom: new Date(NOW.getTime() - 86_400_000),
      validUntil: new Date(NOW.getTime() + 90 * 86_400_000),
    })
  const issued = { 'eu.europa.ec.av.1': await issue('eu.europa.ec.av.1', 'eu.europa.ec.av.1'), 'org.iso.18013.5.1.mDL': await issue('org.iso.18013.5.1.mDL', 'org.iso.18013.5.1') }
  return { issued, holder, present: (docTypes: string[]) => ageMdocHolder(Object.fromEntries(docTypes.map((docType) => [docType, issued[docType as keyof typeof issued]])), holder.privateKey) }
}

const protocolOf = (started: Awaited<ReturnType<CredentialFlow['startRequest']>>, protocol: string) => started.request.dc_api.find((request) => request.protocol === protocol)!

async function expectApproved(started: Awaited<ReturnType<CredentialFlow['startRequest']>>, age: number) {
  const back = callback(await started.redeem())
  expect(back).toBeDefined()
  const token = await flow.exchange(back!.code)
  expect(decodeJwt(token.access_token)).toMatchObject({ age_verified: true, age_over: age })
  const [audit] = await queryRows<{ method_class: string }>(flow.ctx.deps.db, sql`select method_class from audit_logs where transaction_id = ${token.transaction_id}`)
  expect(audit?.method_class).toBe('age_only')
}

async function failureOf(started: Awaited<ReturnType<CredentialFlow['startRequest']>>) {
  const rows = await queryRows<{ failure: string | null; outcome: string | null }>(flow.ctx.deps.db, sql`select outcome, failure from credential_requests where id_hash = ${createHash('sha256').update(started.request.request).digest('hex')}`)
  return rows[0]
}

describe('org-iso-mdoc (ISO 18013-7 Annex C): what Safari and Apple Wallet speak', () => {
  for (const docType of ['org.iso.18013.5.1.mDL', 'eu.europa.ec.av.1'] as const) {
    test(`${docType}: the HPKE-sealed DeviceResponse is opened, verified and redeemed for a token`, async () => {
      const { present } = await annexCHolder()
      const started = await flow.startRequest({ age_required: '21' })
      const answer = await answerAnnexCRequest(protocolOf(started, 'org-iso-mdoc').data, origin, { holder: present([docType]) })
      if (!answer.ok) throw new Error(`the wallet refused: ${answer.refusal}`)
      expect(answer.docType).toBe(docType)
      expect(await json(await started.answerInPage({ protocol: 'org-iso-mdoc', data: answer.data }))).toEqual({ status: 'answered' })
      await expectApproved(started, 21)
    })
  }

  test('an answer sealed for another origin, or to another request of the same visitor, does not open', async () => {
    const { present } = await annexCHolder()
    const started = await flow.startRequest()
    const elsewhere = await answerAnnexCRequest(protocolOf(started, 'org-iso-mdoc').data, 'https://rival.example', { holder: present(['org.iso.18013.5.1.mDL']) })
    await started.answerInPage({ protocol: 'org-iso-mdoc', data: elsewhere.ok && elsewhere.data })
    expect(await failureOf(started)).toEqual({ outcome: 'refused', failure: 'undecryptable' })
    expect(await (await started.redeem()).text()).toContain('could not be opened')

    const other = await flow.startRequest()
    const second = await flow.startRequest()
    const forOther = await answerAnnexCRequest(protocolOf(other, 'org-iso-mdoc').data, origin, { holder: present(['eu.europa.ec.av.1']) })
    await second.answerInPage({ protocol: 'org-iso-mdoc', data: forOther.ok && forOther.data })
    expect(await failureOf(second)).toEqual({ outcome: 'refused', failure: 'undecryptable' })
  })

  test('a flipped byte in the ciphertext is undecryptable; a DeviceResponse signed for another request and sealed anew is key_binding', async () => {
    const { present } = await annexCHolder()
    const started = await flow.startRequest()
    const answer = await answerAnnexCRequest(protocolOf(started, 'org-iso-mdoc').data, origin, { holder: present(['org.iso.18013.5.1.mDL']) })
    const bytes = Buffer.from(answer.ok ? answer.data.response : '', 'base64url')
    bytes[bytes.length - 5]! ^= 1
    await started.answerInPage({ protocol: 'org-iso-mdoc', data: { response: bytes.toString('base64url') } })
    expect(await failureOf(started)).toEqual({ outcome: 'refused', failure: 'undecryptable' })

    // The wallet's DeviceResponse for one request, sealed properly to another: its device signature is over the first transcript.
    const first = await flow.startRequest()
    const target = await flow.startRequest()
    const signedFor = protocolOf(first, 'org-iso-mdoc').data
    const holder = present(['org.iso.18013.5.1.mDL'])
    const { annexCTranscript } = await import('../wallets/transcripts.ts')
    const items = { docType: 'org.iso.18013.5.1.mDL', nameSpaces: new Map([['org.iso.18013.5.1', new Map([['age_over_18', false]])]]) }
    const deviceResponse = await holder.present(items, annexCTranscript({ encryptionInfo: signedFor.encryptionInfo, origin }))
    const resealed = await sealAnnexCResponse(deviceResponse, { encryptionInfo: protocolOf(target, 'org-iso-mdoc').data.encryptionInfo, origin })
    await target.answerInPage({ protocol: 'org-iso-mdoc', data: resealed })
    expect(await failureOf(target)).toEqual({ outcome: 'refused', failure: 'key_binding' })
  })
})

describe('openid4vp-v1-signed with dc_api.jwt: what Google Wallet and HAIP wallets speak', () => {
  for (const format of ['sd-jwt', 'mdl'] as const) {
    test(`${format}: the signed request names our origin; the JWE answer is opened with this request's key and redeemed`, async () => {
      const started = await flow.startRequest()
      const data = await answerSignedDcApiRequest(await flow.walletWith(format, 40), protocolOf(started, 'openid4vp-v1-signed') as never, { origin, now: NOW })
      expect(Object.keys(data)).toEqual(['response'])
      await started.answerInPage({ protocol: 'openid4vp-v1-signed', data })
      await expectApproved(started, 18)
    })
  }

  test('a HAIP wallet refuses the signed request on another origin (expected_origins)', async () => {
    const started = await flow.startRequest()
    expect(await answerSignedDcApiRequest(await flow.walletWith('sd-jwt', 40), protocolOf(started, 'openid4vp-v1-signed') as never, { origin: 'https://rival.example', now: NOW })).toEqual({ error: 'invalid_request' })
  })

  test('an answer in a protocol we did not ask in, or in the clear where we asked for it encrypted, is wrong_protocol', async () => {
    for (const protocol of ['openid4vp', 'openid4vp-v1-multisigned', 'org.iso.mdoc']) {
      const started = await flow.startRequest()
      const data = await answerSignedDcApiRequest(await flow.walletWith('sd-jwt', 40), protocolOf(started, 'openid4vp-v1-signed') as never, { origin, now: NOW })
      await started.answerInPage({ protocol, data })
      expect(await failureOf(started)).toEqual({ outcome: 'refused', failure: 'wrong_protocol' })
    }
    const started = await flow.startRequest()
    const unsigned = protocolOf(started, 'openid4vp-v1-unsigned')
    // A wallet that ignores response_mode and answers dc_api in the clear.
    const clear = await answerUnsignedDcApiRequest(await flow.walletWith('av', 40), { ...unsigned, data: { ...unsigned.data, response_mode: 'dc_api' } }, { origin, now: NOW })
    expect(Object.keys(clear)).toEqual(['vp_token'])
    await started.answerInPage({ protocol: 'openid4vp-v1-unsigned', data: clear })
    expect(await failureOf(started)).toEqual({ outcome: 'refused', failure: 'wrong_protocol' })
    expect(await (await started.redeem()).text()).toContain('did not ask for')
  })

  test("a JWE sealed to another request's key is undecryptable here, and a tampered one too", async () => {
    const other = await flow.startRequest()
    const started = await flow.startRequest()
    const forOther = await answerSignedDcApiRequest(await flow.walletWith('sd-jwt', 40), protocolOf(other, 'openid4vp-v1-signed') as never, { origin, now: NOW })
    await started.answerInPage({ protocol: 'openid4vp-v1-signed', data: forOther })
    expect(await failureOf(started)).toEqual({ outcome: 'refused', failure: 'undecryptable' })

    const third = await flow.startRequest()
    const data = (await answerSignedDcApiRequest(await flow.walletWith('sd-jwt', 40), protocolOf(third, 'openid4vp-v1-signed') as never, { origin, now: NOW })) as { response: string }
    const parts = data.response.split('.')
    const ciphertext = Buffer.from(parts[3]!, 'base64url')
    ciphertext[0]! ^= 1
    parts[3] = ciphertext.toString('base64url')
    await third.answerInPage({ protocol: 'openid4vp-v1-signed', data: { response: parts.join('.') } })
    expect(await failureOf(third)).toEqual({ outcome: 'refused', failure: 'undecryptable' })
  })
})

describe('cross-device with direct_post.jwt', () => {
  test('the wallet posts only the JWE; the state inside finds the request, which completes in the browser', async () => {
    const started = await flow.startRequest()
    flow.sent.length = 0
    const answer = await answerCrossDeviceRequest(await flow.walletWith('av', 40), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher })
    expect(answer.status).toBe(200)
    expect([...new URLSearchParams(flow.sent.at(-1)!.body).keys()]).toEqual(['response'])
    expect(await started.status()).toBe('answered')
    await expectApproved(started, 18)
  })

  test('a plain direct_post answer to a request that asked for an encrypted one is wrong_protocol', async () => {
    const started = await flow.startRequest()
    const { fetchRequest, answerRequest } = await import('../../src/credentials/dev/wallet.ts')
    const request = await fetchRequest(started.request.wallet_url, flow.fetcher, NOW)
    const vpToken = await answerRequest(await flow.walletWith('sd-jwt', 40), request, { clientId: request.client_id, responseUri: request.response_uri }, NOW)
    const response = await flow.ctx.request('/api/oid4vp/responses', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ vp_token: JSON.stringify(vpToken), state: request.state }).toString() })
    expect(response.status).toBe(400)
    expect((await json(response)).error_description).toContain('wrong_protocol')
    expect(await failureOf(started)).toEqual({ outcome: 'refused', failure: 'wrong_protocol' })
  })

  test('a JWE naming no open request is a 400 and answers nothing; a declined one is recorded as declined', async () => {
    const started = await flow.startRequest()
    const header = Buffer.from(JSON.stringify({ alg: 'ECDH-ES', enc: 'A128GCM', kid: 'no-such-key' })).toString('base64url')
    const response = await flow.ctx.request('/api/oid4vp/responses', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `response=${header}..aaaa.bbbb.cccc` })
    expect(response.status).toBe(400)
    expect(await started.status()).toBe('pending')
    const declined = await answerCrossDeviceRequest(await flow.walletWith('av', 40), started.request.wallet_url, { now: NOW, fetcher: flow.fetcher, decline: true })
    expect(declined.status).toBe(200)
    expect(await failureOf(started)).toEqual({ outcome: 'refused', failure: 'declined' })
  })
})

describe('CREDENTIAL_PLAIN_ANSWERS=1, for wallets that cannot encrypt', () => {
  let plain: CredentialFlow
  beforeAll(async () => {
    plain = await openCredentialFlow({ CREDENTIAL_PLAIN_ANSWERS: '1' })
  })
  afterAll(() => plain.ctx.close())

  test('requests ask for direct_post and dc_api; a plain answer completes, an encrypted one is wrong_protocol', async () => {
    const started = await plain.startRequest()
    expect(protocolOf(started, 'openid4vp-v1-unsigned').data.response_mode).toBe('dc_api')
    const answer = await answerCrossDeviceRequest(await plain.walletWith('mdl', 40), started.request.wallet_url, { now: NOW, fetcher: plain.fetcher })
    expect(answer.status).toBe(200)
    expect(callback(await started.redeem())).toBeDefined()

    const signed = await plain.startRequest()
    const data = await answerSignedDcApiRequest(await plain.walletWith('sd-jwt', 40), protocolOf(signed, 'openid4vp-v1-signed') as never, { origin, now: NOW })
    // HAIP: a signed request is answered encrypted, plain answers allowed or not.
    expect(Object.keys(data)).toEqual(['response'])
    await signed.answerInPage({ protocol: 'openid4vp-v1-signed', data })
    expect(callback(await signed.redeem())).toBeDefined()
  })
})
