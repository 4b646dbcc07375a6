import { expect, test } from 'bun:test'
import { createHmac, generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { importPKCS8, jwtVerify, SignJWT } from 'jose'
import { compactJwt } from '../../src/lib/compact-jwt.ts'

/**
 * The age pass cookie (HS256 by node:crypto) and the access token (RS256 by OpenSSL or WebCrypto) are written
 * by compactJwt instead of jose's SignJWT: both signatures are deterministic, so each must be jose's very token.
 */
test("HS256: jose's token, byte for byte, and jose reads it back", async () => {
  const key = new Uint8Array(randomBytes(32))
  const claims = { pk: 'person-key', iss: 'https://ofage.example/age-pass', jti: crypto.randomUUID(), iat: 1_795_000_000, exp: 1_795_086_400 }
  const ours = await compactJwt({ alg: 'HS256' }, claims, (input) => createHmac('sha256', key).update(input).digest())
  const jose = await new SignJWT({ pk: claims.pk }).setProtectedHeader({ alg: 'HS256' }).setIssuer(claims.iss).setJti(claims.jti).setIssuedAt(claims.iat).setExpirationTime(claims.exp).sign(key)
  expect(ours).toBe(jose)
  expect((await jwtVerify(ours, key, { algorithms: ['HS256'], currentDate: new Date(1_795_000_100_000) })).payload).toEqual(claims)
})

test("RS256: jose's token, byte for byte, from a signer that answers at once or later", async () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const claims = { iss: 'https://issuer.example', aud: 'cl_shop', age_verified: true, age_over: 18, iat: 1_795_000_000, exp: 1_795_000_600 }
  const jose = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).sign(await importPKCS8(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256'))
  expect(await compactJwt({ alg: 'RS256', typ: 'JWT' }, claims, (input) => sign('sha256', input, privateKey))).toBe(jose)
  expect(await compactJwt({ alg: 'RS256', typ: 'JWT' }, claims, async (input) => new Uint8Array(sign('sha256', input, privateKey)))).toBe(jose)
})
