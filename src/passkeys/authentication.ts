import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import type { Database } from '../db/client.ts'
import type { Clock } from '../lib/clock.ts'
import { consumePasskeyChallenge, storePasskeyChallenge, type ChallengePurpose } from './challenge.ts'
import { answeredChallenge, type AuthenticationResponse, type PasskeyFailure } from './model.ts'
import { PASSKEY_CHALLENGE_LIFETIME_MS, type RelyingParty } from './relying-party.ts'
import { advanceCounter, findPasskey, type Passkey } from './store.ts'
import { verifyAssertion } from './webauthn.ts'

type AuthenticationDeps = { db: Database; clock: Clock }

type AssertionPurpose = Exclude<ChallengePurpose, { kind: 'register' }>

/** A verified assertion: the saved passkey, and the person key its authenticator returned as user handle. */
export type VerifiedPasskey = { passkey: Passkey; personKey: string }

/**
 * Options for `navigator.credentials.get()`: no credential list, so the browser offers every passkey it
 * holds for us (they are discoverable), and user verification required, so a passkey proves its holder
 * unlocked the device, not only that someone touched it.
 */
export async function createAuthenticationOptions(
  deps: AuthenticationDeps,
  input: { sessionIdHash: string; rp: RelyingParty; purpose: AssertionPurpose },
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  // Loaded at first use, as every verification method's library: a server that never sees one does not hold it.
  const { generateAuthenticationOptions } = await import('@simplewebauthn/server')
  const options = await generateAuthenticationOptions({
    rpID: input.rp.id,
    allowCredentials: [],
    userVerification: 'required',
    timeout: PASSKEY_CHALLENGE_LIFETIME_MS,
  })
  await storePasskeyChallenge(deps, input.sessionIdHash, input.purpose, options.challenge)
  return options
}

/**
 * Checks an assertion: it answers this session's live challenge for this purpose (used up here, so it
 * works once), comes from a saved passkey, is signed by its key with user verification, and its signature
 * counter moved forward (when the authenticator keeps one: synced passkeys report 0). Whether the passkey
 * covers the page's request is a separate question ({@link passkeyCovers}).
 */
export async function verifyPasskeyAssertion(
  deps: AuthenticationDeps,
  input: { sessionIdHash: string; rp: RelyingParty; purpose: AssertionPurpose; response: AuthenticationResponse },
): Promise<{ verified: true } & VerifiedPasskey | { verified: false; failure: PasskeyFailure }> {
  const { response } = input
  const challenge = answeredChallenge(response.response.clientDataJSON)
  if (!challenge) return { verified: false, failure: 'invalid_response' }
  if (!(await consumePasskeyChallenge(deps, input.sessionIdHash, input.purpose, challenge))) return { verified: false, failure: 'challenge_expired' }
  const passkey = await findPasskey(deps.db, response.id)
  if (!passkey) return { verified: false, failure: 'unknown_passkey' }
  const counter = await verifyAssertion(input.rp, challenge, response, passkey)
  if (counter === undefined) return { verified: false, failure: 'invalid_response' }
  if (!(await advanceCounter(deps.db, passkey, counter))) return { verified: false, failure: 'invalid_response' }
  // The user handle is not covered by the signature (WebAuthn §6.3.3): it only picks which pseudonym the
  // holder of a valid passkey is shown under, and a handle is a 256-bit secret nobody else knows.
  const personKey = decodeUserHandle(response.response.userHandle)
  if (!personKey) return { verified: false, failure: 'invalid_response' }
  return { verified: true, passkey: { ...passkey, signCount: counter }, personKey }
}

/**
 * Whether a saved passkey may stand in for a check on this page: current, old enough, sandbox rule of age
 * passes, and made by a way the client accepts (`accepts`, the client's methods).
 */
export function passkeyCovers(
  passkey: Passkey,
  request: { ageRequired: number; sandboxClient: boolean; now: Date; accepts: (methodClass: Passkey['methodClass']) => boolean },
): PasskeyFailure | undefined {
  if (passkey.expiresAt.getTime() <= request.now.getTime()) return 'passkey_expired'
  if (passkey.sandbox && !request.sandboxClient) return 'sandbox_passkey'
  if (!request.accepts(passkey.methodClass)) return 'method_not_accepted'
  if (passkey.ageOver < request.ageRequired) return 'age_not_covered'
  return undefined
}

function decodeUserHandle(userHandle: string | null | undefined): string | undefined {
  if (!userHandle) return undefined
  const personKey = Buffer.from(userHandle, 'base64url').toString('utf8')
  return personKey.length > 0 && !personKey.includes('\uFFFD') ? personKey : undefined
}
