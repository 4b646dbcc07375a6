import { X509Certificate } from 'node:crypto'
import { statSync } from 'node:fs'
import { gt, sql } from 'drizzle-orm'
import type { Database, Executor } from '../../db/client.ts'
import { trustAnchors } from '../../db/schema.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Logger } from '../../lib/log.ts'
import { loadTrustList, type CredentialFormat, type ScopedAnchor, type TrustList } from './trust-list.ts'

/** The NOTIFY channel on which a change of imported trust is announced to every instance. */
export const TRUST_CHANNEL = 'ofage_trust'

/** However quiet the channel, the trust in force is read again after this: a bound on a missed notice or a file edit. */
const MAX_AGE_MS = 60_000

/**
 * The trust in force, as every verification reads it: the roots and keys of CREDENTIAL_TRUST_LIST, and the
 * roots the imported lists (`trust_anchors`) vouch for. Changes take effect without a restart: an import, a
 * refresh or a removal is announced on {@link TRUST_CHANNEL} and heard by every instance; the file is read
 * again when it changes on disk. What is read is kept at most a minute.
 */
export type TrustStore = {
  current(): Promise<TrustList>
  /** The trust last read, without waiting: for checks made inside a verification (a status list's signer), which read it already. */
  latest(): TrustList
  /** Forgets what was read, so the next verification reads again. */
  invalidate(): void
}

type StoreDeps = { db: Database; clock: Clock; log: Logger }

/**
 * A store over the static file (already read once at start, strictly: `initial`) and the database. A file
 * that later stops being readable, or names the test issuer in production, is logged and the last good copy
 * stays in force: a typo in an edit must not switch the method off, nor widen it.
 */
export function createTrustStore(deps: StoreDeps, options: { file: string; production: boolean; initial: TrustList }): TrustStore {
  let fileList = options.initial
  let fileStamp = stamp(options.file)
  let cached: { list: TrustList; readAt: number; generation: number } | undefined
  let last: TrustList = options.initial
  let loading: Promise<TrustList> | undefined
  let generation = 0

  function readFileIfChanged(): void {
    const now = stamp(options.file)
    if (now === fileStamp) return
    try {
      fileList = loadTrustList(options.file, { production: options.production })
      fileStamp = now
      deps.log.info('trust_list_reloaded', { roots: fileList.roots.length, keys: fileList.keys.length })
    } catch (cause) {
      fileStamp = now
      deps.log.error('trust_list_unreadable', { reason: cause instanceof Error ? cause.message : String(cause) })
    }
  }

  async function load(): Promise<TrustList> {
    const started = generation
    readFileIfChanged()
    const anchors = await readImportedAnchors(deps.db, deps.clock.now(), deps.log)
    const list: TrustList = { ...fileList, anchors }
    last = list
    // A notice that arrived while this read was under way may not be in it: keep it only if none did.
    if (started === generation) cached = { list, readAt: Date.now(), generation }
    return list
  }

  return {
    async current() {
      if (cached && cached.generation === generation && Date.now() - cached.readAt < MAX_AGE_MS) return cached.list
      loading ??= load().finally(() => {
        loading = undefined
      })
      return loading
    },
    latest: () => last,
    invalidate() {
      generation++
      cached = undefined
    },
  }
}

/** The imported roots current at `now`; a row that no longer parses is skipped and logged, never trusted. */
export async function readImportedAnchors(db: Database, now: Date, log?: Logger): Promise<ScopedAnchor[]> {
  const rows = await db.select().from(trustAnchors).where(gt(trustAnchors.notAfter, now))
  return rows.flatMap((row) => {
    try {
      const certificate = new X509Certificate(Buffer.from(row.certificate, 'base64'))
      return [{ certificate, formats: row.formats as CredentialFormat[], ...(row.docTypes && { docTypes: row.docTypes }) }]
    } catch {
      log?.error('trust_anchor_unreadable', { source: row.sourceId, fingerprint: row.fingerprint })
      return []
    }
  })
}

/** Announces a change of imported trust, in the changing transaction: heard when, and only if, it commits. */
export async function announceTrustChange(tx: Executor): Promise<void> {
  await tx.execute(sql`select pg_notify(${TRUST_CHANNEL}, 'changed')`)
}

function stamp(file: string): string {
  try {
    const stat = statSync(file)
    return `${stat.mtimeMs}:${stat.size}:${stat.ino}`
  } catch {
    return 'missing'
  }
}
