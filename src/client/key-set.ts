import { importJWK, type JWK } from 'jose'

/** The key as jose verifies with it. */
export type VerificationKey = Awaited<ReturnType<typeof importJWK>>

/** SPEC.md §8's advice to clients fetching the key set, which this cache follows. */
export const KEY_SET_RULES = { cacheMs: 24 * 60 * 60_000, fetchesPerMinute: 10, attempts: 3 } as const

/**
 * The service's single signing key (SPEC.md §4.5, §4.8), fetched from `jwks_uri` and kept 24 hours; at
 * most 10 fetches a minute, each tried up to 3 times. Tokens carry no `kid`, so the key is the set's one
 * key, never one chosen by a token's header.
 */
export class KeySet {
  private key: { value: VerificationKey; fetchedAt: number } | undefined
  private readonly fetchTimes: number[] = []
  private pending: Promise<VerificationKey | undefined> | undefined

  constructor(
    private readonly jwksUri: () => Promise<string>,
    private readonly fetcher: typeof fetch = fetch,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached key, or a freshly fetched one when none is cached, it is 24 hours old, or `refresh` asks. */
  async current(refresh = false): Promise<VerificationKey | undefined> {
    const cached = this.key
    if (cached && !refresh && this.now() - cached.fetchedAt < KEY_SET_RULES.cacheMs) return cached.value
    this.pending ??= this.fetchKey().finally(() => (this.pending = undefined))
    return (await this.pending) ?? cached?.value
  }

  private async fetchKey(): Promise<VerificationKey | undefined> {
    const now = this.now()
    while (this.fetchTimes.length > 0 && now - this.fetchTimes[0]! >= 60_000) this.fetchTimes.shift()
    if (this.fetchTimes.length >= KEY_SET_RULES.fetchesPerMinute) return undefined
    this.fetchTimes.push(now)
    const url = await this.jwksUri()
    for (let attempt = 1; attempt <= KEY_SET_RULES.attempts; attempt++) {
      try {
        const response = await this.fetcher(url, { headers: { accept: 'application/json' } })
        if (response.ok) {
          const { keys } = (await response.json()) as { keys?: JWK[] }
          if (Array.isArray(keys) && keys.length === 1) {
            const value = await importJWK(keys[0]!, 'RS256')
            this.key = { value, fetchedAt: this.now() }
            return value
          }
        }
      } catch {
        // A network failure is tried again, like a 5xx.
      }
      if (attempt < KEY_SET_RULES.attempts) await new Promise((resolve) => setTimeout(resolve, 200 * attempt))
    }
    return undefined
  }
}
