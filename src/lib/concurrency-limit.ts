/** A place taken from a {@link ConcurrencyLimit}; calling it gives the place back (once, however often called). */
export type Release = () => void

export type ConcurrencyLimit = {
  /** A place for `key`, or undefined when all `max`, or the key's `maxPerKey`, are taken: the caller refuses rather than waits. */
  tryAcquire(key?: string): Release | undefined
  readonly inUse: number
}

/**
 * At most `max` holders at a time, and at most `maxPerKey` of them with the same key (an address), without
 * a queue: work that would wait for a place is refused at once, so that nothing waiting holds memory (a
 * request body, a socket) while it waits, and one holder cannot take every place.
 */
export function createConcurrencyLimit(max: number, maxPerKey = max): ConcurrencyLimit {
  let inUse = 0
  const byKey = new Map<string, number>()
  return {
    tryAcquire(key = '') {
      const held = byKey.get(key) ?? 0
      if (inUse >= max || held >= maxPerKey) return undefined
      inUse++
      byKey.set(key, held + 1)
      let released = false
      return () => {
        if (released) return
        released = true
        inUse--
        const left = byKey.get(key)! - 1
        if (left > 0) byKey.set(key, left)
        else byKey.delete(key)
      }
    },
    get inUse() {
      return inUse
    },
  }
}
