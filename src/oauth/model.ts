import { Type } from '@sinclair/typebox'
import { t, type Static } from 'elysia'
import { verificationLevels } from '../db/schema.ts'

const uuidPattern = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'

/** Wire models of the token endpoints (SPEC.md §2.2, §2.3, §4.2, §4.3). Types derive from these. */
export const ErrorBody = t.Object(
  { error: t.String(), error_description: t.String() },
  { description: 'SPEC.md §7 error body' },
)

export const TokenRequest = t.Object(
  {
    // Not a literal: any other value is `unsupported_grant_type`, not a validation failure.
    grant_type: t.String({ description: 'Must be authorization_code' }),
    code: t.String({ minLength: 1, maxLength: 512 }),
    redirect_uri: t.String({ minLength: 1, maxLength: 2048 }),
    state: t.Optional(t.String({ maxLength: 2048, description: 'Required when a state was sent at authorization, unless the request used PKCE' })),
    code_verifier: t.Optional(t.String({ maxLength: 128, description: 'RFC 7636: required when the authorization request sent a code_challenge' })),
    client_id: t.Optional(t.String({ maxLength: 256, description: 'client_secret_post (RFC 6749 §2.3.1), or the Basic client id again' })),
    client_secret: t.Optional(t.String({ maxLength: 256, description: 'client_secret_post: instead of HTTP Basic, never with it' })),
  },
  { description: 'JSON (SPEC.md §4.2) or application/x-www-form-urlencoded (RFC 6749 §4.1.3); extra members are ignored' },
)

export type TokenRequestType = Static<typeof TokenRequest>

/**
 * The authorization request's parameters (SPEC.md §4.1, RFC 6749 §4.1.1, RFC 7636 §4.3), shared by the
 * hosted page's URL and the pushed-request endpoint.
 */
export const AuthorizationParameters = t.Object({
  redirect_uri: t.Optional(t.String({ minLength: 1, maxLength: 2048, description: 'Required, in the URL or in the pushed request' })),
  state: t.Optional(t.String({ maxLength: 2048 })),
  // DESIGN.md: an integer from 1 to 99, default 18.
  age_required: t.Optional(t.String({ pattern: '^[1-9][0-9]?$', description: 'Minimum age, 1 to 99; default 18' })),
  response_type: t.Optional(t.String({ maxLength: 32, description: 'code (the only one served); optional' })),
  scope: t.Optional(t.String({ maxLength: 1024, description: 'Accepted and ignored' })),
  code_challenge: t.Optional(t.String({ maxLength: 128, description: 'RFC 7636 S256 challenge' })),
  code_challenge_method: t.Optional(t.String({ maxLength: 16, description: 'S256' })),
})

export const PushedRequestResponse = t.Object({
  request_uri: t.String({ description: 'urn:ietf:params:oauth:request_uri:…, for the page URL with client_id' }),
  expires_in: Type.Integer(),
})

export const TokenResponse = t.Object({
  access_token: t.String(),
  token_type: t.Literal('Bearer'),
  expires_in: t.Literal(600),
  transaction_id: t.String({ format: 'uuid' }),
})

/**
 * The claims of our access token (SPEC.md §2.2). Plain TypeBox rather than Elysia's `t`: it is checked
 * by `Value`/`TypeCompiler` after signature verification, never by a route, and `t` types coerce.
 */
export const AgeTokenClaims = Type.Object({
  iss: Type.String(),
  aud: Type.String(),
  sub: Type.String(),
  age_verified: Type.Boolean(),
  age_over: Type.Integer({ minimum: 1, maximum: 99 }),
  verification_level: Type.Union(verificationLevels.map((level) => Type.Literal(level))),
  verification_id: Type.String({ pattern: uuidPattern }),
  reverification: Type.Boolean(),
  iat: Type.Integer(),
  exp: Type.Integer(),
  /** Only on tokens of sandbox clients (never on production tokens, which keep exactly the spec's claims). */
  sandbox: Type.Optional(Type.Literal(true)),
})
export type AgeTokenClaimsType = Static<typeof AgeTokenClaims>

export const TokenValidation = t.Object({
  success: t.Literal(true),
  valid: t.Literal(true),
  age_verified: t.Boolean(),
  age_over: Type.Integer(),
  verification_level: t.UnionEnum(verificationLevels),
  expires_at: t.String({ description: 'ISO 8601 UTC with milliseconds' }),
  issued_at: t.String({ description: 'ISO 8601 UTC with milliseconds' }),
  session_id: t.String({ description: 'The sub claim' }),
  client_id: t.String({ description: 'The aud claim' }),
  nonce: t.Null(),
  transaction_id: t.String(),
  sandbox: t.Optional(t.Literal(true, { description: 'Present only for a sandbox client: a test token, not a real check' })),
})
export type TokenValidationType = Static<typeof TokenValidation>

export const InvalidToken = t.Object({
  success: t.Literal(false),
  valid: t.Literal(false),
  message: t.Literal('Invalid or expired token'),
})

export const IntrospectionRequest = t.Object({ token: t.String({ maxLength: 8192 }) })

export const Introspection = t.Union([
  t.Composite([TokenValidation, t.Object({ active: t.Literal(true) })]),
  t.Composite([InvalidToken, t.Object({ active: t.Literal(false) })]),
])
