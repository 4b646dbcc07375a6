import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { decodeJwt } from 'jose'
import type { DevWallet } from '../../src/credentials/dev/wallet.ts'
import { generateP256KeyPair } from '../credentials/pki.ts'
import { derOf, signStatusListCwt, startStatusServer, type StatusServer } from '../credentials/status-fixtures.ts'
import { freePort, PUBLIC_URL, queryRows } from '../helpers.ts'
import { ageMdocHolder, answerAnnexCRequest } from '../wallets/annex-c-wallet.ts'
import { issueMdoc, presentMdoc } from '../wallets/mdoc.ts'
import { answerCrossDeviceRequest } from '../wallets/openid4vp-wallet.ts'
import { callback } from './browser.ts'
import { NOW, openCredentialFlow, type CredentialFlow } from './credential-flow.ts'

/**
 * An mdoc whose MSO names its Token Status List entry (ISO/IEC 18013-5 second edition: `status: { status_list:
 * { idx, uri } }`, a CWT Status List Token) is checked through the whole method as the PID's entry is
 * (credential-status.test.ts): the same checker and cache, the same verdicts, words and attempts. The mdocs come
 * from the independent issuer (test/wallets/mdoc.ts, which writes the MSO's `status`), the lists from cbor2 and
 * WebCrypto, signed by the issuer's document signer (x5chain to the dev root in the trust list).
 */
const VALID = 0
const INVALID = 1
const SUSPENDED = 2
const IAT = Math.floor(NOW.getTime() / 1000)
const MDL = 'org.iso.18013.5.1.mDL'

const WITHDRAWN = 'This ID has been withdrawn by its issuer'
const SUSPENDED_WORDS = 'This ID has been suspended by its issuer for now'
const TRY_IN_A_MOMENT = 'Try again in a moment; this did not use up a try.'

let flow: CredentialFlow
let lists: StatusServer

beforeAll(async () => {
  flow = await openCredentialFlow()
  lists = startStatusServer()
})
afterAll(async () => {
  lists.stop()
  await flow.ctx.close()
})

type Started = Awaited<ReturnType<CredentialFlow['startRequest']>>

/** Serves, at `path`, a CWT list signed by the flow's issuer where entry 3 has `status` (its neighbours VALID). */
async function serveCwtList(path: string, status: number) {
  const uri = lists.url(path)
  const claims = { statuses: [VALID, VALID, VALID, status, VALID], sub: uri, iat: IAT, ttl: 300 }
  lists.route(path, await signStatusListCwt(claims, flow.issuer.signerKey, [derOf(flow.issuer.signerCertificate)]))
  return { idx: 3, uri }
}

/** An mDL of the flow's issuer whose MSO names `reference` as its status list entry, and its holder. */
async function mdlWithStatus(reference: { idx: number; uri: string }) {
  const holder = await generateP256KeyPair()
  const issued = await issueMdoc({
    signerKey: flow.issuer.signerKey,
    signerCertificate: flow.issuer.signerCertificate,
    holderPublicKey: holder.publicKey,
    docType: MDL,
    namespace: 'org.iso.18013.5.1',
    ages: { '18': true, '21': true },
    validFrom: new Date(NOW.getTime() - 86_400_000),
    validUntil: new Date(NOW.getTime() + 90 * 86_400_000),
    status: { status_list: reference },
  })
  const wallet: DevWallet = { holder, credentials: [{ format: 'mso_mdoc', docType: MDL, credential: Buffer.from(issued).toString('base64url') }] }
  return { holder, issued, wallet }
}

/** Answers the started request's QR code with the mDL, over `direct_post.jwt`. */
async function answerCrossDevice(started: Started, reference: { idx: number; uri: string }) {
  const { wallet } = await mdlWithStatus(reference)
  return answerCrossDeviceRequest(wallet, started.request.wallet_url, { now: NOW, fetcher: flow.fetcher, presentMdoc })
}

async function failedAttempts(started: Started): Promise<number> {
  const id = /\/s\/([^/]+)\//.exec(started.action)![1]!
  const [row] = await queryRows<{ n: number }>(flow.ctx.deps.db, sql`select failed_attempts as n from verification_sessions where id_hash = ${createHash('sha256').update(id).digest('hex')}`)
  return Number(row!.n)
}

async function revocationChecks(): Promise<Record<string, number>> {
  const { values } = await flow.ctx.deps.metrics.revocationChecks.get()
  return Object.fromEntries(values.map((v) => [`${v.labels.kind}/${v.labels.outcome}`, v.value]))
}

const increase = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).filter(([key, n]) => n !== (before[key] ?? 0)).map(([key, n]) => [key, n - (before[key] ?? 0)]))

describe('an mDL whose MSO names its status list entry', () => {
  test('VALID over direct_post.jwt: approved and redeemed; a second mDL on the same list is answered from the cache', async () => {
    const status = await serveCwtList('/mdl-valid.cwt', VALID)
    const before = await revocationChecks()
    const started = await flow.startRequest()
    const answered = await answerCrossDevice(started, status)
    expect({ status: answered.status, body: answered.body }).toEqual({ status: 200, body: {} })
    const token = await flow.exchange(callback(await started.redeem())!.code)
    expect(decodeJwt(token.access_token)).toMatchObject({ age_verified: true, age_over: 18 })

    const again = await flow.startRequest()
    expect((await answerCrossDevice(again, status)).status).toBe(200)
    expect(lists.hits.get('/mdl-valid.cwt')).toBe(1)
    expect(increase(before, await revocationChecks())).toEqual({ 'status_list/valid': 2 })
  })

  test('INVALID is refused as withdrawn, SUSPENDED as suspended for now; each counts an attempt', async () => {
    for (const [path, entry, words] of [['/mdl-invalid.cwt', INVALID, WITHDRAWN], ['/mdl-suspended.cwt', SUSPENDED, SUSPENDED_WORDS]] as const) {
      const status = await serveCwtList(path, entry)
      const started = await flow.startRequest()
      const answer = await answerCrossDevice(started, status)
      expect(answer.status).toBe(400)
      const refused = await started.redeem()
      expect(callback(refused)).toBeUndefined()
      expect(await refused.text()).toContain(words)
      expect(await failedAttempts(started)).toBe(1)
    }
  })

  test('over Annex C, a list that cannot be reached: try again in a moment, and no attempt is counted', async () => {
    const reference = { idx: 3, uri: `http://127.0.0.1:${await freePort()}/gone.cwt` }
    const { holder, issued } = await mdlWithStatus(reference)
    const before = await revocationChecks()
    const started = await flow.startRequest()
    const data = started.request.dc_api.find((request) => request.protocol === 'org-iso-mdoc')!.data
    const answer = await answerAnnexCRequest(data, new URL(PUBLIC_URL).origin, { holder: ageMdocHolder({ [MDL]: issued }, holder.privateKey) })
    if (!answer.ok) throw new Error(`the wallet refused: ${answer.refusal}`)
    await started.answerInPage({ protocol: 'org-iso-mdoc', data: answer.data })
    const refused = await started.redeem()
    expect(await refused.text()).toContain(TRY_IN_A_MOMENT)
    expect(await failedAttempts(started)).toBe(0)
    expect(increase(before, await revocationChecks())).toEqual({ 'status_list/unreachable': 1 })
  })
})
