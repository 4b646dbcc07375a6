import type { Clock } from '../lib/clock.ts'
import { cookieValues, gateCookieName, GATE_COOKIE, openGatePass, type GatePass } from './gate-cookie.ts'
import { GateUnavailableError, type GateDirectory } from './gate-directory.ts'
import type { GateHost } from './gate-hosts.ts'
import type { GateMatch, GateRequest } from './gate-match.ts'

/** A pass dated this far ahead of our clock is still taken: instances' clocks differ a little. */
const CLOCK_SKEW_SECONDS = 60
/** Cookie values whose signature held, remembered so a visitor's next requests skip the HMAC and the JSON. */
const MAX_REMEMBERED = 10_000

export type GateAnswer =
  | { outcome: 'pass'; host: GateHost; pass: GatePass }
  /** No gate cookie, or none that counts here; `refused` when one was sent. */
  | { outcome: 'unverified' | 'refused'; host: GateHost }
  | { outcome: 'unknown_host' | 'suspended' | 'unavailable' }
  /** Two gated origins could answer, or a sandbox client is named where a live one gates: refused (403). */
  | { outcome: 'ambiguous'; hostname: string; reason: string }

export type GateCheckDeps = { gate: GateDirectory; keys: { gateKey: Uint8Array }; clock: Clock }

/**
 * The passes of cookie values whose signature held under a key, by value: a visitor sends the same cookie
 * with every request of a gated site. Only values that verified get in (a forged one costs its HMAC every
 * time and is never stored), so unauthenticated input cannot fill it; the oldest are forgotten past the
 * bound. What counts is still judged on each request against the host as it is now.
 */
const verifiedByKey = new WeakMap<Uint8Array, Map<string, GatePass>>()

function openRemembered(key: Uint8Array, value: string): GatePass | undefined {
  let verified = verifiedByKey.get(key)
  if (!verified) verifiedByKey.set(key, (verified = new Map()))
  const known = verified.get(value)
  if (known) return known
  const pass = openGatePass(key, value)
  if (!pass) return undefined
  if (verified.size >= MAX_REMEMBERED) verified.delete(verified.keys().next().value!)
  verified.set(value, pass)
  return pass
}

/**
 * Whether a request to a gated host carries a gate cookie that lets it through: made by us for this host's
 * client and this very origin, for at least the age the host asks for now, and within both its own expiry
 * and the client's lifetime as it is now (a shortened lifetime or a raised age applies to cookies already
 * out). No database work while the directory's copy is fresh.
 */
export async function checkGateRequest(deps: GateCheckDeps, request: GateRequest & { cookie: string | null }): Promise<GateAnswer> {
  let match: GateMatch<GateHost>
  try {
    match = await deps.gate.find(request)
  } catch (cause) {
    if (cause instanceof GateUnavailableError) return { outcome: 'unavailable' }
    throw cause
  }
  if (match.outcome !== 'found') return match
  const host = match.host
  if (!host.active) return { outcome: 'suspended' }
  const values = cookieValues(request.cookie, gateCookieName(host.origin, GATE_COOKIE))
  if (values.length === 0) return { outcome: 'unverified', host }
  const now = Math.floor(deps.clock.now().getTime() / 1000)
  for (const value of values) {
    const pass = openRemembered(deps.keys.gateKey, value)
    if (pass && passCounts(pass, host, now)) return { outcome: 'pass', host, pass }
  }
  return { outcome: 'refused', host }
}

function passCounts(pass: GatePass, host: GateHost, now: number): boolean {
  return (
    pass.clientId === host.clientId &&
    pass.origin === host.origin &&
    pass.ageOver >= host.ageRequired &&
    pass.issuedAt <= now + CLOCK_SKEW_SECONDS &&
    now < pass.expiresAt &&
    now < pass.issuedAt + host.ttlSeconds
  )
}
