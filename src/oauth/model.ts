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
    state: t.Optional(t.String({ maxLength: 2048 })),
  },
  { description: 'Extra members are ignored' },
)

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
  age_over: t.Integer(),
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
