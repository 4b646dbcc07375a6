/**
 * A ceiling of `bun run bench`: RS256 signatures per second as the server makes them (src/keys/signing-key.ts:
 * the system's OpenSSL through bun:ffi where it loads, else this Bun's WebCrypto), one process per core as
 * the server runs (`WORKERS`), for `--seconds` (default 3). Prints one number: the sum.
 */
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { generatePkcs8Pem, signingKeyFromPem } from '../src/keys/signing-key.ts'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, one: { type: 'boolean', default: false } } })
const seconds = Number(values.seconds)

if (values.one) {
  const key = await signingKeyFromPem(generatePkcs8Pem(), 'the bench key')
  const input = new TextEncoder().encode(`eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.${Buffer.from(JSON.stringify({ iss: 'https://ofage.example', sub: crypto.randomUUID(), age_over: 18, iat: 0, exp: 3600 })).toString('base64url')}`)
  const rate = async (during: number) => {
    const until = performance.now() + during * 1000
    let signed = 0
    // Two in flight: WebCrypto signs on Bun's threads; OpenSSL's call returns the signature before the next starts.
    await Promise.all([0, 1].map(async () => {
      while (performance.now() < until) (await key.sign(input), signed++)
    }))
    return signed / during
  }
  await rate(0.5)
  console.log((await rate(seconds)).toFixed(0))
} else {
  const children = cpus().map(() => Bun.spawn([process.execPath, import.meta.path, '--one', '--seconds', String(seconds)], { stdout: 'pipe', stderr: 'inherit' }))
  const rates = await Promise.all(children.map(async (child) => Number((await new Response(child.stdout).text()).trim())))
  if (rates.some((rate) => !Number.isFinite(rate))) throw new Error(`a signing process failed: ${rates.join(', ')}`)
  console.log(rates.reduce((sum, rate) => sum + rate, 0).toFixed(0))
}
