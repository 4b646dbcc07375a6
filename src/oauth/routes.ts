import { Elysia, t } from 'elysia'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { AppDeps } from '../deps.ts'
import { readStrictBody } from '../lib/strict-request.ts'
import { peerAddress } from '../ratelimit/peer.ts'
import { authenticateClient } from './client-auth.ts'
import { exchangeCode } from './exchange.ts'
import { createClientCache } from '../clients/client-cache.ts'
import {
  ErrorBody,
  Introspection,
  IntrospectionRequest,
  InvalidToken,
  TokenRequest,
  TokenResponse,
  TokenValidation,
  type AgeTokenClaimsType,
  type TokenValidationType,
} from './model.ts'
import { signAgeToken, TOKEN_LIFETIME_SECONDS, verifyAgeToken } from './tokens.ts'
import { security } from '../lib/openapi-security.ts'

const invalidToken = { success: false, valid: false, message: 'Invalid or expired token' } as const

/** RFC 6749 §5.1: responses that carry tokens or credentials must not be cached. */
const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' }

/** The token endpoints: code exchange (§4.2), validation (§4.3) and `/api/oauth/validate` (DESIGN.md). */
export function oauthRoutes(deps: AppDeps) {
  const tokenDeps = { ...deps, issuerUrl: deps.config.issuerUrl }
  // The exchange's copy of each client it has met (src/oauth/exchange.ts): kept at most 30 s, checked on every use.
  const clientCopies = createClientCache(deps.db, deps.clock)
  const limitsFor = (request: Request) => ({ address: peerAddress(request, deps.config.trustProxy), authFailures: deps.config.limits.authFailures })
  return new Elysia({ name: 'oauth-routes' })
    .post(
      '/api/oauth/token',
      async ({ body, headers, request, set }) => {
        Object.assign(set.headers, noStore)
        const { client, verification } = await exchangeCode(deps, clientCopies, { authorization: headers.authorization, body, limits: limitsFor(request) })
        const accessToken = await signAgeToken(tokenDeps, verification, client)
        deps.metrics.codes.inc({ event: 'redeemed' })
        return {
          access_token: accessToken,
          token_type: 'Bearer' as const,
          expires_in: TOKEN_LIFETIME_SECONDS as 600,
          transaction_id: verification.transactionId,
        }
      },
      {
        // Ours always answers, so the named parsers after it never run: they name the types for OpenAPI.
        parse: [({ request }) => readStrictBody(request, ['json', 'form']), 'json', 'urlencoded'],
        body: TokenRequest,
        response: { 200: TokenResponse, 400: ErrorBody, 401: ErrorBody, 402: ErrorBody, 403: ErrorBody, 500: ErrorBody },
        detail: {
          summary: 'Exchange an authorization code for an access token',
          security: security.client,
          description:
            'HTTP Basic client credentials, or client_secret_post in a form body; JSON (SPEC.md §4.2) or form-encoded (RFC 6749 §4.1.3). PKCE verifier when the authorization request sent a challenge. Errors per SPEC.md §7 and docs/errors.md.',
          tags: ['OAuth'],
        },
      },
    )
    .get(
      '/api/verify/token/:access_token',
      async ({ params }) => {
        // Elysia passes null when the parameter's percent-encoding is malformed ("%"): an invalid token.
        const claims = await verifyAgeToken(tokenDeps, params.access_token ?? '')
        return claims ? validationResponse(claims) : new Response(invalidTokenBlob, { status: 401 })
      },
      {
        response: { 200: TokenValidation, 401: InvalidToken },
        detail: { summary: 'Validate an access token', tags: ['Tokens'], security: security.none },
      },
    )
    // An empty token is an invalid one, not an unknown path.
    .get('/api/verify/token/', ({ status }) => status(401, invalidToken), {
      response: { 401: InvalidToken },
      detail: { hide: true },
    })
    .post(
      '/api/oauth/validate',
      async ({ body, headers, request, set, status }) => {
        Object.assign(set.headers, noStore)
        // With client credentials, a token issued to another client is invalid.
        const audience = headers.authorization ? (await authenticateClient(deps, headers.authorization, limitsFor(request))).id : undefined
        const claims = await verifyAgeToken(tokenDeps, body.token, { audience })
        if (!claims) return status(401, { ...invalidToken, active: false as const })
        return { ...describeValidToken(claims), active: true as const }
      },
      {
        parse: [({ request }) => readStrictBody(request, ['json', 'form']), 'json', 'urlencoded'],
        body: IntrospectionRequest,
        response: { 200: Introspection, 400: ErrorBody, 401: t.Union([Introspection, ErrorBody]) },
        detail: {
          summary: 'Validate an access token (POST, optional client credentials)',
          security: security.optionalClient,
          description: 'Answers like GET /api/verify/token/{token}, plus `active` as in RFC 7662.',
          tags: ['Tokens'],
        },
      },
    )
}

/**
 * The body for each claims object: a token validated again is answered from the same claims object (the
 * cache of verified tokens, src/oauth/tokens.ts), and its body never changes, so it is built once: its two
 * dates showed as 6% of a validation's CPU profile (`bun run bench --profile`).
 */
const described = new WeakMap<AgeTokenClaimsType, TokenValidationType>()

/**
 * GET's answers, made once: for each claims object its JSON is written and checked against the route's
 * schema once, as Elysia would check a returned object on every call (serialising and checking the same body
 * again were 10% of a remembered token's validation in process), and kept as a Blob typed as Response.json
 * types its answers (a Response from a Blob costs a third of one from text and a headers object).
 */
const validationBlobs = new WeakMap<AgeTokenClaimsType, Blob>()
const validationShape = TypeCompiler.Compile(TokenValidation)
const invalidTokenBlob = jsonBlob(checked(TypeCompiler.Compile(InvalidToken), invalidToken))

function validationResponse(claims: AgeTokenClaimsType): Response {
  let blob = validationBlobs.get(claims)
  if (!blob) validationBlobs.set(claims, (blob = jsonBlob(checked(validationShape, describeValidToken(claims)))))
  return new Response(blob)
}

function checked<T>(shape: { Check(value: unknown): boolean }, body: T): T {
  if (!shape.Check(body)) throw new Error('A token validation body does not match its schema')
  return body
}

function jsonBlob(body: unknown): Blob {
  return new Blob([JSON.stringify(body)], { type: 'application/json;charset=utf-8' })
}

/** SPEC.md §2.3: the validation body, field by field from the claims. */
export function describeValidToken(claims: AgeTokenClaimsType): TokenValidationType {
  let body = described.get(claims)
  if (!body) described.set(claims, (body = Object.freeze(validationBody(claims))))
  return body
}

function validationBody(claims: AgeTokenClaimsType): TokenValidationType {
  return {
    success: true,
    valid: true,
    age_verified: claims.age_verified,
    age_over: claims.age_over,
    verification_level: claims.verification_level,
    expires_at: new Date(claims.exp * 1000).toISOString(),
    issued_at: new Date(claims.iat * 1000).toISOString(),
    session_id: claims.sub,
    client_id: claims.aud,
    nonce: null,
    transaction_id: claims.verification_id,
    ...(claims.sandbox && { sandbox: true as const }),
  }
}
