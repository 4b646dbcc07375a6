import type { Database } from '../db/client.ts'
import { ConfigError } from '../errors.ts'
import { GENERATED_KEY, type KeyInForce, type StoredKeys } from './key-in-force.ts'
import { getOrCreateSecret } from './server-secrets.ts'
import { generatePkcs8Pem, NoSigningKeyYetError, readKeyFile, signingKeyFromPem, type SigningKey } from './signing-key.ts'

/*
 * The key this instance holds, and how it compares with the deployment's key in force: read at start
 * (a refusal is one line naming SIGNING_KEY_FILE, never a stack trace) and again after a rotation.
 */

/** In words for the operator: where the key in force comes from. */
function describeInForce(record: KeyInForce): string {
  const where = record.source === 'file' ? `from SIGNING_KEY_FILE=${record.file ?? '?'} where it was put in force` : 'generated, kept in the database'
  return `${record.thumbprint}, ${where}, since ${record.since}`
}

/** The key this server would sign with: its file's, else the database's (generated at the first start). */
export async function loadOwnKey(db: Database, options: { file: string | undefined; stored: StoredKeys; create: boolean; now: Date }): Promise<SigningKey> {
  const { file, stored } = options
  if (file) return signingKeyFromPem(readKeyFile(file), 'SIGNING_KEY_FILE')
  if (stored.inForce?.source === 'file') {
    throw new ConfigError('SIGNING_KEY_FILE', `is not set, but this deployment signs with a key from a file (${describeInForce(stored.inForce)}): set it to that key on this instance too`)
  }
  const pem = stored.generated?.pem ?? (options.create ? await getOrCreateSecret(db, GENERATED_KEY, generatePkcs8Pem, options.now) : undefined)
  if (pem === undefined) throw new NoSigningKeyYetError()
  return signingKeyFromPem(pem, 'server_secrets.signing_key')
}

/** The same, for a running instance after a rotation: never generated, the file read again. */
export async function readOwnKey(file: string | undefined, record: KeyInForce, stored: StoredKeys): Promise<SigningKey> {
  if (file) return signingKeyFromPem(readKeyFile(file), 'SIGNING_KEY_FILE')
  if (record.source === 'database' && stored.generated) return signingKeyFromPem(stored.generated.pem, 'server_secrets.signing_key')
  throw new ConfigError('SIGNING_KEY_FILE', `is not set, but this deployment now signs with a key from a file (${describeInForce(record)}): set it on this instance and restart it`)
}

/** One line naming the variable: what this instance holds, what the deployment signs with, and the way out. */
export function notTheKeyInForce(own: SigningKey, record: KeyInForce, file: string | undefined): ConfigError {
  const held = file ? `(${file}) holds the key ${own.thumbprint}` : `is not set, and the key kept in the database (${own.thumbprint})`
  const wayOut =
    record.source === 'file'
      ? 'give every instance the same key file, or switch them all with "ofage keys rotate --file PATH" (docs/deploy.md, Keys)'
      : file
        ? 'unset SIGNING_KEY_FILE to sign with that key, or see docs/deploy.md, Keys, to move the deployment to a file'
        : 'the database is inconsistent; run "ofage keys rotate" (docs/deploy.md, Keys)'
  return new ConfigError('SIGNING_KEY_FILE', `${held}, but every instance of this deployment signs with ${describeInForce(record)}: ${wayOut}`)
}
