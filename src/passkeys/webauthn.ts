import type { AuthenticationResponse, RegistrationResponse } from './model.ts'
import { PASSKEY_ALGORITHMS, type RelyingParty } from './relying-party.ts'

/** The largest counter a column holds (int4); authenticators count in uint32 (WebAuthn §6.1.1). */
const MAX_STORED_COUNTER = 2 ** 31 - 1

/**
 * A signature counter as stored: one above the column's range is kept at its top, which still lets a later,
 * higher counter pass.
 */
export function storedCounter(counter: number): number {
  return Math.min(counter, MAX_STORED_COUNTER)
}

/** A new credential as we keep it: its id, its COSE public key (base64url) and its signature counter. */
export type NewCredential = { id: string; publicKey: string; counter: number }

/** A saved credential, as {@link verifyAssertion} checks a signature against it. */
export type SavedCredential = { credentialId: string; publicKey: string; signCount: number }

/**
 * Checks a registration against the challenge it answers (already used up by the caller): our origin and
 * RP ID, user verification, one of our algorithms, attestation "none". Undefined for anything that fails:
 * the library throws for every malformed or failing response, and the holder can only try again.
 */
export async function verifyNewCredential(rp: RelyingParty, challenge: string, response: RegistrationResponse): Promise<NewCredential | undefined> {
  // Loaded at first use: a server that never sees a passkey does not hold the library.
  const { verifyRegistrationResponse } = await import('@simplewebauthn/server')
  try {
    const verified = await verifyRegistrationResponse({
      response: { ...response, authenticatorAttachment: undefined },
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
    })
    if (!verified.verified) return undefined
    const { credential } = verified.registrationInfo
    return { id: credential.id, publicKey: Buffer.from(credential.publicKey).toString('base64url'), counter: credential.counter }
  } catch {
    return undefined
  }
}

/**
 * Checks an assertion against the challenge it answers (already used up) and a saved credential: its
 * signature, our origin and RP ID, user verification, and a counter that moved forward (when the
 * authenticator keeps one: synced passkeys report 0). Returns the new counter, or undefined.
 */
export async function verifyAssertion(rp: RelyingParty, challenge: string, response: AuthenticationResponse, saved: SavedCredential): Promise<number | undefined> {
  const { verifyAuthenticationResponse } = await import('@simplewebauthn/server')
  try {
    const verified = await verifyAuthenticationResponse({
      // Where the authenticator sits is not checked, so it is not passed on (the library types it narrowly).
      response: { ...response, authenticatorAttachment: undefined, response: { ...response.response, userHandle: response.response.userHandle ?? undefined } },
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: saved.credentialId, publicKey: Buffer.from(saved.publicKey, 'base64url'), counter: saved.signCount },
      requireUserVerification: true,
    })
    return verified.verified ? verified.authenticationInfo.newCounter : undefined
  } catch {
    // Every malformed or failing assertion throws, a counter that did not move forward included.
    return undefined
  }
}
