import { createCrlChecker, type CrlChecker, type CrlOutcome } from '../trust/crl.ts'
import type { TrustList } from '../trust/trust-list.ts'
import type { OutboundFetchOptions } from '../../lib/outbound-fetch.ts'
import { createStatusChecker, type StatusChecker, type StatusOutcome } from './status-check.ts'

export type { CrlChecker, StatusChecker }

/**
 * How a verifier learns whether a credential was revoked since it was issued: its Token Status List entry
 * (SD-JWT VC and mdoc alike), and the CRLs of the certificates its issuer signed with (mdoc). Required in every
 * check, so that no caller can forget it; built once per app, because both keep caches.
 */
export type Revocation = { status: StatusChecker; certificates: CrlChecker }

/** One checker of each kind, sharing the trust, the clock and the fetch limits. */
export function createRevocation(options: {
  trustList: () => TrustList
  now: () => Date
  fetch: OutboundFetchOptions
  onStatusOutcome?: (outcome: StatusOutcome) => void
  onCrlOutcome?: (outcome: CrlOutcome) => void
  /**
   * CREDENTIAL_REVOCATION_UNREACHABLE: `accept` takes a list that cannot be had (unreachable, stale, badly signed)
   * as saying nothing against the credential. The default, `refuse`, leaves it unavailable: refused, no attempt spent.
   */
  unreachable?: 'refuse' | 'accept'
}): Revocation {
  const status = createStatusChecker({ trustList: options.trustList, now: options.now, fetch: options.fetch, onOutcome: options.onStatusOutcome })
  const certificates = createCrlChecker({ now: options.now, fetch: options.fetch, onOutcome: options.onCrlOutcome })
  if (options.unreachable !== 'accept') return { status, certificates }
  return {
    status: async (reference, form) => {
      const verdict = await status(reference, form)
      return verdict === 'unavailable' ? 'valid' : verdict
    },
    certificates: async (chain) => {
      const verdict = await certificates(chain)
      return verdict === 'unavailable' ? 'good' : verdict
    },
  }
}

/**
 * A `status` claim as draft-ietf-oauth-status-list §6 writes it (a JSON object for SD-JWT VC, a CBOR map in an
 * mdoc's MSO): absent, one `status_list` reference, or something we cannot check. A reference must be an
 * integer `idx` >= 0 and a string `uri`; anything else there is `malformed`. A `status` naming only another
 * mechanism (ISO 18013-5's identifier list, a future registration) is `unsupported`: the issuer says the
 * credential can be revoked and we cannot tell whether it was, so it is refused (as unavailable, not the
 * visitor's fault).
 */
export type StatusClaim = { kind: 'none' } | { kind: 'status_list'; reference: { idx: number; uri: string } } | { kind: 'malformed' } | { kind: 'unsupported' }

export function readStatusClaim(status: unknown): StatusClaim {
  if (status === undefined) return { kind: 'none' }
  const member = (value: unknown, name: string): unknown => (value instanceof Map ? value.get(name) : isObject(value) ? (value as Record<string, unknown>)[name] : undefined)
  if (!(status instanceof Map) && !isObject(status)) return { kind: 'malformed' }
  const list = member(status, 'status_list')
  if (list === undefined) return { kind: 'unsupported' }
  if (!(list instanceof Map) && !isObject(list)) return { kind: 'malformed' }
  const idx = member(list, 'idx')
  const uri = member(list, 'uri')
  if (typeof idx !== 'number' || !Number.isSafeInteger(idx) || idx < 0 || typeof uri !== 'string' || uri.length === 0) return { kind: 'malformed' }
  return { kind: 'status_list', reference: { idx, uri } }
}

const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
