/**
 * A small seeded generator (mulberry32), uniform in [0, 1): the same seed gives the same numbers. For
 * tests and benchmarks that must be repeatable; never for anything a visitor or an attacker could predict
 * to their gain (the service's own draws come from node:crypto).
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
