import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/log.ts'
import type { GateRequest } from './gate-match.ts'

/** A proxy asks on every request of its site: one line a minute per host and kind is enough to be seen. */
const EVERY_MS = 60_000
/** Keys are host names that some client gates (nothing else reaches a notice), but bounded all the same. */
const MAX_KEYS = 1000

/** A gate's answer, or a page's match: a host where one was found, the reason where it was ambiguous. */
type Noticed = { outcome: string; host?: { origin: string; clientId: string }; hostname?: string; reason?: string }

/**
 * Tells the operator, in the log, of a gate configuration that needs their hand: a host two entries could
 * answer (refused), and a proxy configuration that names no client (answered while the name is claimed by
 * one client alone, refused from the moment another claims it too).
 */
export function configurationNotices(deps: { log: Logger; clock: Clock }) {
  const last = new Map<string, number>()
  const due = (key: string) => {
    const now = deps.clock.now().getTime()
    if (now - (last.get(key) ?? -Infinity) < EVERY_MS) return false
    if (last.size >= MAX_KEYS) last.clear()
    last.set(key, now)
    return true
  }
  return (request: GateRequest, answer: Noticed) => {
    if (answer.outcome === 'ambiguous' && due(`ambiguous ${answer.hostname}`)) {
      deps.log.error('gate_host_ambiguous', { host: answer.hostname, reason: answer.reason })
    } else if (answer.host && request.clientId === undefined && due(`unnamed ${answer.host.origin}`)) {
      deps.log.info('gate_client_unnamed', {
        origin: answer.host.origin,
        client_id: answer.host.clientId,
        message: 'the proxy configuration names no client: add it as docs/gate.md shows, before another client claims this host name and the gate refuses it',
      })
    }
  }
}
