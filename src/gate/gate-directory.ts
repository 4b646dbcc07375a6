import type { Executor, OpenDatabase } from '../db/client.ts'
import type { Clock } from '../lib/clock.ts'
import { loadGateHosts, type GateHost } from './gate-hosts.ts'
import { findGateHost, indexGateHosts, type GateHostIndex, type GateMatch, type GateRequest } from './gate-match.ts'

/** Announced by the database whenever a client or a gated host changes (migration 0017's triggers). */
export const GATE_CHANNEL = 'ofage_gate'
/** However quiet the channel, the hosts are read again after this: a bound on any missed notice. */
const MAX_AGE_MS = 30_000

/** The gated hosts could not be read: the gate answers 503, never a pass. */
export class GateUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the gated hosts could not be read from the database', { cause })
    this.name = 'GateUnavailableError'
  }
}

/**
 * Each instance's copy of every gated host and its client's gate settings, so that `/gate/auth`, called on
 * every request of a gated site, does no database work for a valid cookie. A change is heard by NOTIFY when
 * it commits and the next check reads the hosts again; without a notice they are read again after 30 s.
 * A read that a notice overtook is used once but not kept, so a change is never hidden behind an older copy.
 */
export class GateDirectory {
  private hosts: GateHostIndex<GateHost> | undefined
  private loadedAt = 0
  private generation = 0
  private loading: Promise<GateHostIndex<GateHost>> | undefined

  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
  ) {}

  /** Listens for changes; each (re)start of listening forgets the copy, since notices sent meanwhile are lost. */
  async listen(database: Pick<OpenDatabase, 'listen'>): Promise<void> {
    await database.listen(GATE_CHANNEL, () => this.invalidate(), () => this.invalidate())
  }

  invalidate(): void {
    this.hosts = undefined
    this.generation++
  }

  /** The gated host a proxy's request is for (gate-match.ts); throws {@link GateUnavailableError} when the hosts cannot be read. */
  async find(request: GateRequest): Promise<GateMatch<GateHost>> {
    return findGateHost(await this.current(), request)
  }

  private async current(): Promise<GateHostIndex<GateHost>> {
    const now = this.clock.now().getTime()
    if (this.hosts && now - this.loadedAt < MAX_AGE_MS) return this.hosts
    this.loading ??= this.load(now).finally(() => (this.loading = undefined))
    return this.loading
  }

  private async load(now: number): Promise<GateHostIndex<GateHost>> {
    const generation = this.generation
    let hosts: GateHostIndex<GateHost>
    try {
      hosts = indexGateHosts(await loadGateHosts(this.db))
    } catch (cause) {
      throw new GateUnavailableError(cause)
    }
    if (generation === this.generation) {
      this.hosts = hosts
      this.loadedAt = now
    }
    return hosts
  }
}
