import { createHash } from 'node:crypto'
import { OAuthError } from '../errors.ts'
import { constantTimeEqual } from '../lib/crypto.ts'

/**
 * Proof Key for Code Exchange (RFC 7636), S256 only. A challenge sent with the authorization request
 * travels with the session to the code; the exchange must then present the verifier it was made from.
 */

/** RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is 43 characters of the base64url alphabet. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/
/** RFC 7636 §4.1: code_verifier = 43*128unreserved. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

/**
 * The challenge of an authorization request, or null when none was sent. `plain` is refused: it protects
 * nothing against a party that sees the authorization request (RFC 9700 §2.1.1), and a missing method
 * means `plain` (RFC 7636 §4.3).
 */
export function readCodeChallenge(challenge: string | undefined, method: string | undefined): string | null {
  if (challenge === undefined) {
    if (method !== undefined) throw new OAuthError('invalid_request', 'code_challenge_method was sent without a code_challenge')
    return null
  }
  if (method !== 'S256') throw new OAuthError('invalid_request', 'code_challenge_method must be S256')
  if (!S256_CHALLENGE.test(challenge)) throw new OAuthError('invalid_request', 'code_challenge must be 43 characters of base64url (S256)')
  return challenge
}

/**
 * Checks the exchange's `code_verifier` against the code's challenge. A verifier for a code issued without
 * a challenge is refused too: RFC 9700 §2.1.1 asks servers to stop a PKCE downgrade that way.
 */
export function checkCodeVerifier(challenge: string | null, verifier: string | undefined): void {
  if (challenge === null) {
    if (verifier !== undefined) throw new OAuthError('invalid_grant', 'code_verifier was sent, but the authorization request had no code_challenge')
    return
  }
  if (verifier === undefined) throw new OAuthError('invalid_request', 'code_verifier is required: the authorization request sent a code_challenge')
  // RFC 7636 §4.6: "If the values are not equal, an error response indicating invalid_grant MUST be returned."
  if (!isCodeVerifier(verifier) || !constantTimeEqual(s256(verifier), challenge)) {
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge')
  }
}

/** RFC 7636 §4.1: the shape of a verifier. */
export function isCodeVerifier(verifier: string): boolean {
  return VERIFIER.test(verifier)
}

/** RFC 7636 §4.2: the S256 challenge a verifier answers. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}
