import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { calculateJwkThumbprint, importPKCS8, importSPKI } from 'jose'
import { ConfigError } from '../errors.ts'
import { openSslRs256 } from './openssl-rs256.ts'

/** The key id the spec publishes (SPEC.md §2.4). Tokens never carry it: verifiers use the single key. */
export const KEY_ID = 'key_2025_01'
export const ALGORITHM = 'RS256'
/** SPEC.md §2.2: `exp = iat + 600`. Kept here because it bounds how long a replaced key still signs valid tokens. */
export const TOKEN_LIFETIME_SECONDS = 600

export type PublicJwk = { kty: 'RSA'; kid: string; use: 'sig'; alg: 'RS256'; n: string; e: string }

/** The public half of a key, in every form we publish or verify with. */
export type PublicKeyForms = {
  publicKey: CryptoKey
  /** SPKI PEM of the public key. */
  publicPem: string
  jwk: PublicJwk
  /** RFC 7638 thumbprint: how operators, instances and `keys show` tell two keys apart. */
  thumbprint: string
}

/** A key this instance can sign with, with its public forms derived once from the same key material. */
export type SigningKey = PublicKeyForms & {
  privateKey: CryptoKey
  /** The RS256 signature of a JWS signing input: by the system's OpenSSL where it loads (openssl-rs256.ts), else WebCrypto. */
  sign(input: Uint8Array): Uint8Array | Promise<Uint8Array>
  /** Which of the two signs, for the start-up log. */
  signsWith: string
}

/**
 * Not a mistake in the configuration: a fresh database before the server's first start, seen by a command
 * that must not generate the key (`keys show`). The CLI says so in those words (issue 19: it was reported
 * as a "configuration error").
 */
export class NoSigningKeyYetError extends Error {
  constructor() {
    super(
      'no signing key exists yet: SIGNING_KEY_FILE is not set and the database holds none. The server generates one at its first start ' +
        '(ofage serve), or set SIGNING_KEY_FILE to a PKCS#8 RSA key of your own; then run keys show again',
    )
    this.name = 'NoSigningKeyYetError'
  }
}

/** Reads a PEM key file; `name` is what the error calls it (SIGNING_KEY_FILE, or a command's --file). */
export function readKeyFile(path: string, name = 'SIGNING_KEY_FILE'): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (cause) {
    throw new ConfigError(name, `cannot be read: ${(cause as Error).message}`)
  }
}

export function generatePkcs8Pem(): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
}

/** The signing key a PEM holds; `source` names where it came from in the error of a key we refuse. */
export async function signingKeyFromPem(pem: string, source: string): Promise<SigningKey> {
  const key = parseRsaKey(pem, source)
  const forms = await publicForms(createPublicKey(key))
  const privateKey = await importPKCS8(key.export({ type: 'pkcs8', format: 'pem' }).toString(), ALGORITHM)
  const openSsl = openSslRs256(key)
  if (openSsl) return { ...forms, privateKey, sign: openSsl.sign, signsWith: openSsl.version }
  return { ...forms, privateKey, sign: webCryptoRs256(privateKey), signsWith: 'WebCrypto (Bun)' }
}

/** RS256 by WebCrypto, where OpenSSL is not there to sign. */
export function webCryptoRs256(privateKey: CryptoKey): (input: Uint8Array) => Promise<Uint8Array> {
  return async (input) => new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', privateKey, input as Uint8Array<ArrayBuffer>))
}

/** The public forms of an RSA public key given by its modulus and exponent (as the database records it). */
export function publicKeyFromJwk(jwk: { n: string; e: string }): Promise<PublicKeyForms> {
  return publicForms(createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' }))
}

function parseRsaKey(pem: string, source: string): KeyObject {
  let key: KeyObject
  try {
    key = createPrivateKey(pem)
  } catch (cause) {
    throw new ConfigError(source, `is not a PEM private key: ${(cause as Error).message}`)
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0
  if (key.asymmetricKeyType !== 'rsa' || bits < 2048) {
    throw new ConfigError(source, `must be an RSA key of 2048 bits or more (found ${key.asymmetricKeyType} ${bits} bits)`)
  }
  return key
}

async function publicForms(publicObject: KeyObject): Promise<PublicKeyForms> {
  const publicPem = publicObject.export({ type: 'spki', format: 'pem' }).toString()
  const { n, e } = publicObject.export({ format: 'jwk' })
  if (!n || !e) throw new Error('RSA public key has no modulus or exponent')
  return {
    publicKey: (await importSPKI(publicPem, ALGORITHM, { extractable: true })) as CryptoKey,
    publicPem,
    jwk: { kty: 'RSA', kid: KEY_ID, use: 'sig', alg: ALGORITHM, n, e },
    thumbprint: await calculateJwkThumbprint({ kty: 'RSA', n, e }, 'sha256'),
  }
}
