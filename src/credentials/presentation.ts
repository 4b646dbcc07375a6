/**
 * Why a presentation was refused; callers switch on these, never on messages. The list is the database's
 * `credential_failure` enum too (db/schema.ts), so a failure read back is one of these or nothing.
 */
export const PRESENTATION_FAILURES = [
  'malformed',
  /** Not the credential the answered query asked for (another mdoc doc type, another SD-JWT `vct`). */
  'wrong_credential',
  /** An answer in a protocol this request did not offer (Digital Credentials API `protocol`, response mode). */
  'wrong_protocol',
  /** An encrypted answer we cannot open: sealed to another key, tampered with, or in an algorithm we did not offer. */
  'undecryptable',
  'untrusted_issuer',
  'invalid_signature',
  'expired',
  'key_binding',
  'wrong_nonce',
  'wrong_audience',
  'claim_missing',
  'under_threshold',
  /** The issuer revoked the credential (its status list entry is INVALID), or the certificate it was signed with. */
  'revoked',
  /** The issuer suspended the credential for now (status list entry SUSPENDED). */
  'suspended',
  /**
   * The credential's revocation status could not be established (its status list or CRL unreachable, expired,
   * not signed by a trusted issuer; a status mechanism we do not support). Not the visitor's doing.
   */
  'status_unavailable',
] as const

export type PresentationFailure = (typeof PRESENTATION_FAILURES)[number]

/**
 * What a request's answer can end in besides a verified presentation: `declined`, the wallet answered without a
 * credential (the visitor declined in it, or it reported an error of its own: an OpenID4VP error response, an
 * ISO 18013-5 DeviceResponse status other than 0 or a DocumentError for what we asked). Nothing was shared, and
 * the visitor is not to blame.
 */
export const CREDENTIAL_FAILURES = [...PRESENTATION_FAILURES, 'declined'] as const
export type CredentialFailure = (typeof CREDENTIAL_FAILURES)[number]

/** A verified answer, or why not: a presentation's failure, or the wallet answered without a credential. */
export type AnswerResult = PresentationResult | { valid: false; failure: Extract<CredentialFailure, 'declined'> }

/** The one thing a verified age presentation tells us: the holder is at least `ageOver` years old. */
export type PresentationResult = { valid: true; ageOver: number } | { valid: false; failure: PresentationFailure }
