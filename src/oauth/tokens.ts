import { errors as joseErrors, jwtVerify, SignJWT } from 'jose'
import { eq } from 'drizzle-orm'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { Database } from '../db/client.ts'
import { auditLogs } from '../db/schema.ts'
import { epochSeconds, type Clock } from '../lib/clock.ts'
import { ALGORITHM, TOKEN_LIFETIME_SECONDS } from '../keys/signing-key.ts'
import type { ServerKeys } from '../keys/server-keys.ts'
import type { Verification } from './codes.ts'
import { AgeTokenClaims, type AgeTokenClaimsType } from './model.ts'
import type { RevocationCache } from './revocations.ts'

const claimsShape = TypeCompiler.Compile(AgeTokenClaims)

export { TOKEN_LIFETIME_SECONDS }

/** Tokens longer than this are not ours (ours are about 900 bytes); refusing them bounds the work. */
const MAX_TOKEN_LENGTH = 8192

/** RFC 7515 §7.1 compact serialization: three base64url parts (RFC 7515 §2: no padding, no whitespace). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

export type TokenDeps = { db: Database; keys: ServerKeys; clock: Clock; issuerUrl: string; revocations?: RevocationCache | undefined }

/**
 * Signs the access token: RS256, no `kid` in the header, exactly the spec's claims; a sandbox client's
 * token also says `sandbox: true`, so that no verifier can take a test for a real check. Signed only with
 * the deployment's key in force (SigningKeyNotInForceError otherwise: a 500, never a token that another
 * instance or an integrator's cached key would refuse).
 */
export async function signAgeToken(deps: TokenDeps, verification: Verification, client: { sandbox: boolean }): Promise<string> {
  const { privateKey } = await deps.keys.signing.signer()
  const iat = epochSeconds(deps.clock.now())
  const claims: AgeTokenClaimsType = {
    iss: deps.issuerUrl,
    aud: verification.clientId,
    sub: verification.subject,
    age_verified: true,
    age_over: verification.ageOver,
    verification_level: verification.verificationLevel,
    verification_id: verification.transactionId,
    reverification: verification.verificationLevel === 're_verification',
    iat,
    exp: iat + TOKEN_LIFETIME_SECONDS,
    ...(client.sandbox && { sandbox: true as const }),
  }
  return new SignJWT(claims).setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' }).sign(privateKey)
}

/**
 * Verifies a token as this service issued it: our key, RS256 only (never `none` or an HMAC keyed with
 * the public key), our issuer, not expired by the injected clock, and not revoked by a code replay.
 * "Our key" is the key in force, or for 630 s after a rotation the key it replaced (signing-keys.ts):
 * a token signed just before the switch lives its 600 s. Returns the claims, or undefined for any invalid token.
 */
export async function verifyAgeToken(
  deps: TokenDeps,
  token: string,
  options: { audience?: string } = {},
): Promise<AgeTokenClaimsType | undefined> {
  // One exact spelling of each token: base64url decoders skip padding and whitespace, so without this
  // `token==` or a space inside the signature would validate as the same token.
  if (token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) return undefined
  let payload: unknown
  for (const key of await deps.keys.signing.verificationKeys()) {
    try {
      ;({ payload } = await jwtVerify(token, key, {
        algorithms: [ALGORITHM],
        issuer: deps.issuerUrl,
        currentDate: deps.clock.now(),
        requiredClaims: ['iat', 'exp', 'sub', 'aud'],
        ...(options.audience !== undefined && { audience: options.audience }),
      }))
      break
    } catch (cause) {
      // Only a signature made by another key is worth trying the next key for.
      if (cause instanceof joseErrors.JWSSignatureVerificationFailed) continue
      if (cause instanceof joseErrors.JOSEError || cause instanceof TypeError) return undefined
      throw cause
    }
  }
  if (payload === undefined) return undefined
  if (!claimsShape.Check(payload)) return undefined
  // Our signature binds `aud` to `verification_id`, so a verification known live needs no lookup.
  const now = deps.clock.now().getTime()
  if (deps.revocations?.isKnownLive(payload.verification_id, now)) return payload
  const generation = deps.revocations?.current ?? 0
  const [verification] = await deps.db
    .select({ revokedAt: auditLogs.revokedAt, clientId: auditLogs.clientId })
    .from(auditLogs)
    .where(eq(auditLogs.transactionId, payload.verification_id))
  if (!verification || verification.revokedAt !== null || verification.clientId !== payload.aud) return undefined
  deps.revocations?.remember(payload.verification_id, payload.exp * 1000, generation, now)
  return payload
}
