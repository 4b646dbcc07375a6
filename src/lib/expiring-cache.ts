/** What a load gives the cache: a value and the time (ms since the epoch) it stops being good, or why there is none. */
export type Loaded<V, F extends string> = { value: V; until: number } | F

/**
 * Values loaded by key (a status list, a CRL: whatever the network gave once and says how long it holds), kept
 * until their own `until`, bounded in entries and, with `sizeOf`, in bytes; the least recently used go first.
 * Loads of one key at once share one (a burst of presentations fetches a list once). A failure is handed to
 * everyone waiting on that load and never kept: the next call loads again.
 */
export function createExpiringCache<V, F extends string>(options: { now: () => number; maxEntries: number; maxBytes?: number; sizeOf?: (value: V) => number }) {
  const entries = new Map<string, { value: V; until: number }>()
  const inFlight = new Map<string, Promise<V | F>>()
  const sizeOf = options.sizeOf ?? (() => 0)

  function remember(key: string, entry: { value: V; until: number }) {
    entries.set(key, entry)
    let bytes = [...entries.values()].reduce((sum, { value }) => sum + sizeOf(value), 0)
    for (const [oldest, { value }] of entries) {
      if (entries.size <= options.maxEntries && bytes <= (options.maxBytes ?? Infinity)) break
      entries.delete(oldest)
      bytes -= sizeOf(value)
    }
  }

  return {
    get(key: string, load: () => Promise<Loaded<V, F>>): Promise<V | F> {
      const cached = entries.get(key)
      entries.delete(key)
      if (cached && options.now() < cached.until) {
        // Used again: the last to be evicted.
        entries.set(key, cached)
        return Promise.resolve(cached.value)
      }
      const pending = inFlight.get(key)
      if (pending) return pending
      const loading = load()
        .then((loaded) => {
          if (typeof loaded === 'string') return loaded
          remember(key, loaded)
          return loaded.value
        })
        .finally(() => inFlight.delete(key))
      inFlight.set(key, loading)
      return loading
    },
  }
}
