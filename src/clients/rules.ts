import { RuleError } from '../errors.ts'
import { readHttpUrl } from '../lib/http-url.ts'
import { minimumClientFaceBuffer } from './face-buffer.ts'

/** A client's redirect URIs are a short list an operator reads, not a store: bounded, so no form can grow a row without end. */
export const MAX_REDIRECT_URIS = 50

export function checkRedirectUriCount(count: number): void {
  if (count > MAX_REDIRECT_URIS) throw new RuleError('redirect_uris_too_many', `a client has at most ${MAX_REDIRECT_URIS} redirect URIs`)
}

/** RFC 6749 §3.1.2: an absolute URI without a fragment; compared later as an exact string. */
export function checkRedirectUri(uri: string): void {
  readHttpUrl('redirect URI', uri)
}

/**
 * Shown as a link on the page: the same rules as a redirect URI, since both send the visitor to the site.
 * Kept as the URL parser writes it, so no stray whitespace or unescaped character reaches the href.
 */
export function readHomeUrl(url: string | null | undefined): string | null | undefined {
  if (url == null) return url
  return readHttpUrl('home URL', url).href
}

export function checkMinAge(minAge: number | null | undefined): void {
  if (minAge != null && !(Number.isInteger(minAge) && minAge >= 1 && minAge <= 99)) {
    throw new RuleError('min_age_range', 'min_age must be an integer from 1 to 99')
  }
}

export function checkLimit(limit: number | null | undefined): void {
  if (limit != null && !(Number.isInteger(limit) && limit >= 0)) {
    throw new RuleError('limit_range', 'verification_limit must be a whole number of verifications, or none')
  }
}

export function checkFaceBuffer(buffer: number | null | undefined): void {
  if (buffer != null && !(Number.isInteger(buffer) && buffer >= 0 && buffer <= 30)) {
    throw new RuleError('face_buffer_range', 'face_buffer must be a whole number of years from 0 to 30, or none')
  }
}

/**
 * A client's face buffer may only raise the default (face-buffer.ts `minimumClientFaceBuffer`): for every
 * threshold it may ask for, from its minimum age, and never under the deployment's FACE_AGE_BUFFER.
 */
export function checkFaceBufferFloor(buffer: number | null, minAge: number | null, deploymentBuffer: number | undefined): void {
  if (buffer === null) return
  const least = minimumClientFaceBuffer(minAge, deploymentBuffer)
  if (buffer >= least.years) return
  const range = minAge === null ? 'without a minimum age it may ask for any age from 1 (set min_age to narrow that)' : `its minimum age is ${minAge}`
  throw new RuleError(
    'face_buffer_under_floor',
    `face_buffer ${buffer} is under the default of ${least.years} years for age ${least.threshold}, which this client may ask for (${range}): a client may only raise it`,
  )
}
