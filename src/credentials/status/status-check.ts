import type { TrustList } from '../trust/trust-list.ts'
import { fetchBounded, type FetchFailure, type OutboundFetchOptions } from '../../lib/outbound-fetch.ts'
import { createExpiringCache, type Loaded } from '../../lib/expiring-cache.ts'
import { readStatusList, statusAt, type ListFailure, type ListForm, type StatusList } from './status-list.ts'

/** A credential's `status.status_list` (draft-ietf-oauth-status-list §6.2, §6.3): where its status is kept. */
export type StatusReference = { idx: number; uri: string }

/**
 * What a credential's status comes to. `unavailable`: we could not learn it (the list unreachable, too slow,
 * unsigned by anyone we trust, expired...); the caller refuses, but the visitor is not to blame.
 */
export type StatusVerdict = 'valid' | 'invalid' | 'suspended' | 'unavailable'

/** A finer account of each check, for a metric: which list failed and how. */
export type StatusOutcome =
  | 'valid'
  | 'invalid'
  | 'suspended'
  /** A value other than VALID, INVALID or SUSPENDED: taken as invalid. */
  | 'unknown_status'
  /** The list has no entry at the credential's index: unavailable. */
  | 'index_out_of_range'
  | ListFailure
  | FetchFailure

export type StatusChecker = (reference: StatusReference, form: ListForm) => Promise<StatusVerdict>

export type StatusCheckerOptions = {
  trustList: () => TrustList
  now: () => Date
  fetch: OutboundFetchOptions
  onOutcome?: (outcome: StatusOutcome) => void
  /** Lists kept at most (the oldest used goes first); 256 if not given. */
  maxEntries?: number
}

/** §5.1 `ttl` is the issuer's to set; we keep a list at least this long, so that a tiny ttl cannot make us fetch per presentation. */
export const MIN_CACHE_S = 60
/** ...and at most this long, whatever the ttl: a revocation shows within a day. */
export const MAX_CACHE_S = 24 * 60 * 60
/** With no ttl at all. */
export const DEFAULT_CACHE_S = 5 * 60
/** The decompressed bytes the cache may hold, all lists together. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024

/** A list's response is a few kilobytes to a few hundred; one larger than this is not a status list. */
const DEFAULT_MAX_BYTES = 2 * 1024 * 1024

const MEDIA_TYPES: Record<ListForm, string> = { jwt: 'application/statuslist+jwt', cwt: 'application/statuslist+cwt' }

/**
 * A status checker: fetches (bounded, see `fetchBounded`), verifies and caches each Status List Token by
 * uri, and reads one credential's entry. The cache holds a list for its `ttl` (clamped to
 * [MIN_CACHE_S, MAX_CACHE_S]) but never past its `exp`; checks of one uri at once share one fetch. Failures are
 * not cached: the next presentation tries again (concurrent ones still share the attempt).
 */
export function createStatusChecker(options: StatusCheckerOptions): StatusChecker {
  const cache = createExpiringCache<StatusList, StatusOutcome>({
    now: () => options.now().getTime(),
    maxEntries: options.maxEntries ?? 256,
    maxBytes: MAX_CACHE_BYTES,
    sizeOf: (list) => list.bytes.length,
  })
  const report = (outcome: StatusOutcome) => options.onOutcome?.(outcome)

  async function load(reference: StatusReference, form: ListForm): Promise<Loaded<StatusList, StatusOutcome>> {
    const fetched = await fetchBounded(reference.uri, { maxBytes: DEFAULT_MAX_BYTES, ...options.fetch, accept: MEDIA_TYPES[form] })
    if (!fetched.ok) return fetched.failure
    // The time of verification is after the fetch: a list that expired while it came is expired.
    const now = options.now()
    const read = await readStatusList(fetched.body, form, { uri: reference.uri, trustList: options.trustList(), now })
    if (!read.ok) return read.failure
    const seconds = Math.min(Math.max(read.list.ttl ?? DEFAULT_CACHE_S, MIN_CACHE_S), MAX_CACHE_S)
    const until = Math.min(now.getTime() + seconds * 1000, read.list.exp === undefined ? Infinity : read.list.exp * 1000)
    return { value: read.list, until }
  }

  return async (reference, form) => {
    const list = await cache.get(`${form} ${reference.uri}`, () => load(reference, form))
    if (typeof list === 'string') {
      report(list)
      return 'unavailable'
    }
    const outcome = outcomeOf(statusAt(list, reference.idx))
    report(outcome)
    return VERDICTS[outcome]
  }
}

/**
 * §7.1: 0x00 VALID, 0x01 INVALID, 0x02 SUSPENDED; 0x03 is application-specific and 0x0C-0x0F reserved for it,
 * the rest for future registration. A value we do not know could mean anything the issuer wants, "revoked for
 * fraud" included: only VALID lets a credential through. An index past the end of the list is the issuer's
 * error, not the visitor's (the holder cannot change the signed index): unavailable, so that no attempt is spent.
 */
function outcomeOf(status: number | undefined): StatusOutcome {
  if (status === undefined) return 'index_out_of_range'
  if (status === 0) return 'valid'
  if (status === 1) return 'invalid'
  if (status === 2) return 'suspended'
  return 'unknown_status'
}

const VERDICTS: Record<StatusOutcome, StatusVerdict> = {
  valid: 'valid',
  invalid: 'invalid',
  suspended: 'suspended',
  unknown_status: 'invalid',
  index_out_of_range: 'unavailable',
  untrusted_list: 'unavailable',
  expired_list: 'unavailable',
  malformed_list: 'unavailable',
  refused_url: 'unavailable',
  refused_address: 'unavailable',
  unreachable: 'unavailable',
  timeout: 'unavailable',
  too_large: 'unavailable',
  http_status: 'unavailable',
}
