/**
 * Remembers, for a while, the hashes of frames this instance has already judged, so that frames taken
 * from one session's capture and posted again to another (the cheapest replay) are refused. Only
 * SHA-256 digests, in memory: nothing from which a face could be recovered, and nothing written down.
 * Bounded: past `maxEntries` the oldest are forgotten first.
 */
export function createReplayGuard(options: { ttlMs: number; maxEntries: number }) {
  const seen = new Map<string, number>()

  function forgetExpired(now: number) {
    for (const [digest, expires] of seen) {
      if (expires > now && seen.size <= options.maxEntries) break
      seen.delete(digest)
    }
  }

  return {
    /** Records the digests and says whether any of them had been seen before (and not yet forgotten). */
    anySeen(digests: string[], now: number): boolean {
      forgetExpired(now)
      const replayed = digests.some((digest) => (seen.get(digest) ?? 0) > now)
      for (const digest of digests) {
        seen.delete(digest)
        seen.set(digest, now + options.ttlMs)
      }
      forgetExpired(now)
      return replayed
    },
  }
}
