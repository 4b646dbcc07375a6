/** Why a presentation was refused; callers switch on these, never on messages. */
export type PresentationFailure =
  | 'malformed'
  /** Not the credential the answered query asked for (another mdoc doc type, another SD-JWT `vct`). */
  | 'wrong_credential'
  | 'untrusted_issuer'
  | 'invalid_signature'
  | 'expired'
  | 'key_binding'
  | 'wrong_nonce'
  | 'wrong_audience'
  | 'claim_missing'
  | 'under_threshold'

/** The one thing a verified age presentation tells us: the holder is at least `ageOver` years old. */
export type PresentationResult = { valid: true; ageOver: number } | { valid: false; failure: PresentationFailure }
