import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { readStrictBody } from '../lib/strict-request.ts'
import { peerAddress } from '../ratelimit/peer.ts'
import { checkAuthorizationParameters } from './authorization-request.ts'
import { authenticateClient } from './client-auth.ts'
import { AuthorizationParameters, ErrorBody, PushedRequestResponse } from './model.ts'
import { pushAuthorizationRequest } from './pushed-requests.ts'
import { security } from '../lib/openapi-security.ts'

/** RFC 8414 §3: the well-known name of the metadata document. */
const METADATA_PATH = '/.well-known/oauth-authorization-server'

const PushedRequestBody = t.Object({
  ...AuthorizationParameters.properties,
  client_id: t.Optional(t.String({ maxLength: 256, description: 'The authenticated client (required with client_secret_post)' })),
  client_secret: t.Optional(t.String({ maxLength: 256, description: 'client_secret_post, instead of HTTP Basic' })),
  // Named so that it is refused rather than ignored as an extra member.
  request_uri: t.Optional(t.String({ description: 'Never: RFC 9126 §2.1, a pushed request must not carry one' })),
})

/** What a standard OAuth client reads before it sends a visitor: server metadata, and pushed requests. */
export function authorizationRoutes(deps: AppDeps) {
  const { publicUrl, appUrl, issuerUrl } = deps.config
  // RFC 8414 §2; `issuer` must equal the URL the document was found under (§3.3), so ISSUER_URL is the
  // service's own address. The page is the authorization endpoint.
  const metadata = {
    issuer: issuerUrl,
    authorization_endpoint: `${appUrl}/`,
    token_endpoint: `${publicUrl}/api/oauth/token`,
    jwks_uri: `${publicUrl}/api/.well-known/jwks.json`,
    pushed_authorization_request_endpoint: `${publicUrl}/api/oauth/par`,
    introspection_endpoint: `${publicUrl}/api/oauth/validate`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    introspection_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
    code_challenge_methods_supported: ['S256'],
    require_pushed_authorization_requests: false,
    authorization_response_iss_parameter_supported: true,
    // The OpenAPI document the app serves (src/app.tsx); `/api/openapi` has no page (no UI provider: its
    // scripts would come from another origin), and answered 404 (issue 32, item 5).
    service_documentation: `${publicUrl}/api/openapi.json`,
  }
  const metadataRoute = {
    response: { 200: t.Object({ issuer: t.String(), authorization_endpoint: t.String(), token_endpoint: t.String(), jwks_uri: t.String() }, { additionalProperties: true }) },
    detail: { summary: 'Authorization server metadata (RFC 8414)', tags: ['OAuth'], security: security.none },
  }
  const serveMetadata = ({ set }: { set: { headers: Record<string, unknown> } }) => {
    set.headers['cache-control'] = 'public, max-age=3600'
    return metadata
  }
  const limitsFor = (request: Request) => ({ address: peerAddress(request, deps.config.trustProxy), authFailures: deps.config.limits.authFailures })
  return new Elysia({ name: 'authorization-routes' })
    .get(METADATA_PATH, serveMetadata, metadataRoute)
    .get(`/api${METADATA_PATH}`, serveMetadata, { ...metadataRoute, detail: { ...metadataRoute.detail, summary: 'The same metadata, under /api' } })
    .post(
      '/api/oauth/par',
      async ({ body, headers, request, set }) => {
        set.headers['cache-control'] = 'no-store'
        const client = await authenticateClient(deps, headers.authorization, limitsFor(request), body)
        // RFC 9126 §2.1: "The request_uri authorization request parameter is one exception, and it MUST NOT
        // be provided." A pushed request naming another would chain references the page never resolves.
        if (body.request_uri !== undefined) throw new OAuthError('invalid_request', 'A pushed request must not carry request_uri (RFC 9126 §2.1)')
        const parameters = await checkAuthorizationParameters(deps.db, client, body, deps.clock.now())
        const pushed = await pushAuthorizationRequest(deps, client.id, parameters)
        // RFC 9126 §2.2: "201 Created".
        set.status = 201
        return { request_uri: pushed.requestUri, expires_in: pushed.expiresIn }
      },
      {
        // RFC 9126 §2.1 posts a form; JSON is taken too, as the token endpoint takes it.
        parse: [({ request }) => readStrictBody(request, ['form', 'json']), 'urlencoded', 'json'],
        body: PushedRequestBody,
        response: { 201: PushedRequestResponse, 400: ErrorBody, 401: ErrorBody, 402: ErrorBody, 403: ErrorBody, 429: ErrorBody, 500: ErrorBody },
        detail: {
          summary: 'Push an authorization request (RFC 9126)',
          security: security.client,
          description:
            'Client credentials as for the token endpoint. The parameters of the hosted page; the answer names them, and the page opens with `client_id` and `request_uri` alone, which a visitor cannot edit into another threshold.',
          tags: ['OAuth'],
        },
      },
    )
}
