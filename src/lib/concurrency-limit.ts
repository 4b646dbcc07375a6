/** A place taken from a {@link ConcurrencyLimit}; calling it gives the place back (once, however often called). */
export type Release = () => void

export type ConcurrencyLimit = {
  /** A place, or undefined when all `max` are taken: the caller refuses rather than waits. */
  tryAcquire(): Release | undefined
  readonly inUse: number
}

/**
 * At most `max` holders at a time, without a queue: work that would wait for a place is refused at once,
 * so that nothing waiting holds memory (a request body, a socket) while it waits.
 */
export function createConcurrencyLimit(max: number): ConcurrencyLimit {
  let inUse = 0
  return {
    tryAcquire() {
      if (inUse >= max) return undefined
      inUse++
      let released = false
      return () => {
        if (released) return
        released = true
        inUse--
      }
    },
    get inUse() {
      return inUse
    },
  }
}
