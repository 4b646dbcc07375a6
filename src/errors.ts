/**
 * The spec's error codes (SPEC.md §7) and their HTTP statuses, in one place. Services throw
 * {@link OAuthError}; the root app turns it into `{error, error_description}` with this status.
 */
export const errorStatus = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  expired_code: 400,
  code_already_used: 400,
  invalid_redirect_uri: 400,
  invalid_state: 400,
  // The spec leaves these two open but says token-exchange errors are 400 or 401; RFC 6749 §5.2 uses 400.
  unsupported_grant_type: 400,
  // RFC 6749 §4.1.2.1, for standard clients that send response_type: only `code` is served.
  unsupported_response_type: 400,
  client_suspended: 401,
  age_requirement_not_met: 403,
  payment_required: 402,
  // Only on the hosted page: the verification session is unknown, expired or another browser's; a form
  // post failed its CSRF check.
  session_expired: 400,
  forbidden: 403,
  not_found: 404,
  // Ours, for abuse limits (issue 10): the spec's error body with 429 and a Retry-After header.
  too_many_requests: 429,
  server_error: 500,
  // RFC 6749 §4.1.2.1's name; only on the gate's pages (src/gate/): the database it needs is out of reach.
  temporarily_unavailable: 503,
} as const

export type ErrorCode = keyof typeof errorStatus

export type ErrorBody = { error: ErrorCode; error_description: string }

/**
 * Cases of a code that the hosted page explains in a sentence of their own (src/i18n/messages.ts `errorHints`),
 * where the code's general sentence would leave the visitor or the site's developer guessing. The API
 * answers the code alone.
 */
export type ErrorHint = 'pushed_request_required'

export class OAuthError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly description: string,
    readonly hint?: ErrorHint,
  ) {
    super(`${code}: ${description}`)
    this.name = 'OAuthError'
  }

  get status(): number {
    return errorStatus[this.code]
  }

  toBody(): ErrorBody {
    return { error: this.code, error_description: this.description }
  }
}

/**
 * Why a rule of a client's settings (its registry entry, webhook endpoints, gate) refused a change: a closed
 * set that the dashboard and the CLI switch on, never the message's text, which may be reworded (issue 33).
 */
export type RuleProblem =
  | 'name_empty'
  | 'client_unknown'
  | 'url_invalid'
  | 'url_cleartext'
  | 'redirect_uri_required'
  | 'redirect_uri_last'
  | 'redirect_uri_of_gate'
  | 'redirect_uris_too_many'
  | 'secret_overlap_range'
  | 'min_age_range'
  | 'limit_range'
  | 'face_buffer_range'
  | 'face_buffer_under_floor'
  | 'methods_invalid'
  | 'webhook_url_internal'
  | 'webhook_event_unknown'
  | 'webhook_endpoint_known'
  | 'webhook_endpoints_full'
  | 'gate_host_invalid'
  | 'gate_age_range'
  | 'gate_age_under_min_age'
  | 'gate_ttl_range'

/** A rule's refusal: `invalid_request` (400) to the API, with the rule's {@link RuleProblem} for those who show it. */
export class RuleError extends OAuthError {
  constructor(
    readonly problem: RuleProblem,
    description: string,
  ) {
    super('invalid_request', description)
    this.name = 'RuleError'
  }
}

/** The problem code of a rule's refusal, or undefined for any other error. */
export function ruleProblem(error: unknown): RuleProblem | undefined {
  return error instanceof RuleError ? error.problem : undefined
}

/** The body of every 500: generic on purpose, the cause goes to the log only. */
export const serverError = new OAuthError('server_error', 'The server could not complete the request. Try again later.')

/**
 * Bad configuration: stops start-up (or a command) with one line naming the variable, never a stack trace
 * (DESIGN.md, "Configuration").
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable} ${message}`)
    this.name = 'ConfigError'
  }
}
