/**
 * Verification time per cross-device profile (issue 31): one answer to the HAIP request (`openid4vp://`,
 * signed request, `direct_post.jwt`) against one to the EU age verification app's request (`av://`, Annex A
 * §A.5: by value, `direct_post` in the clear), both carrying the same kind of credential, the age
 * verification attestation (mdoc `eu.europa.ec.av.1`), alternating in one run.
 *
 *   bun bench/av-profile.ts                 # 200 answers of each, in process, on an embedded database
 *   bun bench/av-profile.ts --n 500
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/av-profile.ts   # a fresh database there
 *
 * Two figures per profile. "verify": the verifier's work on one answer, stateless (decryptResponse then
 * verifyAgeAnswer for HAIP, verifyAgeAnswer for the app), the same answer N times. "answer POST": the
 * response endpoint through the app's handler, what the wallet waits for: find the request, claim it,
 * verify, record the outcome; one fresh request per answer, made and answered by the test wallets
 * (test/wallets/), only the POST timed. The first 20 of each are warm-up and not counted. Milliseconds.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createDevIssuer } from '../src/credentials/dev/issuer.ts'
import type { DevWallet } from '../src/credentials/dev/wallet.ts'
import { verifyAgeAnswer } from '../src/credentials/openid4vp/answer.ts'
import { decryptResponse } from '../src/credentials/openid4vp/encrypted-response.ts'
import { generateResponseEncryptionKey } from '../src/credentials/openid4vp/response-encryption-key.ts'
import { AV_APP_QUERY_IDS } from '../src/credentials/queries.ts'
import { createRevocation } from '../src/credentials/status/revocation.ts'
import { parseTrustList } from '../src/credentials/trust/trust-list.ts'
import { MAX_REQUESTS_PER_SESSION } from '../src/verification/credential-requests.ts'
import { generateP256KeyPair } from '../test/credentials/pki.ts'
import { createTestContext } from '../test/helpers.ts'
import { testBrowser } from '../test/verification/browser.ts'
import { buildAvAnswer, readAvLink, type AvAppHolder } from '../test/wallets/av-app-wallet.ts'
import { encryptResponse, thumbprint } from '../test/wallets/jwe-encrypt.ts'
import { issueMdoc, presentMdoc } from '../test/wallets/mdoc.ts'
import { walletSessionTranscript } from '../test/wallets/openid4vp-handover.ts'
import { answerCrossDeviceRequest } from '../test/wallets/openid4vp-wallet.ts'

const { values } = parseArgs({ options: { n: { type: 'string', default: '200' } } })
const rounds = Number(values.n)
const WARM_UP = 20
const NOW = new Date('2026-11-22T12:00:00.000Z')

const issuer = await createDevIssuer(NOW)
const dir = mkdtempSync(join(tmpdir(), 'ofage-av-bench-'))
writeFileSync(join(dir, 'trust-list.pem'), issuer.rootCertificate)
const ctx = await createTestContext({ env: { CREDENTIAL_TRUST_LIST: join(dir, 'trust-list.pem') } })
const shop = await ctx.createClient({ name: 'Bench shop' })
const fetcher = ((input: string | URL | Request, init?: RequestInit) => ctx.handle(new Request(input, init))) as typeof fetch

// One holder of the age verification attestation answers both profiles (test/wallets/mdoc.ts, not the verifier's code).
const device = await generateP256KeyPair()
const holder: AvAppHolder = {
  privateKey: device.privateKey,
  mdoc: await issueMdoc({
    signerKey: issuer.signerKey,
    signerCertificate: issuer.signerCertificate,
    holderPublicKey: device.publicKey,
    docType: 'eu.europa.ec.av.1',
    namespace: 'eu.europa.ec.av.1',
    ages: { '18': true },
    validFrom: new Date(NOW.getTime() - 86_400_000),
    validUntil: new Date(NOW.getTime() + 90 * 86_400_000),
  }),
}
// The HAIP test wallet presents the same mdoc, under the HAIP query's id.
const haipWallet: DevWallet = { holder: device, credentials: [{ format: 'mso_mdoc', docType: 'eu.europa.ec.av.1', credential: Buffer.from(holder.mdoc).toString('base64url') }] }

/**
 * A wallet request, as the page's script opens it: a session takes 20 (MAX_REQUESTS_PER_SESSION), and new
 * sessions are limited per address, so a page serves requests until it has opened its share.
 */
let page: { open: () => Promise<Response>; left: number } | undefined
async function startRequest(): Promise<{ wallet_url: string; av_url: string }> {
  if (!page || page.left === 0) {
    const browser = testBrowser(ctx)
    const opened = (await browser.open({ client_id: shop.id, state: 'st' })).page
    const base = opened.action('/methods/credential').split('?')[0]
    page = { open: () => browser.post(`${base}/start`, { csrf: opened.csrf! }), left: MAX_REQUESTS_PER_SESSION }
  }
  page.left--
  const started = await page.open()
  if (started.status !== 200) throw new Error(`start answered ${started.status}`)
  return (await started.json()) as { wallet_url: string; av_url: string }
}

