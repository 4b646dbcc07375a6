/** Time as the services see it. Injected everywhere so tests can freeze and advance it instead of sleeping. */
export type Clock = { now(): Date }

export const systemClock: Clock = { now: () => new Date() }

/** A clock that stands still until advanced: for tests and benchmarks. */
export function fixedClock(start: Date | string = '2026-11-22T12:00:00.000Z') {
  let current = new Date(start).getTime()
  return {
    now: () => new Date(current),
    advance(ms: number) {
      current += ms
    },
    set(to: Date | string) {
      current = new Date(to).getTime()
    },
  }
}

/** Seconds since the epoch, as JWT claims count time (RFC 7519 §2 NumericDate). */
export function epochSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000)
}
