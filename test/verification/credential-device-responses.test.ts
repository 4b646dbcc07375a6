import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { DevWallet } from '../../src/credentials/dev/wallet.ts'
import { generateP256KeyPair } from '../credentials/pki.ts'
import { PUBLIC_URL, queryRows } from '../helpers.ts'
import { ageMdocHolder, answerAnnexCRequest, type AnnexCHolder } from '../wallets/annex-c-wallet.ts'
import { answerAvLink } from '../wallets/av-app-wallet.ts'
import { answerWithoutDocuments, issueMdoc, presentMdoc, type MdocRefusal } from '../wallets/mdoc.ts'
import { answerCrossDeviceRequest } from '../wallets/openid4vp-wallet.ts'
import { callback } from './browser.ts'
import { NOW, openCredentialFlow, type CredentialFlow } from './credential-flow.ts'

/**
 * ISO 18013-5 DeviceResponses as wallets send them, through the whole method: a wallet's own error status and
 * DocumentErrors over Annex C and over OpenID4VP `direct_post.jwt`, and a response carrying both age documents.
 * A wallet that returns nothing declined: the visitor is told so and keeps the attempt; no answer is malformed
 * for following the standard.
 */
let flow: CredentialFlow
const origin = new URL(PUBLIC_URL).origin
const AV = 'eu.europa.ec.av.1'
const MDL = 'org.iso.18013.5.1.mDL'

beforeAll(async () => {
  flow = await openCredentialFlow()
})
afterAll(() => flow.ctx.close())

type Started = Awaited<ReturnType<CredentialFlow['startRequest']>>
const annexC = (started: Started) => started.request.dc_api.find((request) => request.protocol === 'org-iso-mdoc')!.data

async function recorded(started: Started) {
  const [row] = await queryRows<{ failure: string | null; outcome: string | null }>(flow.ctx.deps.db, sql`select outcome, failure from credential_requests where id_hash = ${createHash('sha256').update(started.request.request).digest('hex')}`)
  return row
}

async function failedAttempts(started: Started): Promise<number> {
  const id = /\/s\/([^/]+)\//.exec(started.action)![1]!
  const [row] = await queryRows<{ n: number }>(flow.ctx.deps.db, sql`select failed_attempts as n from verification_sessions where id_hash = ${createHash('sha256').update(id).digest('hex')}`)
  return Number(row!.n)
}

/** Issues both age documents, by the flow's trusted issuer, to one device key. */
async function holdBoth() {
  const holder = await generateP256KeyPair()
  const issue = (docType: string, namespace: string) =>
    issueMdoc({
      signerKey: flow.issuer.signerKey,
      signerCertificate: flow.issuer.signerCertificate,
      holderPublicKey: holder.publicKey,
      docType,
      namespace,
      ages: { '18': true, '21': true },
      validFrom: new Date(NOW.getTime() - 86_400_000),
      validUntil: new Date(NOW.getTime() + 90 * 86_400_000),
    })
  return { holder, issued: { [AV]: await issue(AV, AV), [MDL]: await issue(MDL, 'org.iso.18013.5.1') } }
}

/** An Annex C holder that answers every request with a DeviceResponse without documents. */
const refusingHolder = (refusal: MdocRefusal): AnnexCHolder => ({ docTypes: [AV, MDL], present: async () => answerWithoutDocuments(refusal) })

describe('a wallet that returns no document is recorded as declined, and the visitor keeps the attempt', () => {
  for (const [name, refusal] of [
    ['status 10, general error', { status: 10 }],
    ['status 11, CBOR decoding error', { status: 11 }],
    ['status 0 with a DocumentError for the mDL (data not returned)', { status: 0, documentErrors: { [MDL]: 0 } }],
  ] as const) {
    test(`Annex C, ${name}`, async () => {
      const started = await flow.startRequest()
      const answer = await answerAnnexCRequest(annexC(started), origin, { holder: refusingHolder(refusal) })
      if (!answer.ok) throw new Error(`the wallet refused: ${answer.refusal}`)
      await started.answerInPage({ protocol: 'org-iso-mdoc', data: answer.data })
      expect(await recorded(started)).toEqual({ outcome: 'refused', failure: 'declined' })
      expect(await (await started.redeem()).text()).toContain('Nothing was shared')
      expect(await failedAttempts(started)).toBe(0)
    })
  }

  test('OpenID4VP direct_post.jwt: a DeviceResponse of status 10 under the mDL query is answered 200, like an error response', async () => {
    const wallet: DevWallet = await flow.walletWith('mdl', 40)
    const started = await flow.startRequest()
    const answer = await answerCrossDeviceRequest(wallet, started.request.wallet_url, { now: NOW, fetcher: flow.fetcher, presentMdoc: async () => answerWithoutDocuments({ status: 10 }) })
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: {} })
    expect(await recorded(started)).toEqual({ outcome: 'refused', failure: 'declined' })
    expect(await failedAttempts(started)).toBe(0)
  })

  test('the av:// profile, direct_post in the clear: a DeviceResponse with a DocumentError for the attestation is answered 200', async () => {
    const started = await flow.startRequest()
    const avUrl = (started.request as Started['request'] & { av_url: string }).av_url
    const { holder, issued } = await holdBoth()
    const refused = async () => answerWithoutDocuments({ status: 0, documentErrors: { [AV]: 0 } })
    const answer = await answerAvLink(avUrl, { mdoc: issued[AV]!, privateKey: holder.privateKey }, { fetcher: flow.fetcher, present: refused })
    expect(answer.status).toBe(200)
    expect(await recorded(started)).toEqual({ outcome: 'refused', failure: 'declined' })
    expect(await failedAttempts(started)).toBe(0)
  })
})

describe('a wallet that returns more than one document', () => {
  test('Annex C: a DeviceResponse with both age documents is verified by its first, and redeemed', async () => {
    const { holder, issued } = await holdBoth()
    const both = ageMdocHolder(issued, holder.privateKey, (mdoc, presentation) => presentMdoc(mdoc, { ...presentation, extraDocuments: Object.values(issued).filter((other) => other !== mdoc) }))
    const started = await flow.startRequest({ age_required: '21' })
    const answer = await answerAnnexCRequest(annexC(started), origin, { holder: both })
    if (!answer.ok) throw new Error(`the wallet refused: ${answer.refusal}`)
    await started.answerInPage({ protocol: 'org-iso-mdoc', data: answer.data })
    expect(await recorded(started)).toEqual({ outcome: 'approved', failure: null })
    expect(callback(await started.redeem())).toBeDefined()
  })

  test('OpenID4VP: the mDL asked for, behind an age attestation the query did not ask for, is the one verified', async () => {
    const { holder, issued } = await holdBoth()
    const wallet: DevWallet = { holder, credentials: [{ format: 'mso_mdoc', docType: MDL, credential: Buffer.from(issued[MDL]!).toString('base64url') }] }
    const started = await flow.startRequest()
    const answer = await answerCrossDeviceRequest(wallet, started.request.wallet_url, {
      now: NOW,
      fetcher: flow.fetcher,
      presentMdoc: (mdoc, presentation) => presentMdoc(issued[AV]!, { ...presentation, extraDocuments: [mdoc] }),
    })
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: {} })
    expect(await recorded(started)).toEqual({ outcome: 'approved', failure: null })
  })
})
