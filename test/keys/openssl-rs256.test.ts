import { describe, expect, test } from 'bun:test'
import { createPrivateKey, generateKeyPairSync, sign as nodeSign, verify } from 'node:crypto'
import { existsSync } from 'node:fs'
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { LIBCRYPTO, OPENSSL_NAMES, openSslRs256 } from '../../src/keys/openssl-rs256.ts'
import { signingKeyFromPem, webCryptoRs256 } from '../../src/keys/signing-key.ts'
import { createTestContext, ISSUER } from '../helpers.ts'

/**
 * Issue 34: RS256 by the system's OpenSSL through bun:ffi (2–2.5× Bun's BoringSSL on CPUs with AVX-512),
 * WebCrypto where it is not there. RSASSA-PKCS1-v1_5 is deterministic: both must give node:crypto's very bytes.
 */
const hasLibcrypto = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib'].some((dir) => existsSync(`${dir}/${LIBCRYPTO}`))
const pem = (bits: number) => generateKeyPairSync('rsa', { modulusLength: bits }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
const input = new TextEncoder().encode('eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJhZ2VfdmVyaWZpZWQiOnRydWV9')

describe.skipIf(!hasLibcrypto)('OpenSSL signs RS256', () => {
  test('the same bytes as node:crypto, for a 2048-bit and a 4096-bit key', () => {
    for (const bits of [2048, 4096]) {
      const key = createPrivateKey(pem(bits))
      const signer = openSslRs256(key)!
      expect(signer.version).toStartWith('OpenSSL 3.')
      const signature = signer.sign(input)
      expect(signature.length).toBe(bits / 8)
      expect(Buffer.from(signature).equals(nodeSign('sha256', input, key))).toBe(true)
    }
  })

  test('OpenSSL keeps its copy of the key while the signing function is held, through full collections and other keys freed', async () => {
    // The key was once tied to an object callers dropped: a collection freed it under a function still in use.
    const key = await signingKeyFromPem(pem(2048), 'a test key')
    expect(key.signsWith).toStartWith('OpenSSL 3.')
    const sign = key.sign
    const expected = await sign(input)
    expect(verify('sha256', input, key.publicPem, expected)).toBe(true)
    for (let round = 0; round < 10; round++) {
      await signingKeyFromPem(pem(2048), 'a key dropped at once')
      Bun.gc(true)
      await Bun.sleep(1)
      expect(Buffer.from(await sign(input)).equals(expected)).toBe(true)
    }
  })
})

describe.skipIf(!hasLibcrypto)('OpenSSL is not used where its names are taken', () => {
  test('this Bun defines none of the names OpenSSL calls its own functions by (else the test above would sign with WebCrypto)', () => {
    expect(openSslRs256(createPrivateKey(pem(2048)))?.version).toStartWith('OpenSSL 3.')
  })

  test('a name already defined in the process (as if the runtime exported its BoringSSL): not loaded, nothing returned', () => {
    // getpid is libc's: defined in every process, as an exported EVP_sha256 would be.
    const path = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib'].map((dir) => `${dir}/${LIBCRYPTO}`).find((file) => existsSync(file))!
    expect(openSslRs256(createPrivateKey(pem(2048)), path, ['getpid'])).toBeUndefined()
    expect(OPENSSL_NAMES).toContain('EVP_sha256')
  })
})

test('without the library, nothing: the caller signs with WebCrypto, to the same bytes', async () => {
  const key = createPrivateKey(pem(2048))
  expect(openSslRs256(key, 'libcrypto-that-is-not-here.so.3')).toBeUndefined()
  const privateKey = await crypto.subtle.importKey('pkcs8', key.export({ type: 'pkcs8', format: 'der' }), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign'])
  expect(Buffer.from(await webCryptoRs256(privateKey)(input)).equals(nodeSign('sha256', input, key))).toBe(true)
})

test('a token is the compact JWS jose would write: header {"alg":"RS256","typ":"JWT"}, verified by the published key', async () => {
  const ctx = await createTestContext()
  try {
    const client = await ctx.createClient()
    const { access_token } = await ctx.tokenFor(client)
    expect(access_token.split('.')[0]).toBe(Buffer.from('{"alg":"RS256","typ":"JWT"}').toString('base64url'))
    expect(decodeProtectedHeader(access_token)).toEqual({ alg: 'RS256', typ: 'JWT' })
    const published = createLocalJWKSet(await (await ctx.request('/api/.well-known/jwks.json')).json())
    const { payload } = await jwtVerify(access_token, published, { issuer: ISSUER, audience: client.id, currentDate: ctx.clock.now() })
    expect(payload.age_verified).toBe(true)
  } finally {
    await ctx.close()
  }
})
