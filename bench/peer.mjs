/**
 * The peer for the token exchange (issue 12): node-oidc-provider's token endpoint issuing an RS256 JWT
 * access token for `client_credentials`, one process, in memory: what a well-known OAuth server does per
 * token with no database. Plain JavaScript so that Node runs it (`node bench/peer.mjs PORT`); bench.ts
 * uses Bun when Node is absent. Prints "ready" once listening.
 */
import { generateKeyPairSync } from 'node:crypto'
import Provider from 'oidc-provider'

const port = Number(process.argv[2] ?? 3999)
const resource = 'urn:ofage:bench'
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const jwk = { ...privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256', kid: 'bench' }

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{ client_id: 'bench', client_secret: 'bench-secret', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] }],
  jwks: { keys: [jwk] },
  features: {
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      getResourceServerInfo: () => ({ scope: 'age', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } }),
    },
  },
})
// No request logging, as a production deployment would run it.
provider.on('server_error', (_ctx, error) => console.error(error))
provider.listen(port, () => console.log('ready'))
