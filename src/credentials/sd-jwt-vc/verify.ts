import type { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { decodeJwt, decodeProtectedHeader, errors, importJWK, jwtVerify, type JWK } from 'jose'
import type { PresentationFailure, PresentationResult } from '../presentation.ts'
import { readStatusClaim, type Revocation } from '../status/revocation.ts'
import { issuerMatchesKey } from '../trust/issuer-binding.ts'
import { findIssuerKey, type IssuerKey, type TrustList } from '../trust/trust-list.ts'

export type { PresentationFailure, PresentationResult }

export type PresentationCheck = {
  trustList: TrustList
  /** Our nonce for this session's request; the holder's key-binding JWT must carry it. */
  nonce: string
  /** Our client id as the wallet saw it; the key-binding JWT's `aud`. */
  audience: string
  /** The age the session asks for. */
  threshold: number
  /** Seconds since the epoch. */
  now: number
  /** The `vct` values the answered query asked for (DCQL `vct_values`); a credential of another type is refused. */
  vctValues: readonly string[]
  /** How a credential's `status` reference is checked (Token Status List); required, so that no caller skips it. */
  revocation: Revocation
}

/** A key-binding JWT older than this is not an answer to this request (OpenID4VP: fresh per presentation). */
const KEY_BINDING_MAX_AGE_S = 5 * 60
const CLOCK_SKEW_S = 60

/**
 * Verifies an SD-JWT VC presentation (draft-ietf-oauth-sd-jwt-vc) proving an age: the issuer's ES256
 * signature by a key in the trust list, the validity period, the holder's key-binding JWT over our nonce
 * and audience, and the disclosed `age_equal_or_over` claim for the threshold (or a higher age, which
 * implies it). Only that claim is read; nothing of the credential is returned or kept.
 */
export async function verifySdJwtAgePresentation(presentation: string, check: PresentationCheck): Promise<PresentationResult> {
  let issuer: IssuerKey | undefined
  try {
    issuer = findIssuerKey(check.trustList, decodeProtectedHeader(presentation.split('~')[0]!), new Date(check.now * 1000))
  } catch {
    return { valid: false, failure: 'malformed' }
  }
  if (!issuer) return { valid: false, failure: 'untrusted_issuer' }
  const issuerKey = issuer.jwk

  // Loaded at first use: a server whose visitors never present one does not hold the library.
  const [{ digest, ES256 }, { SDJwtVcInstance }] = await Promise.all([import('@sd-jwt/crypto-nodejs'), import('@sd-jwt/sd-jwt-vc')])
  const sdjwt = new SDJwtVcInstance({
    hasher: digest,
    verifier: await ES256.getVerifier(issuerKey),
    // The holder's key is the one the issuer bound into the credential (cnf.jwk), never one it chose.
    kbVerifier: async (data, signature, payload) => {
      const holderKey = (payload as { cnf?: { jwk?: JWK } }).cnf?.jwk
      return holderKey ? (await ES256.getVerifier(holderKey))(data, signature) : false
    },
    // The library's own status check (verifyStatus, run by SDJwtVcInstance.verify) would fetch with the global
    // fetch, unbounded and following redirects; it is never called (see `verifyWithoutFetching`), and this
    // fetcher stays as a second lock. Status is checked by `check.revocation`, last.
    statusListFetcher: async () => {
      throw new Error('status lists are not fetched here')
    },
    loadTypeMetadataFormat: false,
  })
  // Each stage has one meaning when it fails, so that no failure is read out of a library's message.
  const issuerJwt = presentation.split('~')[0]!
  const issued = await checkIssuerSignature(issuerJwt, issuerKey, check.now)
  if (issued) return { valid: false, failure: issued }
  // The signature holds, so `iss` is the issuer's word: it must be an issuer this key may speak for.
  if (!(await issuerMatchesKey(decodeJwt(issuerJwt).iss, issuer))) return { valid: false, failure: 'untrusted_issuer' }
  let verified: Awaited<ReturnType<SDJwtVcInstance['verify']>>
  try {
    verified = await verifyWithoutFetching(sdjwt).call(sdjwt, presentation, { keyBindingNonce: check.nonce, currentDate: check.now, skewSeconds: CLOCK_SKEW_S })
  } catch {
    // The issuer's signature and validity hold (above): what fails here is the holder's part, the
    // disclosures or the key-binding JWT over them. Its nonce is read unverified only to say which.
    return { valid: false, failure: keyBindingNonce(presentation) === check.nonce ? 'key_binding' : 'wrong_nonce' }
  }
  const kb = verified.kb?.payload
  if (!kb) return { valid: false, failure: 'key_binding' }
  if (kb.aud !== check.audience) return { valid: false, failure: 'wrong_audience' }
  if (typeof kb.iat !== 'number' || kb.iat > check.now + CLOCK_SKEW_S || kb.iat < check.now - KEY_BINDING_MAX_AGE_S) {
    return { valid: false, failure: 'key_binding' }
  }
  // Read only once the issuer's signature holds: the type is the issuer's word, not the holder's.
  const payload = verified.payload as Record<string, unknown>
  if (typeof payload.vct !== 'string' || !check.vctValues.includes(payload.vct)) return { valid: false, failure: 'wrong_credential' }
  const proven = readAgeClaim(payload, check.threshold)
  if (!proven.valid) return proven
  // Network last: only a presentation that passed every local check, and so names an address its trusted
  // issuer signed, makes us fetch anything.
  return checkStatus(payload.status, check.revocation, proven)
}

/**
 * SDJwtVcInstance.verify is SDJwtInstance.verify (the issuer's signature, the disclosures, the key-binding JWT)
 * followed by the library's status list fetch and type metadata fetch; this is the first part alone, to be
 * called on our instance, so that nothing of the library reaches the network.
 */
function verifyWithoutFetching(instance: SDJwtVcInstance): SDJwtVcInstance['verify'] {
  const base: unknown = Object.getPrototypeOf(Object.getPrototypeOf(instance)).verify
  if (typeof base !== 'function' || base === instance.verify) throw new TypeError('@sd-jwt/sd-jwt-vc is not built as this verifier expects (SDJwtVcInstance extends SDJwtInstance)')
  return base as SDJwtVcInstance['verify']
}

/** The credential's `status` (draft-ietf-oauth-status-list §6.2), checked once all else holds; see `readStatusClaim`. */
async function checkStatus(status: unknown, revocation: Revocation, proven: PresentationResult): Promise<PresentationResult> {
  const claim = readStatusClaim(status)
  if (claim.kind === 'none') return proven
  if (claim.kind === 'malformed') return { valid: false, failure: 'malformed' }
  if (claim.kind === 'unsupported') return { valid: false, failure: 'status_unavailable' }
  const verdict = await revocation.status(claim.reference, 'jwt')
  if (verdict === 'valid') return proven
  return { valid: false, failure: verdict === 'invalid' ? 'revoked' : verdict === 'suspended' ? 'suspended' : 'status_unavailable' }
}

/**
 * `age_equal_or_over: { "18": true }`. A disclosed higher age that is true proves the threshold too; a
 * lower one, or false, does not. Missing entirely: the wallet disclosed nothing we can use.
 */
function readAgeClaim(payload: Record<string, unknown>, threshold: number): PresentationResult {
  const claim = payload.age_equal_or_over
  const disclosed = claim && typeof claim === 'object' ? Object.entries(claim as Record<string, unknown>).filter(([age]) => /^[1-9][0-9]?$/.test(age)) : []
  if (disclosed.length === 0) return { valid: false, failure: 'claim_missing' }
  const proven = disclosed.filter(([age, value]) => value === true && Number(age) >= threshold)
  if (proven.length === 0) return { valid: false, failure: 'under_threshold' }
  return { valid: true, ageOver: threshold }
}

/**
 * The issuer-signed JWT, checked on its own with jose, whose errors carry codes: its ES256 signature by the
 * trusted key, then `exp`, `nbf` and `iat` at `now` (with the skew we allow). Undefined when it holds.
 */
async function checkIssuerSignature(jwt: string, issuerKey: JWK, now: number): Promise<PresentationFailure | undefined> {
  try {
    await jwtVerify(jwt, await importJWK(issuerKey, 'ES256'), { algorithms: ['ES256'], currentDate: new Date(now * 1000), clockTolerance: CLOCK_SKEW_S })
    return undefined
  } catch (cause) {
    if (cause instanceof errors.JWSSignatureVerificationFailed) return 'invalid_signature'
    if (cause instanceof errors.JWTExpired) return 'expired'
    // jose names the claim: a credential not valid yet (`nbf`) or issued in the future (`iat`).
    if (cause instanceof errors.JWTClaimValidationFailed && (cause.claim === 'nbf' || cause.claim === 'iat')) return 'expired'
    return 'malformed'
  }
}

/** The `nonce` of the presentation's key-binding JWT (the last `~` part), unverified; undefined if none. */
function keyBindingNonce(presentation: string): unknown {
  try {
    return decodeJwt(presentation.slice(presentation.lastIndexOf('~') + 1)).nonce
  } catch {
    return undefined
  }
}
