import { eq } from 'drizzle-orm'
import { calculateJwkThumbprint } from 'jose'
import type { Config } from '../config.ts'
import type { Database } from '../db/client.ts'
import type { AppDeps } from '../deps.ts'
import { serverSecrets } from '../db/schema.ts'
import { readStartRecord, writeStartRecord } from './server-secrets.ts'
import type { PublicJwk } from './signing-key.ts'

/** Not a secret: which key the server last started with, so that `ofage keys show` can check it shows that one. */
const RECORD = 'published_signing_key'

export type PublishedKey = { thumbprint: string; source: string; publishedAt: Date }

/** The RFC 7638 thumbprint of the public key: how operators and `keys show` tell two keys apart. */
export function keyThumbprint(jwk: PublicJwk): Promise<string> {
  return calculateJwkThumbprint({ kty: jwk.kty, n: jwk.n, e: jwk.e }, 'sha256')
}

/** Where the signing key comes from under this configuration, in the words of its variables. */
export async function describeKeySource(db: Database, config: Pick<Config, 'signingKeyFile' | 'database'>): Promise<string> {
  if (config.signingKeyFile) return `SIGNING_KEY_FILE=${config.signingKeyFile}`
  const [row] = await db.select({ createdAt: serverSecrets.createdAt }).from(serverSecrets).where(eq(serverSecrets.name, 'signing_key'))
  const generated = `generated ${row ? row.createdAt.toISOString() : 'at first start'}`
  switch (config.database.kind) {
    case 'pglite':
      return `${generated}, kept in the embedded database (DATA_DIR=${config.database.dataDir})`
    case 'memory':
      return `${generated}, kept in the in-memory database (DATABASE_URL=memory:): gone when the process ends`
    case 'postgres': {
      // Never the password: the address and the database name say which one.
      const url = new URL(config.database.url)
      return `${generated}, kept in the database (DATABASE_URL=${url.protocol}//${url.host}${url.pathname})`
    }
  }
}

/** Written by the server at start: the key it publishes at /api/.well-known/jwks.json from now on. */
export async function recordPublishedKey(deps: Pick<AppDeps, 'db' | 'keys' | 'config' | 'clock'>): Promise<void> {
  const value = { thumbprint: await keyThumbprint(deps.keys.signing.jwk), source: await describeKeySource(deps.db, deps.config) }
  await writeStartRecord(deps.db, RECORD, value, deps.clock.now())
}

/** The key the server last started with, or undefined before any server ran on this database. */
export async function findPublishedKey(db: Database): Promise<PublishedKey | undefined> {
  const record = await readStartRecord<{ thumbprint: string; source: string }>(db, RECORD)
  return record && { ...record.value, publishedAt: record.recordedAt }
}
