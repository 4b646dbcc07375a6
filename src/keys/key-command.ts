import type { Services } from '../boot.ts'
import { OAuthError } from '../errors.ts'
import { UsageError, type Output } from '../lib/command-line.ts'
import { describeKeySource, findPublishedKey, keyThumbprint } from './published-key.ts'

export const KEYS_SUBCOMMANDS = ['show'] as const

/**
 * `ofage keys show`: the public signing key, loaded as the server loads it (same configuration, same code,
 * never generated here: the CLI opens services with `createSigningKey: false`). A shell whose environment
 * differs from the server's (another SIGNING_KEY_FILE, or none) would load another key: refused when it
 * differs from the key the server recorded at its last start.
 */
export async function keysCommand(services: Services, sub: string | undefined): Promise<Output> {
  if (sub !== 'show') throw new UsageError('usage: keys show')
  const { deps } = services
  const { signing } = deps.keys
  const thumbprint = await keyThumbprint(signing.jwk)
  const source = await describeKeySource(deps.db, deps.config)
  const published = await findPublishedKey(deps.db)
  if (published && published.thumbprint !== thumbprint) {
    throw new OAuthError(
      'invalid_request',
      `not showing this key: the server started at ${published.publishedAt.toISOString()} publishes another one ` +
        `(thumbprint ${published.thumbprint}, ${published.source}); this command loaded ${thumbprint} (${source}). ` +
        'Run it with the server\'s environment (SIGNING_KEY_FILE, DATABASE_URL, DATA_DIR), or restart the server to publish this key',
    )
  }
  const json = { kid: signing.jwk.kid, alg: signing.jwk.alg, thumbprint, source, public_key: signing.publicPem, jwk: signing.jwk }
  return { json, text: `kid: ${json.kid}\nalg: ${json.alg}\nthumbprint: ${thumbprint}\nsource: ${source}\n${json.public_key}` }
}
