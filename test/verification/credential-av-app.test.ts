import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { decodeJwt, type JWK } from 'jose'
import { presentToVerifier } from '../../src/credentials/dev/wallet.ts'
import { createMdocPki, generateP256KeyPair } from '../credentials/pki.ts'
import { json, PUBLIC_URL, queryRows } from '../helpers.ts'
import { answerAvLink, buildAvAnswer, postAvAnswer, readAvLink, type AvAppHolder } from '../wallets/av-app-wallet.ts'
import { issueMdoc } from '../wallets/mdoc.ts'
import { answerCrossDeviceRequest } from '../wallets/openid4vp-wallet.ts'
import { callback } from './browser.ts'
import { NOW, openCredentialFlow, type CredentialFlow } from './credential-flow.ts'

/**
 * The EU age verification app's own request (technical specification, Annex A §A.5): an `av://` link with
 * the request by value, `direct_post` in the clear, the client id `redirect_uri:` + the response URI. The
 * app is test/wallets/av-app-wallet.ts, written from §A.5 and OpenID4VP 1.0 alone; the attestation is
 * issued and presented by test/wallets/mdoc.ts. The page offers this beside the HAIP `openid4vp://` request,
 * for one answer to one request of the session.
 */
let flow: CredentialFlow
const fetcher = () => flow.fetcher
type Started = Awaited<ReturnType<CredentialFlow['startRequest']>>

beforeAll(async () => {
  flow = await openCredentialFlow()
})
afterAll(() => flow.ctx.close())

/** An app holding one Proof of Age attestation (`eu.europa.ec.av.1`) with these statements, from `signer` or the trusted issuer. */
async function avApp(ages: Record<string, boolean> = { '18': true, '21': true }, signer?: { key: JWK; certificate: string }): Promise<AvAppHolder> {
  const holder = await generateP256KeyPair()
  const mdoc = await issueMdoc({
    signerKey: signer?.key ?? flow.issuer.signerKey,
    signerCertificate: signer?.certificate ?? flow.issuer.signerCertificate,
    holderPublicKey: holder.publicKey,
    docType: 'eu.europa.ec.av.1',
    namespace: 'eu.europa.ec.av.1',
    ages,
    validFrom: new Date(NOW.getTime() - 86_400_000),
    validUntil: new Date(NOW.getTime() + 90 * 86_400_000),
  })
  return { mdoc, privateKey: holder.privateKey }
}

const avUrl = (started: Started) => (started.request as Started['request'] & { av_url: string }).av_url

async function outcomeOf(started: Started) {
  const rows = await queryRows<{ failure: string | null; outcome: string | null }>(
    flow.ctx.deps.db,
    sql`select outcome, failure from credential_requests where id_hash = ${createHash('sha256').update(started.request.request).digest('hex')}`,
  )
  return rows[0]
}

describe('the QR panel offers the EU age verification app its own request', () => {
  test('an av:// link carries the request by value as §A.5 lists it; the openid4vp:// request is unchanged', async () => {
    const started = await flow.startRequest({ age_required: '21' })
    expect(started.request.wallet_url).toStartWith('openid4vp://?client_id=x509_hash%3A')
    const link = new URL(avUrl(started))
    expect(link.protocol).toBe('av:')
    const responseUri = link.searchParams.get('response_uri')!
    expect(responseUri).toStartWith(`${PUBLIC_URL}/api/oid4vp/av/`)
    expect(Object.fromEntries(link.searchParams)).toEqual({
      response_type: 'vp_token',
      response_mode: 'direct_post',
      client_id: `redirect_uri:${responseUri}`,
      response_uri: responseUri,
      nonce: expect.stringMatching(/^[\w-]{32}$/),
      dcql_query: expect.any(String),
    })
    // Annex A §A.10's query, at this page's threshold.
    expect(JSON.parse(link.searchParams.get('dcql_query')!)).toEqual({
      credentials: [{ id: 'proof_of_age', format: 'mso_mdoc', meta: { doctype_value: 'eu.europa.ec.av.1' }, claims: [{ path: ['eu.europa.ec.av.1', 'age_over_21'] }] }],
    })
    expect(readAvLink(link.href).ok).toBe(true)
    expect((started.request as { av_qr_svg?: string }).av_qr_svg).toStartWith('<svg role="img" aria-label="EU age verification app"')
  })

  test('each request has its own response URI, and the page names both apps in its language', async () => {
    const first = await flow.startRequest()
    const second = await first.startAnother()
    expect(new URL((second as { av_url?: string }).av_url!).searchParams.get('response_uri')).not.toBe(new URL(avUrl(first)).searchParams.get('response_uri'))

    expect(first.page.html).toContain('EU Digital Identity Wallet and other ID wallets')
    expect(first.page.html).toContain('EU age verification app')
    expect(first.page.html).toContain('Open the age verification app on this device')
    const german = await json(await first.browser.post(`${first.base}/start?lang=de`, { csrf: first.page.csrf! }))
    expect(german.av_qr_svg).toContain('aria-label="Altersnachweis-App der EU"')
  })
})

