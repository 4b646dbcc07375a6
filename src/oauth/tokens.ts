import { errors as joseErrors, jwtVerify } from 'jose'
import { LRUCache } from 'lru-cache'
import { eq } from 'drizzle-orm'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { Database } from '../db/client.ts'
import { auditLogs } from '../db/schema.ts'
import { epochSeconds, type Clock } from '../lib/clock.ts'
import { ALGORITHM, TOKEN_LIFETIME_SECONDS } from '../keys/signing-key.ts'
import { compactJwt } from '../lib/compact-jwt.ts'
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

/**
 * Signatures already verified, by the exact token (issue 34): an integrator validates one token on every page
 * of a visit, and the RSA verification was most of a validation's CPU (jose's jwtVerify, about 45 µs). The
 * same bytes verify the same way under the same key and issuer, so a token seen valid is not verified again
 * while the key that verified it is still one we verify with (a rotation's overlap ends it) and it has not
 * expired; what can change (revocation, the audience asked for) is checked on every call. Only tokens that
 * passed are kept, so a stranger cannot fill it with his own; 4,096 of about 2 kB at most.
 */
type Verified = { payload: AgeTokenClaimsType; key: CryptoKey }
const verifiedByDeps = new WeakMap<TokenDeps, LRUCache<string, Verified>>()
const VERIFIED_MAX = 4096

/** A verified token's claims, if its signature was verified before under a key still in use and it is not expired. */
function alreadyVerified(deps: TokenDeps, token: string, keys: CryptoKey[], options: { audience?: string }): AgeTokenClaimsType | undefined | 'unknown' {
  const verified = verifiedByDeps.get(deps)?.get(token)
  if (!verified || !keys.includes(verified.key)) return 'unknown'
  // As jose decides: expired when `exp` is at or before the current second.
  if (verified.payload.exp <= epochSeconds(deps.clock.now())) return undefined
  if (options.audience !== undefined && verified.payload.aud !== options.audience) return undefined
  return verified.payload
}

function rememberVerified(deps: TokenDeps, token: string, verified: Verified): void {
  let cache = verifiedByDeps.get(deps)
  if (!cache) verifiedByDeps.set(deps, (cache = new LRUCache({ max: VERIFIED_MAX })))
  cache.set(token, verified)
}

export type TokenDeps = { db: Database; keys: ServerKeys; clock: Clock; issuerUrl: string; revocations?: RevocationCache | undefined }

/**
 * Signs the access token: RS256, no `kid` in the header, exactly the spec's claims; a sandbox client's
 * token also says `sandbox: true`, so that no verifier can take a test for a real check. Signed only with
 * the deployment's key in force (SigningKeyNotInForceError otherwise: a 500, never a token that another
 * instance or an integrator's cached key would refuse).
 */
export async function signAgeToken(deps: TokenDeps, verification: Verification, client: { sandbox: boolean }): Promise<string> {
  const key = await deps.keys.signing.signer()
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
  // Signed by the key's own signer (OpenSSL where it loads), written as jose's SignJWT writes it.
  return compactJwt({ alg: ALGORITHM, typ: 'JWT' }, claims, key.sign)
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
  if (token.length > MAX_TOKEN_LENGTH) return undefined
  const keys = await deps.keys.signing.verificationKeys()
  let payload = alreadyVerified(deps, token, keys, options)
  if (payload === undefined) return undefined
  if (payload === 'unknown') {
    // One exact spelling of each token: base64url decoders skip padding and whitespace, so without this
    // `token==` or a space inside the signature would validate as the same token. A token remembered as
    // verified is that very string, so it passed this already (the test was 5% of a cached validation's CPU).
    if (!COMPACT_JWS.test(token)) return undefined
    payload = await verifySignature(deps, token, keys, options)
    if (payload === undefined) return undefined
  }
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

/** jose's verification of the token under each key in use, in order; the claims when one verifies and they have our shape. */
async function verifySignature(deps: TokenDeps, token: string, keys: CryptoKey[], options: { audience?: string }): Promise<AgeTokenClaimsType | undefined> {
  for (const key of keys) {
    let payload: unknown
    try {
      ;({ payload } = await jwtVerify(token, key, {
        algorithms: [ALGORITHM],
        issuer: deps.issuerUrl,
        currentDate: deps.clock.now(),
        requiredClaims: ['iat', 'exp', 'sub', 'aud'],
        ...(options.audience !== undefined && { audience: options.audience }),
      }))
    } catch (cause) {
      // Only a signature made by another key is worth trying the next key for.
      if (cause instanceof joseErrors.JWSSignatureVerificationFailed) continue
      if (cause instanceof joseErrors.JOSEError || cause instanceof TypeError) return undefined
      throw cause
    }
    if (!claimsShape.Check(payload)) return undefined
    rememberVerified(deps, token, { payload, key })
    return payload
  }
  return undefined
}
