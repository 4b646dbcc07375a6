/**
 * A ceiling of `bun run bench`: RS256 signatures per second as the server makes them (jose over this Bun's
 * WebCrypto, an RSA-2048 key imported from PKCS#8 as src/keys/signing-key.ts does), with enough in flight to
 * use every core, for `--seconds` (default 3). `openssl speed` measures the system's OpenSSL, which is not
 * what signs our tokens: Bun signs with its own BoringSSL, at about half OpenSSL's rate on the bench machine.
 * Prints one number.
 */
import { cpus } from 'node:os'
import { generateKeyPairSync } from 'node:crypto'
import { parseArgs } from 'node:util'
import { CompactSign, importPKCS8 } from 'jose'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' } } })
const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
const key = await importPKCS8(pem, 'RS256')
const payload = new TextEncoder().encode(JSON.stringify({ iss: 'https://ofage.example', sub: crypto.randomUUID(), age_over: 18, iat: 0, exp: 3600 }))
const sign = () => new CompactSign(payload).setProtectedHeader({ alg: 'RS256', kid: 'bench' }).sign(key)

async function rate(seconds: number): Promise<number> {
  const until = performance.now() + seconds * 1000
  let signed = 0
  await Promise.all(
    Array.from({ length: 2 * cpus().length }, async () => {
      while (performance.now() < until) (await sign(), signed++)
    }),
  )
  return signed / seconds
}

await rate(0.5)
console.log((await rate(Number(values.seconds))).toFixed(0))