describe('a wallet written from Annex A §A.5 alone', () => {
  test('completes a check from the av:// link: the answer is verified where it arrives and the page redeems it', async () => {
    const started = await flow.startRequest({ age_required: '21' })
    flow.sent.length = 0
    const answer = await answerAvLink(avUrl(started), await avApp(), { fetcher: fetcher() })
    expect(answer).toMatchObject({ status: 200, body: {} })
    // direct_post: the vp_token in the clear, form-encoded, and nothing else (no state was sent).
    expect([...new URLSearchParams(flow.sent.at(-1)!.body).keys()]).toEqual(['vp_token'])
    expect(await started.status()).toBe('answered')
    const back = callback(await started.redeem())
    const token = await flow.exchange(back!.code)
    expect(decodeJwt(token.access_token)).toMatchObject({ age_verified: true, age_over: 21 })
    const [audit] = await queryRows<{ method: string; method_class: string }>(flow.ctx.deps.db, sql`select method, method_class from audit_logs where transaction_id = ${token.transaction_id}`)
    expect(audit).toEqual({ method: 'credential', method_class: 'age_only' })
  })

  test('an attestation from an issuer outside the trust list is refused (untrusted_issuer)', async () => {
    const pki = await createMdocPki({ from: new Date(NOW.getTime() - 86_400_000), signerUntil: new Date(NOW.getTime() + 365 * 86_400_000), name: 'Rogue' })
    const started = await flow.startRequest()
    const answer = await answerAvLink(avUrl(started), await avApp(undefined, { key: pki.signer.privateKey, certificate: pki.signerPem }), { fetcher: fetcher() })
    expect(answer.status).toBe(400)
    expect(JSON.stringify(answer.body)).toContain('untrusted_issuer')
    expect(await outcomeOf(started)).toEqual({ outcome: 'refused', failure: 'untrusted_issuer' })
    expect(await (await started.redeem()).text()).toContain('does not accept')
  })

  test('a device signature over another nonce is refused (key_binding)', async () => {
    const started = await flow.startRequest()
    const answer = await answerAvLink(avUrl(started), await avApp(), { fetcher: fetcher(), nonce: 'a-nonce-of-another-request-0123' })
    expect(answer.status).toBe(400)
    expect(await outcomeOf(started)).toEqual({ outcome: 'refused', failure: 'key_binding' })
  })

  test('age_over_18 false is refused (under_threshold)', async () => {
    const started = await flow.startRequest()
    const answer = await answerAvLink(avUrl(started), await avApp({ '18': false }), { fetcher: fetcher() })
    expect(answer.status).toBe(400)
    expect(await outcomeOf(started)).toEqual({ outcome: 'refused', failure: 'under_threshold' })
    expect(await (await started.redeem()).text()).toContain('does not show that you are 18 or older')
  })

  test('a replay is refused: the same answer posted twice, or to another request', async () => {
    const started = await flow.startRequest()
    const app = await avApp()
    const first = await answerAvLink(avUrl(started), app, { fetcher: fetcher() })
    expect(first.status).toBe(200)
    // The same post again: the response URI is one request's, answered once.
    const again = await postAvAnswer(first.sent.url, first.sent.body, fetcher())
    expect(again.status).toBe(400)
    expect(await outcomeOf(started)).toEqual({ outcome: 'approved', failure: null })

    // The answer posted to another request's response URI: signed over the first one's client id, URI and nonce.
    const other = await flow.startRequest()
    const replayed = await postAvAnswer(new URL(avUrl(other)).searchParams.get('response_uri')!, first.sent.body, fetcher())
    expect(replayed.status).toBe(400)
    expect(await outcomeOf(other)).toEqual({ outcome: 'refused', failure: 'key_binding' })
  })

  test('a stolen link answered elsewhere completes nothing for another browser: the answer belongs to the session that showed it', async () => {
    const victim = await flow.startRequest()
    const thief = await flow.startRequest()
    expect((await answerAvLink(avUrl(victim), await avApp(), { fetcher: fetcher() })).status).toBe(200)
    // The thief's session cannot redeem the victim's request id; the victim's page still completes.
    expect(callback(await thief.redeem(victim.request.request))).toBeUndefined()
    expect(callback(await victim.redeem())).toBeDefined()
  })

  test('only what the av:// request asked is accepted: another query id, another credential, an encrypted form', async () => {
    const app = await avApp()
    const started = await flow.startRequest()
    const read = readAvLink(avUrl(started))
    if (!read.ok) throw new Error(read.refusal)
    // Under the HAIP query's id for the same attestation: not a query of this request.
    const underOtherId = await buildAvAnswer({ ...read.request, query: { ...read.request.query, id: 'age_verification_mdoc' } }, app)
    expect((await postAvAnswer(read.request.responseUri, underOtherId, fetcher())).status).toBe(400)
    expect(await outcomeOf(started)).toEqual({ outcome: 'refused', failure: 'malformed' })

    // A mobile driving licence under proof_of_age: the query asked for the AV doc type.
    const holder = await generateP256KeyPair()
    const mdl = await issueMdoc({
      signerKey: flow.issuer.signerKey,
      signerCertificate: flow.issuer.signerCertificate,
      holderPublicKey: holder.publicKey,
      docType: 'org.iso.18013.5.1.mDL',
      namespace: 'org.iso.18013.5.1',
      ages: { '18': true },
      validFrom: new Date(NOW.getTime() - 86_400_000),
      validUntil: new Date(NOW.getTime() + 90 * 86_400_000),
    })
    const second = await flow.startRequest()
    const mdlAnswer = await answerAvLink(avUrl(second), { mdoc: mdl, privateKey: holder.privateKey }, { fetcher: fetcher() })
    expect(mdlAnswer.status).toBe(400)
    expect(await outcomeOf(second)).toEqual({ outcome: 'refused', failure: 'wrong_credential' })

    // A JWE (`direct_post.jwt`) where the profile answers in the clear.
    const third = await flow.startRequest()
    const encrypted = await postAvAnswer(new URL(avUrl(third)).searchParams.get('response_uri')!, new URLSearchParams({ response: 'a.b.c.d.e' }), fetcher())
    expect(encrypted.status).toBe(400)
    expect(await outcomeOf(third)).toEqual({ outcome: 'refused', failure: 'wrong_protocol' })
  })

  test('declining in the app is recorded as declined', async () => {
    const started = await flow.startRequest()
    expect((await answerAvLink(avUrl(started), await avApp(), { fetcher: fetcher(), decline: true })).status).toBe(200)
    expect(await outcomeOf(started)).toEqual({ outcome: 'refused', failure: 'declined' })
    expect(await (await started.redeem()).text()).toContain('You declined in your wallet')
  })

  test('a HAIP wallet answering the openid4vp:// request of the same session is unaffected', async () => {
    const started = await flow.startRequest()
    const answer = await answerCrossDeviceRequest(await flow.walletWith('av', 40), started.request.wallet_url, { now: NOW, fetcher: fetcher() })
    expect(answer.status).toBe(200)
    expect(callback(await started.redeem())).toBeDefined()
    // The request took its one answer: the av:// address of the same request is closed.
    expect((await answerAvLink(avUrl(started), await avApp(), { fetcher: fetcher() })).status).toBe(400)
  })
})

test('the dev wallet (`ofage dev wallet present`) answers an av:// link, for operators trying it without a phone', async () => {
  const started = await flow.startRequest()
  expect(await presentToVerifier(await flow.walletWith('av', 30), avUrl(started), { now: NOW, fetcher: fetcher() })).toEqual({ status: 200, body: {} })
  expect(callback(await started.redeem())).toBeDefined()
})

describe('CREDENTIAL_AV_PROFILE=off', () => {
  let off: CredentialFlow
  beforeAll(async () => {
    off = await openCredentialFlow({ CREDENTIAL_AV_PROFILE: 'off' })
  })
  afterAll(() => off.ctx.close())

  test('the page offers only the openid4vp:// request, and the av:// address answers nothing', async () => {
    const started = await off.startRequest()
    expect(started.request.wallet_url).toStartWith('openid4vp://')
    expect(started.request).not.toHaveProperty('av_url')
    expect(started.request).not.toHaveProperty('av_qr_svg')
    const state = 'x'.repeat(32)
    const response = await off.ctx.request(`/api/oid4vp/av/${state}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'vp_token=%7B%7D' })
    expect(response.status).toBe(404)
    expect(await started.status()).toBe('pending')
  })
})