/** Times the POST the wallet makes; every other request of the wallet passes untimed. */
function timedFetcher(times: number[]): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init)
    if (request.method !== 'POST') return ctx.handle(request)
    const start = performance.now()
    const response = await ctx.handle(request)
    times.push(performance.now() - start)
    return response
  }) as typeof fetch
}

const posts = { haip: [] as number[], av: [] as number[] }
for (let round = 0; round < rounds + WARM_UP; round++) {
  const haip: number[] = []
  const first = await startRequest()
  const answered = await answerCrossDeviceRequest(haipWallet, first.wallet_url, { now: NOW, fetcher: timedFetcher(haip), presentMdoc })
  const second = await startRequest()
  const read = readAvLink(second.av_url)
  if (!read.ok) throw new Error(read.refusal)
  const body = await buildAvAnswer(read.request, holder)
  const start = performance.now()
  const av = await fetcher(read.request.responseUri, { method: 'POST', body })
  const avTime = performance.now() - start
  if (answered.status !== 200 || av.status !== 200) throw new Error(`an answer was refused: HAIP ${answered.status}, av ${av.status} ${await av.text()}`)
  if (round < WARM_UP) continue
  posts.haip.push(haip[0]!)
  posts.av.push(avTime)
}

// Stateless verification of one answer per profile, the same answer N times.
const trustList = parseTrustList(issuer.rootCertificate)
const revocation = createRevocation({ trustList: () => trustList, now: () => NOW, fetch: { allowLoopback: false } })
const verifyTimes = { haip: [] as number[], av: [] as number[] }
{
  const nonce = 'bench-nonce-0123456789abcdefghij'
  const haipBinding = { clientId: 'x509_hash:bench', responseUri: 'https://age.example/api/oid4vp/responses' }
  const key = await generateResponseEncryptionKey()
  const haipTranscript = await walletSessionTranscript({ ...haipBinding, jwkThumbprint: await thumbprint(key.publicKey) }, nonce)
  const haipToken = { age_verification_mdoc: [Buffer.from(await presentMdoc(holder.mdoc, { holderPrivateKey: holder.privateKey, sessionTranscript: haipTranscript, threshold: 18 })).toString('base64url')] }
  const jwe = await encryptResponse({ vp_token: haipToken, state: 's' }, key.publicKey, { enc: 'A256GCM' })
  const avUri = 'https://age.example/api/oid4vp/av/0123456789abcdefghijklmnopqrstuv'
  const avBinding = { clientId: `redirect_uri:${avUri}`, responseUri: avUri }
  const avTranscript = await walletSessionTranscript({ ...avBinding, jwkThumbprint: null }, nonce)
  const avToken = { proof_of_age: [Buffer.from(await presentMdoc(holder.mdoc, { holderPrivateKey: holder.privateKey, sessionTranscript: avTranscript, threshold: 18 })).toString('base64url')] }
  const check = { trustList, nonce, threshold: 18, now: NOW, revocation }
  for (let round = 0; round < rounds + WARM_UP; round++) {
    let start = performance.now()
    const opened = await decryptResponse(jwe, key.privateKey)
    const haip = opened.ok ? await verifyAgeAnswer(opened.response.vp_token, { ...check, binding: { responseMode: 'direct_post.jwt', ...haipBinding, encryptionKey: key.publicKey } }) : opened
    const haipTime = performance.now() - start
    start = performance.now()
    const av = await verifyAgeAnswer(avToken, { ...check, binding: { responseMode: 'direct_post', ...avBinding }, queries: AV_APP_QUERY_IDS })
    const avTime = performance.now() - start
    if (!('valid' in haip) || !haip.valid || !av.valid) throw new Error('a verification failed')
    if (round < WARM_UP) continue
    verifyTimes.haip.push(haipTime)
    verifyTimes.av.push(avTime)
  }
}
await ctx.close()

const percentile = (list: number[], p: number) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor((p / 100) * list.length))]!
const ms = (value: number) => value.toFixed(2)
console.log(`${rounds} answers of each profile after ${WARM_UP} to warm up; ${process.env.DATABASE_URL ? 'Postgres' : 'embedded database'}; Bun ${Bun.version}`)
console.log('| profile | verify: median | verify: p95 | answer POST: median | answer POST: p95 |')
console.log('| --- | --- | --- | --- | --- |')
for (const [name, label] of [['haip', 'HAIP `openid4vp://`, `direct_post.jwt` (decrypt + verify)'], ['av', 'EU app `av://`, `direct_post` (verify)']] as const) {
  console.log(`| ${label} | ${ms(percentile(verifyTimes[name], 50))} | ${ms(percentile(verifyTimes[name], 95))} | ${ms(percentile(posts[name], 50))} | ${ms(percentile(posts[name], 95))} |`)
}
