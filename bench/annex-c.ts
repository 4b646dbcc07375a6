/**
 * Verification time of one mdoc age answer, in process: ISO/IEC 18013-7 Annex C (`org-iso-mdoc`: transcript,
 * HPKE open, DeviceResponse verification) against the OpenID4VP DC API mdoc path (`verifyAgeAnswer` with an
 * `mdl` vp_token) as the baseline, in the same run, alternating so both see the same machine state.
 *
 *   bun bench/annex-c.ts               # 500 runs of each, after 50 of warm-up
 *   bun bench/annex-c.ts --runs 2000
 *
 * Both answers carry the same document (an mDL disclosing age_over_18, device-signed), made once by the test
 * wallets (test/wallets/mdoc.ts, annex-c-wallet.ts); only the verifier's work is timed. Prints median, p95 and mean in milliseconds.
 */
import { annexCRequest } from '../src/credentials/iso-mdoc/annex-c-request.ts'
import { openAnnexCResponse } from '../src/credentials/iso-mdoc/annex-c-response.ts'
import { annexCSessionTranscript } from '../src/credentials/iso-mdoc/session-transcript.ts'
import { verifyMdocAgePresentation } from '../src/credentials/iso-mdoc/verify.ts'
import { verifyAgeAnswer } from '../src/credentials/openid4vp/answer.ts'
import { AGE_DOC_TYPES, type AgeDocType } from '../src/credentials/queries.ts'
import { createRevocation } from '../src/credentials/status/revocation.ts'
import { parseTrustList } from '../src/credentials/trust/trust-list.ts'
import { createMdocPki, generateP256KeyPair } from '../test/credentials/pki.ts'
import { ageMdocHolder, answerAnnexCRequest } from '../test/wallets/annex-c-wallet.ts'
import { issueMdoc, presentMdoc } from '../test/wallets/mdoc.ts'
import { dcApiTranscript } from '../test/wallets/transcripts.ts'

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 500
const WARM_UP = 50
const ORIGIN = 'https://age.example'
const NONCE = 'bench-nonce-0123456789abcdef'
const now = new Date()
const seconds = Math.floor(now.getTime() / 1000)

const pki = await createMdocPki({ from: new Date(now.getTime() - 86_400_000), signerUntil: new Date(now.getTime() + 365 * 86_400_000) })
const trustList = parseTrustList(pki.rootPem)
// The test mdoc names no status list and its signer no CRL: nothing is fetched, as for such an mdoc in service.
const revocation = createRevocation({ trustList: () => trustList, now: () => now, fetch: { allowLoopback: false } })
const holder = await generateP256KeyPair()
const recipient = await generateP256KeyPair()
const mdoc = await issueMdoc({
  signerKey: pki.signer.privateKey,
  signerCertificate: pki.signerPem,
  holderPublicKey: holder.publicKey,
  docType: 'org.iso.18013.5.1.mDL',
  namespace: 'org.iso.18013.5.1',
  ages: { '18': true, '21': false },
  validFrom: new Date(now.getTime() - 3_600_000),
  validUntil: new Date(now.getTime() + 86_400_000),
})

const { data: request } = await annexCRequest({ threshold: 18, nonce: NONCE, recipientPublicKey: recipient.publicKey, origin: ORIGIN })
const answered = await answerAnnexCRequest(request, ORIGIN, { holder: ageMdocHolder({ 'org.iso.18013.5.1.mDL': mdoc }, holder.privateKey) })
if (!answered.ok) throw new Error(`the wallet refused: ${answered.refusal}`)
const annexCAnswer = answered.data
const docTypes = Object.keys(AGE_DOC_TYPES) as AgeDocType[]

const openId4VpResponse = await presentMdoc(mdoc, { holderPrivateKey: holder.privateKey, sessionTranscript: dcApiTranscript({ origin: ORIGIN, nonce: NONCE }), threshold: 18 })
const vpToken = { mdl: [Buffer.from(openId4VpResponse).toString('base64url')] }

/** What an Annex C route does with an answer: its transcript, HPKE open, then the DeviceResponse. */
async function verifyAnnexC(): Promise<boolean> {
  const sessionTranscript = annexCSessionTranscript({ encryptionInfo: request.encryptionInfo, origin: ORIGIN })
  const opened = await openAnnexCResponse(annexCAnswer, { recipientPrivateKey: recipient.privateKey, sessionTranscript })
  if (!opened.ok) return false
  const result = await verifyMdocAgePresentation(opened.deviceResponse, { trustList, sessionTranscript, docType: docTypes, threshold: 18, now: seconds, revocation })
  return result.valid
}

/** HPKE open alone (transcript included), to see its share. */
async function openOnly(): Promise<boolean> {
  const sessionTranscript = annexCSessionTranscript({ encryptionInfo: request.encryptionInfo, origin: ORIGIN })
  return (await openAnnexCResponse(annexCAnswer, { recipientPrivateKey: recipient.privateKey, sessionTranscript })).ok
}

async function verifyOpenId4Vp(): Promise<boolean> {
  const result = await verifyAgeAnswer(vpToken, { trustList, nonce: NONCE, threshold: 18, now, binding: { origin: ORIGIN }, revocation })
  return result.valid
}

const cases = { 'openid4vp dc_api mdoc (baseline)': verifyOpenId4Vp, 'annex-c open + verify': verifyAnnexC, 'annex-c open only': openOnly }
const timings = new Map<string, number[]>(Object.keys(cases).map((name) => [name, []]))

for (let run = 0; run < WARM_UP + runs; run++) {
  for (const [name, verify] of Object.entries(cases)) {
    const started = performance.now()
    const valid = await verify()
    const elapsed = performance.now() - started
    if (!valid) throw new Error(`${name}: the answer did not verify`)
    if (run >= WARM_UP) timings.get(name)!.push(elapsed)
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
console.log(`${runs} runs each after ${WARM_UP} of warm-up, Bun ${Bun.version}, ${navigator.hardwareConcurrency} CPUs`)
for (const [name, values] of timings) {
  const sorted = values.toSorted((a, b) => a - b)
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length
  console.log(`${name.padEnd(34)} median ${quantile(sorted, 0.5).toFixed(2)} ms  p95 ${quantile(sorted, 0.95).toFixed(2)} ms  mean ${mean.toFixed(2)} ms`)
}
