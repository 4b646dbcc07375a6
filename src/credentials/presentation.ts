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
  /** Withdrawn by its issuer: its status list entry says INVALID, or its document signer's certificate is revoked. */
  'revoked',
  /** Its status list entry says SUSPENDED: withdrawn for now by its issuer. */
  'suspended',
  /** Its status (or its signer's revocation) could not be learnt right now: refused, and not the visitor's fault. */
  'status_unavailable',
] as const

export type PresentationFailure = (typeof PRESENTATION_FAILURES)[number]

/** What a request's answer can end in besides a verified presentation: the visitor declined in the wallet. */
export const CREDENTIAL_FAILURES = [...PRESENTATION_FAILURES, 'declined'] as const
export type CredentialFailure = (typeof CREDENTIAL_FAILURES)[number]

/** The one thing a verified age presentation tells us: the holder is at least `ageOver` years old. */
export type PresentationResult = { valid: true; ageOver: number } | { valid: false; failure: PresentationFailure }
