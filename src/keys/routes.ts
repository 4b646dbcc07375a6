import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { sha256Hex } from '../lib/crypto.ts'
import { ALGORITHM, KEY_ID, type PublicKeyForms } from './signing-key.ts'
import { security } from '../lib/openapi-security.ts'

/** SPEC.md §8 asks verifiers to cache the key set for 24 hours; we say the same to their caches. */
const CACHE_CONTROL = 'public, max-age=86400'
const PUBLIC_KEY_PATH = '/api/verify/public-key'
const JWKS_PATH = '/api/.well-known/jwks.json'

type Published = { body: string; etag: string; headers: Record<string, string> }

function publish(value: unknown): Published {
  const body = JSON.stringify(value)
  const etag = `"${sha256Hex(body).slice(0, 32)}"`
  return { body, etag, headers: { 'content-type': 'application/json', 'cache-control': CACHE_CONTROL, etag } }
}

/** The two documents that publish a key, computed once per key: a rotation gives new bodies and ETags. */
type KeyDocuments = { thumbprint: string; publicKey: Published; jwks: Published }

function documentsOf(key: PublicKeyForms): KeyDocuments {
  return {
    thumbprint: key.thumbprint,
    publicKey: publish({ public_key: key.publicPem, kid: KEY_ID, alg: ALGORITHM }),
    jwks: publish({ keys: [key.jwk] }),
  }
}

function respond(published: Published, request: Request): Response {
  const ifNoneMatch = request.headers.get('if-none-match')
  if (ifNoneMatch?.split(',').some((tag) => tag.trim() === published.etag || tag.trim() === '*')) {
    return new Response(null, { status: 304, headers: published.headers })
  }
  return new Response(published.body, { headers: published.headers })
}

/**
 * The same two documents as Bun.serve's static routes, which the server answers without running any
 * JavaScript (issue 34: the key set at 60% of a hello world through the app, above it this way), GET and
 * HEAD, with the If-None-Match answer (304) done by Bun. What they lose is what costs: no log line, no
 * request id and no count in the HTTP metrics for these two paths. The server swaps them at each change of
 * the key in force (SigningKeys.onPublished); the routes below stay the definition (OpenAPI, in-process).
 */
export function staticKeyRoutes(key: PublicKeyForms, hsts: string | undefined): Record<string, { GET: Response }> {
  const { publicKey, jwks } = documentsOf(key)
  const response = ({ body, headers }: Published) => new Response(body, { headers: hsts ? { ...headers, 'strict-transport-security': hsts } : headers })
  return { [PUBLIC_KEY_PATH]: { GET: response(publicKey) }, [JWKS_PATH]: { GET: response(jwks) } }
}

/**
 * The published key: PEM (§4.4) and JWKS (§4.5), both the deployment's key in force, one key whatever
 * instance answers. Bodies are computed once per key (a rotation gives new bodies and ETags); if the key
 * cannot be read the error handler answers 500.
 */
export function keyRoutes(deps: AppDeps) {
  let documents: KeyDocuments | undefined
  const current = async () => {
    const key = await deps.keys.signing.published()
    if (documents?.thumbprint !== key.thumbprint) documents = documentsOf(key)
    return documents
  }
  return new Elysia({ name: 'key-routes' })
    .get(
      PUBLIC_KEY_PATH,
      async ({ request }) => respond((await current()).publicKey, request),
      {
        response: { 200: t.Object({ public_key: t.String(), kid: t.String(), alg: t.String() }) },
        detail: { summary: 'The PEM public key that verifies access tokens', tags: ['Keys'], security: security.none },
      },
    )
    .get(
      JWKS_PATH,
      async ({ request }) => respond((await current()).jwks, request),
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
