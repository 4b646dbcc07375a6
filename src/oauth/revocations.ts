import { sql } from 'drizzle-orm'
import type { Executor, OpenDatabase } from '../db/client.ts'

/** The NOTIFY channel on which a revocation is announced to every instance. */
const CHANNEL = 'ofage_revocations'
/** Verifications remembered at most; the oldest are forgotten first. */
const MAX_ENTRIES = 100_000
/** However long its tokens live, a verification is looked up again after this: a bound on any missed notice. */
const MAX_AGE_MS = 30_000

/**
 * What token validation knows of verifications without asking the database: those found live, until their
 * tokens expire (or 30 s). A revocation is announced with NOTIFY in the transaction that revokes, so every
 * instance hears it when it commits and forgets the verification. Validation uses the cache only while
 * this instance listens; each (re)start of listening empties it, since notices sent meanwhile are lost.
 * A lookup that a notice overtook is not remembered (`generation`), so a revocation that commits while a
 * lookup is in flight is never cached as live.
 */
export class RevocationCache {
  private readonly live = new Map<string, number>()
  private listening = false
  private generation = 0

  /** Starts listening on the database's notices; validation keeps asking the database until it does. */
  async listen(database: Pick<OpenDatabase, 'listen'>): Promise<void> {
    await database.listen(CHANNEL, (transactionId) => this.forget(transactionId), () => {
      this.live.clear()
      this.generation++
      this.listening = true
    })
  }

  /** Whether the verification is known live at `now`; false means "ask the database". */
  isKnownLive(transactionId: string, now: number): boolean {
    const until = this.listening ? this.live.get(transactionId) : undefined
    return until !== undefined && until > now
  }

  /** The generation to hand back to {@link remember}, taken before the database is asked. */
  get current(): number {
    return this.generation
  }

  /** Remembers a verification the database found live, if no notice arrived since `generation`. */
  remember(transactionId: string, until: number, generation: number, now: number): void {
    if (!this.listening || generation !== this.generation) return
    this.live.delete(transactionId)
    this.live.set(transactionId, Math.min(until, now + MAX_AGE_MS))
    if (this.live.size > MAX_ENTRIES) this.live.delete(this.live.keys().next().value!)
  }

  /** Forgets a verification: on a notice, and at once in the instance that revoked it. */
  forget(transactionId: string): void {
    this.live.delete(transactionId)
    this.generation++
  }
}

/** Announces a revocation, in the revoking transaction: it is heard when, and only if, that commits. */
export async function announceRevocation(tx: Executor, transactionId: string): Promise<void> {
  await tx.execute(sql`select pg_notify(${CHANNEL}, ${transactionId})`)
}
