/**
 * Settles with `work`, or with `onTimeout()` once `ms` have passed, whichever comes first. The work is
 * not cancelled (a query cannot be), only no longer awaited; the timer never outlives the race.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => T): Promise<T> {
  let timer: Timer | undefined
  const deadline = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(onTimeout()), ms)))
  try {
    return await Promise.race([work, deadline])
  } finally {
    clearTimeout(timer)
  }
}
