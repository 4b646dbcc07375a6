import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { sha256Hex } from '../lib/crypto.ts'
import { ALGORITHM, KEY_ID } from './signing-key.ts'
import { security } from '../lib/openapi-security.ts'

/** SPEC.md §8 asks verifiers to cache the key set for 24 hours; we say the same to their caches. */
const CACHE_CONTROL = 'public, max-age=86400'

type Published = { body: string; etag: string; thumbprint: string }

function publish(value: unknown, thumbprint: string): Published {
  const body = JSON.stringify(value)
  return { body, etag: `"${sha256Hex(body).slice(0, 32)}"`, thumbprint }
}

function respond(published: Published, request: Request): Response {
  const headers = { 'content-type': 'application/json', 'cache-control': CACHE_CONTROL, etag: published.etag }
  const ifNoneMatch = request.headers.get('if-none-match')
  if (ifNoneMatch?.split(',').some((tag) => tag.trim() === published.etag || tag.trim() === '*')) {
    return new Response(null, { status: 304, headers })
  }
  return new Response(published.body, { headers })
}

/**
 * The published key: PEM (§4.4) and JWKS (§4.5), both the deployment's key in force, one key whatever
 * instance answers. Bodies are computed once per key (a rotation gives new bodies and ETags); if the key
 * cannot be read the error handler answers 500.
 */
export function keyRoutes(deps: AppDeps) {
  let publicKey: Published | undefined
  let jwks: Published | undefined
  return new Elysia({ name: 'key-routes' })
    .get(
      '/api/verify/public-key',
      async ({ request }) => {
        const key = await deps.keys.signing.published()
        if (publicKey?.thumbprint !== key.thumbprint) publicKey = publish({ public_key: key.publicPem, kid: KEY_ID, alg: ALGORITHM }, key.thumbprint)
        return respond(publicKey, request)
      },
      {
        response: { 200: t.Object({ public_key: t.String(), kid: t.String(), alg: t.String() }) },
        detail: { summary: 'The PEM public key that verifies access tokens', tags: ['Keys'], security: security.none },
      },
    )
    .get(
      '/api/.well-known/jwks.json',
      async ({ request }) => {
        const key = await deps.keys.signing.published()
        if (jwks?.thumbprint !== key.thumbprint) jwks = publish({ keys: [key.jwk] }, key.thumbprint)
        return respond(jwks, request)
      },
      {
        response: {
          200: t.Object({
            keys: t.Array(
              t.Object({ kty: t.String(), kid: t.String(), use: t.String(), alg: t.String(), n: t.String(), e: t.String() }),
            ),
          }),
        },
        detail: { summary: 'The key set: one RSA key (SPEC.md §2.4)', tags: ['Keys'], security: security.none },
      },
    )
}
