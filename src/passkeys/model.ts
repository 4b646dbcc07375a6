import { Type, type Static } from '@sinclair/typebox'

/**
 * What the page's script posts: a PublicKeyCredential's JSON form (WebAuthn L3 §5.1.8 `toJSON()`). Only the
 * shape is checked here, with bounds; @simplewebauthn/server checks the content.
 */
const base64url = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+$' })
const credentialId = base64url(1400)
const extensionResults = Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 16 })

export const RegistrationResponseModel = Type.Object({
  id: credentialId,
  rawId: credentialId,
  type: Type.Literal('public-key'),
  response: Type.Object({
    clientDataJSON: base64url(4096),
    attestationObject: base64url(8192),
    transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 8 })),
    authenticatorData: Type.Optional(base64url(4096)),
    publicKey: Type.Optional(base64url(4096)),
    publicKeyAlgorithm: Type.Optional(Type.Integer()),
  }),
  authenticatorAttachment: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
  clientExtensionResults: extensionResults,
})

export const AuthenticationResponseModel = Type.Object({
  id: credentialId,
  rawId: credentialId,
  type: Type.Literal('public-key'),
  response: Type.Object({
    clientDataJSON: base64url(4096),
    authenticatorData: base64url(4096),
    signature: base64url(1024),
    // Absent or null only for a non-discoverable credential, which we never create; refused later.
    userHandle: Type.Optional(Type.Union([base64url(128), Type.Null()])),
  }),
  authenticatorAttachment: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
  clientExtensionResults: extensionResults,
})

export type RegistrationResponse = Static<typeof RegistrationResponseModel>
export type AuthenticationResponse = Static<typeof AuthenticationResponseModel>

/**
 * Why a passkey ceremony did not pass, as a closed set the routes map to words and statuses:
 * - `challenge_expired`: the answer is not for this page's live challenge (late, replayed, another page's);
 * - `invalid_response`: malformed, a bad signature, no user verification, or a counter that went back;
 * - `unknown_passkey`: no passkey with this id is saved (deleted, expired and pruned, or another service's);
 * - `passkey_expired`: the check it stands for is older than the passkey lifetime;
 * - `age_not_covered`: it proves a lower age than this page asks for;
 * - `sandbox_passkey`: saved after a sandbox check, shown to a production site;
 * - `method_not_accepted`: the site does not take passkeys, or not the way the passkey's own check was made;
 * - `no_age_pass` / `pass_too_old`: saving needs a recent check in this browser;
 * - `already_saved`: this credential is saved already.
 */
export type PasskeyFailure =
  | 'challenge_expired'
  | 'invalid_response'
  | 'unknown_passkey'
  | 'passkey_expired'
  | 'age_not_covered'
  | 'sandbox_passkey'
  | 'method_not_accepted'
  | 'no_age_pass'
  | 'pass_too_old'
  | 'already_saved'

/** The challenge a response answers, read from its clientDataJSON; undefined when that is not readable. */
export function answeredChallenge(clientDataJSON: string): string | undefined {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
    const challenge = (data as { challenge?: unknown } | null)?.challenge
    return typeof challenge === 'string' ? challenge : undefined
  } catch {
    return undefined
  }
}
