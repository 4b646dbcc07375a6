import type { Config } from '../config.ts'
import type { StoredKeys } from './key-in-force.ts'

/**
 * Where a key comes from, in the words of the variables: `SIGNING_KEY_FILE=path`, or when it was generated
 * and which database keeps it (the address and database name, never the password). The key in force is
 * described from its record; before any server has put one in force, from this configuration.
 */
export function describeKeySource(config: Pick<Config, 'signingKeyFile' | 'database'>, stored: StoredKeys): string {
  const { inForce } = stored
  const file = inForce ? (inForce.source === 'file' ? (inForce.file ?? '?') : undefined) : config.signingKeyFile
  if (file) return `SIGNING_KEY_FILE=${file}`
  const generated = `generated ${stored.generated ? stored.generated.createdAt.toISOString() : 'at first start'}`
  switch (config.database.kind) {
    case 'pglite':
      return `${generated}, kept in the embedded database (DATA_DIR=${config.database.dataDir})`
    case 'memory':
      return `${generated}, kept in the in-memory database (DATABASE_URL=memory:): gone when the process ends`
    case 'postgres': {
      const url = new URL(config.database.url)
      return `${generated}, kept in the database (DATABASE_URL=${url.protocol}//${url.host}${url.pathname})`
    }
  }
}
