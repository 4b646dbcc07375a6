import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server'
import type { Database } from '../db/client.ts'
import type { MethodClass } from '../db/schema.ts'
import type { Clock } from '../lib/clock.ts'
import { consumePasskeyChallenge, storePasskeyChallenge } from './challenge.ts'
import { answeredChallenge, type PasskeyFailure, type RegistrationResponse } from './model.ts'
import { PASSKEY_ALGORITHMS, PASSKEY_CHALLENGE_LIFETIME_MS, type RelyingParty } from './relying-party.ts'
import { insertPasskey, PASSKEY_LIFETIME_MS } from './store.ts'
import { verifyNewCredential } from './webauthn.ts'

type RegistrationDeps = { db: Database; clock: Clock }

/** The approved check a passkey will stand for: what an age pass knows about it. */
export type ProvenCheck = {
  /** The age pass's id: the registration's challenge is bound to it. */
  passId: string
  /** The person key behind the pairwise `sub`; it goes into the passkey's user handle, not into our rows. */
  personKey: string
  ageOver: number
  methodClass: MethodClass
  sandbox: boolean
  /** When the check took place: the passkey's lifetime counts from here. */
  provenAt: Date
}

/** WebAuthn §5.4.3: a user handle is at most 64 bytes. */
const MAX_USER_HANDLE_BYTES = 64

/** Whether a check is still recent enough to stand behind a new passkey. */
export function canSavePasskey(check: Pick<ProvenCheck, 'provenAt'>, now: Date): boolean {
  return check.provenAt.getTime() + PASSKEY_LIFETIME_MS > now.getTime()
}

/**
 * Options for `navigator.credentials.create()`: a discoverable credential (so "Use my passkey" needs no
 * user name), user verification required, no attestation (we trust no authenticator model, only the key).
 * The user handle is the person key, so the `sub` a site sees after re-verifying is the one it saw before.
 */
export async function createRegistrationOptions(
  deps: RegistrationDeps,
  input: { sessionIdHash: string; rp: RelyingParty; check: ProvenCheck; userName: string },
): Promise<PublicKeyCredentialCreationOptionsJSON | PasskeyFailure> {
  if (!canSavePasskey(input.check, deps.clock.now())) return 'pass_too_old'
  const userID = new TextEncoder().encode(input.check.personKey)
  // Person keys we mint are 43 characters; anything longer cannot be a handle, so it is no usable pass.
  if (userID.length > MAX_USER_HANDLE_BYTES) return 'no_age_pass'
  // Loaded at first use (see authentication.ts).
  const { generateRegistrationOptions } = await import('@simplewebauthn/server')
  const options = await generateRegistrationOptions({
    rpName: input.rp.name,
    rpID: input.rp.id,
    userID,
    userName: input.userName,
    userDisplayName: input.userName,
    timeout: PASSKEY_CHALLENGE_LIFETIME_MS,
    attestationType: 'none',
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  })
  await storePasskeyChallenge(deps, input.sessionIdHash, { kind: 'register', passId: input.check.passId }, options.challenge)
  return options
}

/**
 * Checks a new passkey against the session's registration challenge and saves its public key with what the
 * check proved, and nothing else.
 */
export async function registerPasskey(
  deps: RegistrationDeps,
  input: { sessionIdHash: string; rp: RelyingParty; check: ProvenCheck; response: RegistrationResponse },
): Promise<{ saved: true; credentialId: string } | { saved: false; failure: PasskeyFailure }> {
  if (!canSavePasskey(input.check, deps.clock.now())) return { saved: false, failure: 'pass_too_old' }
  const challenge = answeredChallenge(input.response.response.clientDataJSON)
  if (!challenge) return { saved: false, failure: 'invalid_response' }
  const purpose = { kind: 'register', passId: input.check.passId } as const
  if (!(await consumePasskeyChallenge(deps, input.sessionIdHash, purpose, challenge))) return { saved: false, failure: 'challenge_expired' }
  const credential = await verifyNewCredential(input.rp, challenge, input.response)
  if (!credential) return { saved: false, failure: 'invalid_response' }
  const inserted = await insertPasskey(deps.db, {
    credentialId: credential.id,
    publicKey: credential.publicKey,
    signCount: credential.counter,
    ageOver: input.check.ageOver,
    methodClass: input.check.methodClass,
    sandbox: input.check.sandbox,
    provenAt: input.check.provenAt,
  })
  return inserted ? { saved: true, credentialId: credential.id } : { saved: false, failure: 'already_saved' }
}
