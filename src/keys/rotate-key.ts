import { resolve } from 'node:path'
import type { Database } from '../db/client.ts'
import { ConfigError, OAuthError } from '../errors.ts'
import { listInstances } from './instance-reports.ts'
import { putKeyInForce, readStoredKeys, type KeyInForce, type KeySource } from './key-in-force.ts'
import { MAX_AGE_MS } from './signing-keys.ts'
import { generatePkcs8Pem, readKeyFile, signingKeyFromPem, TOKEN_LIFETIME_SECONDS } from './signing-key.ts'

/**
 * How long our own validation endpoints still accept the replaced key: a token it signed at the switch
 * lives 600 s, and an instance that missed the notice signs with it for at most 30 s more.
 */
export const PREVIOUS_KEY_OVERLAP_MS = TOKEN_LIFETIME_SECONDS * 1000 + MAX_AGE_MS

export type RotateOptions = {
  /** A PKCS#8 PEM that every instance's SIGNING_KEY_FILE already holds; without it, a key is generated and kept in the database. */
  file?: string
  /** The replaced key leaked: refuse it at once rather than let its last tokens live out their 600 s. */
  leaked: boolean
  now: Date
}

/**
 * Puts a new key in force for every instance at once (`ofage keys rotate`): one transaction writes the
 * record (and the generated key), and its NOTIFY makes each running instance read it again within
 * milliseconds; one that cannot follow (its file still holds the old key) stops signing. The key set keeps
 * one key, `key_2025_01` (SPEC.md §2.4): integrators that cache it (§8) see a signature fail once and fetch it again.
 */
export async function rotateSigningKey(db: Database, options: RotateOptions): Promise<KeyInForce> {
  const { inForce: current } = await readStoredKeys(db)
  if (!current) throw new OAuthError('invalid_request', 'no key is in force yet: no server has started on this database, and the first one puts its own key in force')
  const source: KeySource = options.file ? 'file' : 'database'
  const pem = options.file ? readNamedFile(options.file) : generatePkcs8Pem()
  const key = await signingKeyFromPem(pem, options.file ? `--file ${options.file}` : 'the generated key').catch((cause) => {
    throw cause instanceof ConfigError ? new OAuthError('invalid_request', cause.message) : cause
  })
  if (key.thumbprint === current.thumbprint) {
    throw new OAuthError('invalid_request', `${options.file} holds the key already in force (${key.thumbprint}): write the new key to it first`)
  }
  // Where instances read the key cannot change under them: they would all stop signing until restarted.
  const stranded = (await listInstances(db, options.now)).filter((instance) => instance.source !== source)
  if (stranded.length > 0) {
    const reads = source === 'file' ? 'their key from the database (no SIGNING_KEY_FILE)' : 'SIGNING_KEY_FILE'
    const way = source === 'file' ? 'rotate without --file' : 'write the new key to every instance\'s file and use --file'
    throw new OAuthError(
      'invalid_request',
      `${stranded.length} running instance(s) read ${reads} and could not follow: ${way}, or stop every instance first to change where the key lives (docs/deploy.md, Keys)`,
    )
  }
  const record: KeyInForce = {
    thumbprint: key.thumbprint,
    n: key.jwk.n,
    e: key.jwk.e,
    source,
    ...(options.file && { file: resolve(options.file) }),
    since: options.now.toISOString(),
    ...(!options.leaked && {
      previous: { thumbprint: current.thumbprint, n: current.n, e: current.e, until: new Date(options.now.getTime() + PREVIOUS_KEY_OVERLAP_MS).toISOString() },
    }),
  }
  await db.transaction((tx) => putKeyInForce(tx, record, source === 'database' ? pem : undefined))
  return record
}

function readNamedFile(path: string): string {
  try {
    return readKeyFile(path, '--file')
  } catch (cause) {
    throw cause instanceof ConfigError ? new OAuthError('invalid_request', cause.message) : cause
  }
}
