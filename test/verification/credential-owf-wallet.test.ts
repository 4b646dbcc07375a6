import { afterAll, beforeAll, describe, expect, setSystemTime, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { decode } from 'cbor2'
import { sql } from 'drizzle-orm'
import { decodeJwt } from 'jose'
import { issueDevCredential, type DevStatusReference } from '../../src/credentials/dev/issuer.ts'
import { mdl } from '../../src/credentials/iso-mdoc/cbor-env.ts'
import { generateP256KeyPair } from '../credentials/pki.ts'
import { signDevStatusList, startStatusServer, type StatusServer } from '../credentials/status-fixtures.ts'
import { queryRows } from '../helpers.ts'
import { answerDcApiWithOwfWallet, answerWithOwfWallet, issueOwfMdoc, presentOwfMdoc, type OwfWallet } from '../wallets/owf-wallet.ts'
import { callback } from './browser.ts'
import { NOW, openCredentialFlow, type CredentialFlow } from './credential-flow.ts'

/**
 * Our verifier against a wallet built from the Open Wallet Foundation libraries Credo is built on
 * (test/wallets/owf-wallet.ts: @openid4vc/openid4vp, dcql, @owf/mdoc, @sd-jwt/core): the profiles they complete,
 * the status list states, and what they get wrong. The libraries check the request against their own clock, so
 * the process's clock is the app's frozen one; they accept only https addresses, so the app is told it lives at
 * one (the wallet's fetch reaches it in-process). The PID comes from the project's dev issuer, the mdocs from
 * @owf/mdoc's Issuer, both signed by the flow's trusted document signer.
 */
const PUBLIC_URL = 'https://api.ofage.test'
const ORIGIN = new URL(PUBLIC_URL).origin
const IAT = Math.floor(NOW.getTime() / 1000)
let flow: CredentialFlow
let lists: StatusServer

beforeAll(async () => {
  setSystemTime(NOW)
  flow = await openCredentialFlow({ PUBLIC_URL })
  lists = startStatusServer()
})
afterAll(async () => {
  setSystemTime()
  lists.stop()
  await flow.ctx.close()
})

type Holding = 'sd-jwt' | 'eu.europa.ec.av.1' | 'org.iso.18013.5.1.mDL'
type Started = Awaited<ReturnType<CredentialFlow['startRequest']>>
const NAMESPACES = { 'eu.europa.ec.av.1': 'eu.europa.ec.av.1', 'org.iso.18013.5.1.mDL': 'org.iso.18013.5.1' } as const

/** A wallet holding one credential of the flow's issuer for a holder of 40. */
async function owfWallet(holding: Holding, status?: DevStatusReference): Promise<OwfWallet> {
  const holder = await generateP256KeyPair()
  if (holding === 'sd-jwt') {
    const issued = await issueDevCredential(flow.issuer, { format: 'sd-jwt', age: 40, holderPublicKey: holder.publicKey, now: NOW, status })
    return { holder, credentials: [{ format: 'dc+sd-jwt', credential: issued.credential }] }
  }
  const validity = { validFrom: NOW, validUntil: new Date(NOW.getTime() + 90 * 86_400_000) }
  const ages = { '16': true, '18': true, '21': true, '65': false }
  return { holder, credentials: [await issueOwfMdoc(flow.issuer, { docType: holding, namespace: NAMESPACES[holding], ages, holderPublicKey: holder.publicKey, ...validity })] }
}

const options = () => ({ fetcher: flow.fetcher, now: NOW })
const protocolOf = (started: Started, protocol: string) => started.request.dc_api.find((request) => request.protocol === protocol)!

async function recorded(started: Started) {
  const [row] = await queryRows<{ failure: string | null; outcome: string | null }>(flow.ctx.deps.db, sql`select outcome, failure from credential_requests where id_hash = ${createHash('sha256').update(started.request.request).digest('hex')}`)
  return row
}

async function expectApproved(started: Started, age: number) {
  const back = callback(await started.redeem())
  expect(back).toBeDefined()
  expect(decodeJwt((await flow.exchange(back!.code)).access_token)).toMatchObject({ age_verified: true, age_over: age })
}

describe('cross-device, direct_post.jwt: the library fetches the signed request by reference and posts the JWE', () => {
  for (const holding of ['sd-jwt', 'eu.europa.ec.av.1', 'org.iso.18013.5.1.mDL'] as const) {
    test(`${holding}: completes, and the page redeems it for a token`, async () => {
      const started = await flow.startRequest({ age_required: '21' })
      expect(await answerWithOwfWallet(await owfWallet(holding), started.request.wallet_url, options())).toEqual({ status: 200, body: {} })
      await expectApproved(started, 21)
    })
  }
})

describe('Digital Credentials API, dc_api.jwt: the library checks expected_origins and encrypts to the request key', () => {
  for (const protocol of ['openid4vp-v1-signed', 'openid4vp-v1-unsigned'] as const) {
    for (const holding of ['sd-jwt', 'org.iso.18013.5.1.mDL'] as const) {
      test(`${protocol}, ${holding}: completes in the page`, async () => {
        const started = await flow.startRequest()
        const data = await answerDcApiWithOwfWallet(await owfWallet(holding), protocolOf(started, protocol), { ...options(), origin: ORIGIN })
        expect(Object.keys(data)).toEqual(['response'])
        await started.answerInPage({ protocol, data })
        await expectApproved(started, 18)
      })
    }
  }
})

describe('the EU age verification app profile (av://): the library reads the request by value under its redirect_uri client id', () => {
  test('eu.europa.ec.av.1 over direct_post completes', async () => {
    const started = await flow.startRequest()
    const avUrl = (started.request as Started['request'] & { av_url: string }).av_url
    expect(await answerWithOwfWallet(await owfWallet('eu.europa.ec.av.1'), avUrl, options())).toEqual({ status: 200, body: {} })
    await expectApproved(started, 18)
  })
})

describe("the PID's status list entry, presented by the library", () => {
  for (const [name, entry, outcome] of [
    ['VALID', 0, { outcome: 'approved', failure: null }],
    ['INVALID', 1, { outcome: 'refused', failure: 'revoked' }],
    ['SUSPENDED', 2, { outcome: 'refused', failure: 'suspended' }],
  ] as const) {
    test(`${name} is ${outcome.failure ?? 'approved'}`, async () => {
      const uri = lists.url(`/owf-${name}.jwt`)
      lists.route(`/owf-${name}.jwt`, await signDevStatusList(flow.issuer, { statuses: [0, 0, 0, entry], sub: uri, iat: IAT, ttl: 300 }))
      const started = await flow.startRequest()
      const answer = await answerWithOwfWallet(await owfWallet('sd-jwt', { idx: 3, uri }), started.request.wallet_url, options())
      expect(answer.status).toBe(entry === 0 ? 200 : 400)
      expect(await recorded(started)).toEqual(outcome)
    })
  }
})

describe('what @owf/mdoc 0.6 writes when the device key names no alg', () => {
  test('it still writes {1: undefined} as the DeviceSignature protected header, unless the key names its alg', async () => {
    const [mdoc] = (await owfWallet('org.iso.18013.5.1.mDL')).credentials
    if (mdoc?.format !== 'mso_mdoc') throw new Error('expected an mdoc')
    const holder = await generateP256KeyPair()
    const binding = { clientId: 'x509_hash:abc', responseUri: `${PUBLIC_URL}/r` }
    const protectedHeaderOf = async (deviceKeyAlg: boolean) => {
      const presented = await presentOwfMdoc(mdoc, holder.privateKey, { 'org.iso.18013.5.1': { age_over_18: true } }, { binding, nonce: 'n', jwkThumbprint: undefined, deviceKeyAlg })
      const response = decode(Buffer.from(presented, 'base64url')) as { documents: { deviceSigned: { deviceAuth: { deviceSignature: [Uint8Array] } } }[] }
      return Buffer.from(response.documents[0]!.deviceSigned.deviceAuth.deviceSignature[0]).toString('hex')
    }
    // RFC 9052 §3.1: alg (label 1) is an int or a text string; 0xf7 is CBOR's undefined.
    expect(await protectedHeaderOf(false)).toBe('a101f7')
    expect(await protectedHeaderOf(true)).toBe('a10126')
  })

  test('we refuse such an answer as malformed: its COSE header is not one (RFC 9052 §3.1)', async () => {
    const started = await flow.startRequest()
    const answer = await answerWithOwfWallet(await owfWallet('org.iso.18013.5.1.mDL'), started.request.wallet_url, { ...options(), deviceKeyAlg: false })
    expect(answer.status).toBe(400)
    expect(await recorded(started)).toEqual({ outcome: 'refused', failure: 'malformed' })
  })
})

test("loading @owf/mdoc beside the verifier leaves the verifier's CBOR decoder as it was (cbor-x, required, is its own instance)", () => {
  // @owf/mdoc registers its own tags 18 and 24 with the cbor-x it imports; @auth0/mdl's must still decode ours.
  expect(new (mdl().DataItem)({ buffer: new Uint8Array([0xd8, 0x18, 0x41, 0x01]) }).data).toBeInstanceOf(mdl().DataItem)
  expect(new (mdl().DataItem)({ buffer: new Uint8Array([0xd2, 0x80]) }).data).toMatchObject({ tag: 18, value: [] })
})
