/**
 * What encryption costs the verifier per answer: the time to verify one wallet answer in the clear
 * (`verifyAgeAnswer` on the `vp_token`, as for `direct_post` and `dc_api`) against the time to decrypt an
 * encrypted one and verify it (`decryptResponse` + `verifyAgeAnswer` with the key's thumbprint, as for
 * `direct_post.jwt` and `dc_api.jwt`), in the same process, interleaved, for each credential format.
 *
 *   bun bench/encrypted-answers.ts              # 200 of each, every format
 *   bun bench/encrypted-answers.ts --n 1000 --format mdl
 *
 * The answers are made once by the test wallet (test/wallets/openid4vp-wallet.ts) for a signed DC API
 * request and a cross-device one; verifying is stateless, so the same answer is verified N times. The
 * first 20 rounds warm up and are not counted. Times are wall clock per answer, in milliseconds.
 */
import { parseArgs } from 'node:util'
import { createDevIssuer, issueDevCredential, type DevCredentialFormat } from '../src/credentials/dev/issuer.ts'
import { createDevWallet } from '../src/credentials/dev/wallet.ts'
import { verifyAgeAnswer, type AnswerBinding } from '../src/credentials/openid4vp/answer.ts'
import { buildClientMetadata } from '../src/credentials/openid4vp/client-metadata.ts'
import { signedDcApiRequest } from '../src/credentials/openid4vp/dc-api.ts'
import { decryptResponse } from '../src/credentials/openid4vp/encrypted-response.ts'
import { signRequest } from '../src/credentials/openid4vp/request-object.ts'
import { generateResponseEncryptionKey } from '../src/credentials/openid4vp/response-encryption-key.ts'
import { ageQuery } from '../src/credentials/queries.ts'
import { createRevocation } from '../src/credentials/status/revocation.ts'
import { parseTrustList } from '../src/credentials/trust/trust-list.ts'
import { createTestVerifierKey } from '../test/credentials/test-verifier.ts'
import { answerSignedDcApiRequest } from '../test/wallets/openid4vp-wallet.ts'

const { values } = parseArgs({ options: { n: { type: 'string', default: '200' }, format: { type: 'string' } } })
const rounds = Number(values.n)
const formats = (values.format ? [values.format] : ['sd-jwt', 'av', 'mdl']) as DevCredentialFormat[]
const WARM_UP = 20
const now = new Date()
const origin = 'https://age.example'
const nonce = 'bench-nonce-0123456789'

const verifier = await createTestVerifierKey(now)
const issuer = await createDevIssuer(now)
const trustList = parseTrustList(issuer.rootCertificate)
// The dev issuer's credentials name no status list and no CRL: nothing is fetched.
const revocation = createRevocation({ trustList: () => trustList, now: () => now, fetch: { allowLoopback: false } })
const check = (binding: AnswerBinding) => ({ trustList, nonce, threshold: 18, now, binding, revocation })

async function walletWith(format: DevCredentialFormat) {
  const wallet = await createDevWallet()
  wallet.credentials.push(await issueDevCredential(issuer, { format, age: 30, holderPublicKey: wallet.holder.publicKey, now }))
  return wallet
}

/** An answer of `format` to a signed DC API request asking for `dc_api.jwt`. */
async function encryptedAnswer(format: DevCredentialFormat) {
  const wallet = await walletWith(format)
  const key = await generateResponseEncryptionKey()
  const request = await signedDcApiRequest(verifier, { nonce, threshold: 18, expectedOrigins: [origin], encryptionKey: key.publicKey, now })
  const encrypted = await answerSignedDcApiRequest(wallet, request, { origin, now })
  if (!('response' in encrypted)) throw new Error('the wallet did not answer')
  return { key, jwe: encrypted.response }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
const ms = (value: number) => value.toFixed(2)

console.log(`${rounds} answers of each, after ${WARM_UP} to warm up; Bun ${Bun.version}`)
console.log('| format | clear: median | clear: p95 | decrypt + verify: median | p95 | decrypt alone: median |')
console.log('| --- | --- | --- | --- | --- | --- |')
for (const format of formats) {
  const { key, jwe } = await encryptedAnswer(format)
  const clearToken = await clearAnswer(format)
  const encryptedBinding: AnswerBinding = { responseMode: 'dc_api.jwt', origin, encryptionKey: key.publicKey }
  const times = { clear: [] as number[], encrypted: [] as number[], decrypt: [] as number[] }
  for (let round = 0; round < rounds + WARM_UP; round++) {
    let start = performance.now()
    const clear = await verifyAgeAnswer(clearToken, check({ responseMode: 'dc_api', origin }))
    const clearTime = performance.now() - start
    start = performance.now()
    const decrypted = await decryptResponse(jwe, key.privateKey)
    const decryptTime = performance.now() - start
    const verified = decrypted.ok ? await verifyAgeAnswer(decrypted.response.vp_token, check(encryptedBinding)) : decrypted
    const encryptedTime = performance.now() - start
    if (!clear.valid || !('valid' in verified) || !verified.valid) throw new Error(`${format}: an answer was refused`)
    if (round < WARM_UP) continue
    times.clear.push(clearTime)
    times.encrypted.push(encryptedTime)
    times.decrypt.push(decryptTime)
  }
  const [clear, encrypted, decrypt] = [times.clear, times.encrypted, times.decrypt].map((list) => list.sort((a, b) => a - b))
  console.log(`| ${format} | ${ms(percentile(clear!, 50))} | ${ms(percentile(clear!, 95))} | ${ms(percentile(encrypted!, 50))} | ${ms(percentile(encrypted!, 95))} | ${ms(percentile(decrypt!, 50))} |`)
}

/** A `dc_api` answer (no encryption, no thumbprint in the transcript) from a wallet of `format`. */
async function clearAnswer(format: DevCredentialFormat): Promise<unknown> {
  const wallet = await walletWith(format)
  const claims = { client_id: verifier.clientId, expected_origins: [origin], response_type: 'vp_token', response_mode: 'dc_api', nonce, dcql_query: ageQuery(18), client_metadata: buildClientMetadata() }
  const request = { protocol: 'openid4vp-v1-signed', data: { request: await signRequest(verifier, claims, now) } }
  const answer = await answerSignedDcApiRequest(wallet, request, { origin, now })
  if (!('vp_token' in answer)) throw new Error('the wallet did not answer in the clear')
  return answer.vp_token
}
