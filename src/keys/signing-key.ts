import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { importPKCS8, importSPKI } from 'jose'
import { ConfigError } from '../errors.ts'
import type { Database } from '../db/client.ts'
import { findSecret, getOrCreateSecret } from './server-secrets.ts'

/** The key id the spec publishes (SPEC.md §2.4). Tokens never carry it: verifiers use the single key. */
export const KEY_ID = 'key_2025_01'
export const ALGORITHM = 'RS256'

export type PublicJwk = { kty: 'RSA'; kid: string; use: 'sig'; alg: 'RS256'; n: string; e: string }

/** The one signing key, with its public forms derived once from the same key material. */
export type SigningKey = {
  privateKey: CryptoKey
  publicKey: CryptoKey
  /** SPKI PEM of the public key. */
  publicPem: string
  jwk: PublicJwk
}

/**
 * Loads the key from SIGNING_KEY_FILE, or the one generated on first start and kept in the database so
 * that every instance signs with the same key. With `create: false` (`ofage keys show`) none is generated:
 * a key shown before any server made one would be a key nobody publishes.
 */
export async function loadSigningKey(db: Database, signingKeyFile: string | undefined, now: Date, options: { create?: boolean } = {}): Promise<SigningKey> {
  const pem = signingKeyFile
    ? readKeyFile(signingKeyFile)
    : options.create === false
      ? await findSecret(db, 'signing_key')
      : await getOrCreateSecret(db, 'signing_key', generatePkcs8Pem, now)
  if (pem === undefined) throw new NoSigningKeyYetError()
  return deriveSigningKey(parseRsaKey(pem, signingKeyFile ? 'SIGNING_KEY_FILE' : 'server_secrets.signing_key'))
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

function readKeyFile(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (cause) {
    throw new ConfigError('SIGNING_KEY_FILE', `cannot be read: ${(cause as Error).message}`)
  }
}

function generatePkcs8Pem(): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
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

async function deriveSigningKey(key: KeyObject): Promise<SigningKey> {
  const publicObject = createPublicKey(key)
  const publicPem = publicObject.export({ type: 'spki', format: 'pem' }).toString()
  const { n, e } = publicObject.export({ format: 'jwk' })
  if (!n || !e) throw new Error('RSA public key has no modulus or exponent')
  return {
    privateKey: await importPKCS8(key.export({ type: 'pkcs8', format: 'pem' }).toString(), ALGORITHM),
    publicKey: (await importSPKI(publicPem, ALGORITHM, { extractable: true })) as CryptoKey,
    publicPem,
    jwk: { kty: 'RSA', kid: KEY_ID, use: 'sig', alg: ALGORITHM, n, e },
  }
}
