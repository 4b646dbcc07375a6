import { LRUCache } from 'lru-cache'

/** What a load gives the cache: a value and the time (ms since the epoch) it stops being good, or why there is none. */
export type Loaded<V, F extends string> = { value: V; until: number } | F

type Entry<V> = { value: V; until: number }
type Load<V, F extends string> = () => Promise<Loaded<V, F>>

/** A load's failure, carried through lru-cache's fetch to everyone waiting on it (a rejected fetch is not kept). */
class LoadFailed<F extends string> extends Error {
  constructor(readonly failure: F) {
    super(failure)
  }
}

/**
 * Values loaded by key (a status list, a CRL: whatever the network gave once and says how long it holds), kept
 * until their own `until`, bounded in entries and, with `sizeOf`, in bytes; the least recently used go first.
 * Loads of one key at once share one (a burst of presentations fetches a list once). A failure is handed to
 * everyone waiting on that load and never kept: the next call loads again.
 *
 * lru-cache keeps them (issue 33: its LRU order, byte bound and shared fetches in place of ours), on our clock,
 * read at every look (`ttlResolution: 0`), so that a test's clock moves it.
 */
export function createExpiringCache<V, F extends string>(options: { now: () => number; maxEntries: number; maxBytes?: number; sizeOf?: (value: V) => number }) {
  const { sizeOf, maxBytes } = options
  const cache = new LRUCache<string, Entry<V>, Load<V, F>>({
    max: options.maxEntries,
    ...(maxBytes !== undefined && sizeOf ? { maxSize: maxBytes, sizeCalculation: (entry: Entry<V>) => Math.max(1, sizeOf(entry.value)) } : {}),
    perf: { now: options.now },
    ttlResolution: 0,
    fetchMethod: async (_key, _stale, { options: set, context: load }) => {
      const loaded = await load()
      if (typeof loaded === 'string') throw new LoadFailed(loaded)
      // lru-cache's entry is stale once now - start > ttl; ours is good while now < until. (A ttl of 0 would
      // mean for ever: one good for no time is kept for a millisecond and dropped by `get` below.)
      set.ttl = Math.max(1, loaded.until - options.now() - 1)
      return loaded
    },
  })

  async function get(key: string, load: Load<V, F>): Promise<V | F> {
    const status: LRUCache.Status<string, Entry<V>, Load<V, F>> = {}
    let entry: Entry<V> | undefined
    try {
      entry = await cache.fetch(key, { context: load, status })
    } catch (error) {
      if (error instanceof LoadFailed) return error.failure as F
      throw error
    }
    if (entry === undefined) throw new Error(`expiring cache: no value for ${key}`)
    if (options.now() < entry.until) return entry.value
    // Over already: handed to the callers of its load, never kept; one kept that has ended is loaded again.
    if (cache.peek(key, { allowStale: true }) === entry) cache.delete(key)
    return status.fetch === 'hit' ? get(key, load) : entry.value
  }

  return { get }
}
