import { randomBytes, X509Certificate } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { and, asc, eq, lte, sql } from 'drizzle-orm'
import type { Config } from '../../config.ts'
import type { Database } from '../../db/client.ts'
import { trustAnchors, trustSources, type TrustSourceKind } from '../../db/schema.ts'
import { OAuthError } from '../../errors.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Logger } from '../../lib/log.ts'
import { fetchBounded } from '../../lib/outbound-fetch.ts'
import { readTrustSource, type ListSigners, type ReadSource } from './published-lists.ts'
import { PEM_CERTIFICATE } from './trust-list.ts'
import { announceTrustChange } from './trust-store.ts'

type SourceDeps = { db: Database; clock: Clock; config: Config; log: Logger }

/** A published list is a few megabytes at most (the EU's lists, a VICAL of every North American IACA). */
const MAX_LIST_BYTES = 16 * 1024 * 1024
const FETCH_TIMEOUT_MS = 30_000
/** After a failed refresh, the next try; the copy in force stays meanwhile. */
const RETRY_AFTER_MS = 60 * 60_000

export type TrustSourceRow = typeof trustSources.$inferSelect

/** What `ofage trust list` shows of a source. */
export type TrustSourceSummary = TrustSourceRow & { anchors: number }

/** Refused import or refresh: why, in words an operator can act on. The trust in force is untouched. */
export class TrustSourceError extends OAuthError {
  constructor(message: string) {
    super('invalid_request', message)
  }
}

/**
 * Imports a published list (`ofage trust import --vical|--etsi-tl FILE|URL`): read, its signature verified
 * against the configured list signer, and only then its roots put in force, all at once, and announced to
 * every instance. Importing a location again refreshes it. A list that fails any check changes nothing.
 */
export async function importTrustSource(deps: SourceDeps, source: { kind: TrustSourceKind; location: string }): Promise<TrustSourceSummary> {
  const location = normaliseLocation(source.location)
  const [existing] = await deps.db.select().from(trustSources).where(eq(trustSources.location, location))
  if (existing && existing.kind !== source.kind) throw new TrustSourceError(`${location} is already imported as ${existing.kind} (${existing.id})`)
  const read = await readLocation(deps, source.kind, location)
  if (!read.ok) throw new TrustSourceError(`${location} was not imported: ${read.reason}. The trust in force is unchanged.`)
  const id = existing?.id ?? `${source.kind === 'vical' ? 'vical' : 'tl'}_${randomBytes(5).toString('hex')}`
  await putInForce(deps, { id, kind: source.kind, location, existing }, read.list)
  const [imported] = await listTrustSources(deps.db, id)
  return imported!
}

/**
 * Refreshes the sources that are due (or all, with `all`): each read and verified again; a copy that is good
 * and not older than the one in force replaces it; otherwise the copy in force stays (a fetch that fails, a
 * signature that does not hold, a list older than ours: never fall open, never go back) and the error is
 * recorded for `ofage trust list`. One instance takes each due source (its next refresh is moved first).
 */
export async function refreshTrustSources(deps: SourceDeps, options: { all?: boolean } = {}): Promise<{ id: string; refreshed: boolean; error?: string }[]> {
  const now = deps.clock.now()
  const due = await deps.db
    .select()
    .from(trustSources)
    .where(options.all ? undefined : lte(trustSources.nextRefreshAt, now))
    .orderBy(asc(trustSources.nextRefreshAt))
  const results = []
  for (const source of due) {
    // Taken by moving its next refresh on, from the value read: of instances racing, one wins.
    const [taken] = await deps.db
      .update(trustSources)
      .set({ nextRefreshAt: new Date(now.getTime() + RETRY_AFTER_MS) })
      .where(and(eq(trustSources.id, source.id), eq(trustSources.nextRefreshAt, source.nextRefreshAt)))
      .returning({ id: trustSources.id })
    if (!taken) continue
    const read = await readLocation(deps, source.kind, source.location)
    const error = !read.ok ? read.reason : olderThanInForce(read.list, source)
    if (error !== undefined || !read.ok) {
      await deps.db.update(trustSources).set({ lastError: error, lastErrorAt: now }).where(eq(trustSources.id, source.id))
      deps.log.error('trust_refresh_failed', { source: source.id, kind: source.kind, reason: error })
      results.push({ id: source.id, refreshed: false, error })
      continue
    }
    await putInForce(deps, { id: source.id, kind: source.kind, location: source.location, existing: source }, read.list)
    deps.log.info('trust_refreshed', { source: source.id, kind: source.kind, anchors: read.list.anchors.length })
    results.push({ id: source.id, refreshed: true })
  }
  return results
}

/** Every imported source with the number of its roots, oldest import first; with `id`, that one only. */
export async function listTrustSources(db: Database, id?: string): Promise<TrustSourceSummary[]> {
  const rows = await db
    .select({ source: trustSources, anchors: sql<number>`(select count(*)::int from ${trustAnchors} where ${trustAnchors.sourceId} = ${trustSources.id})` })
    .from(trustSources)
    .where(id === undefined ? undefined : eq(trustSources.id, id))
    .orderBy(asc(trustSources.importedAt))
  return rows.map(({ source, anchors }) => ({ ...source, anchors: Number(anchors) }))
}

/** Removes a source and its roots, everywhere at once. */
export async function removeTrustSource(db: Database, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const removed = await tx.delete(trustSources).where(eq(trustSources.id, id)).returning({ id: trustSources.id })
    if (removed.length > 0) await announceTrustChange(tx)
    return removed.length > 0
  })
}

/** The copy in force is replaced whole, in one transaction: no instance ever reads half of the old and half of the new. */
async function putInForce(deps: SourceDeps, target: { id: string; kind: TrustSourceKind; location: string; existing: TrustSourceRow | undefined }, list: ReadSource): Promise<void> {
  const now = deps.clock.now()
  const seen = new Set<string>()
  const anchors = list.anchors.flatMap((anchor) => {
    const fingerprint = anchor.certificate.fingerprint256.replaceAll(':', '').toLowerCase()
    if (seen.has(fingerprint)) return []
    seen.add(fingerprint)
    return [{
      sourceId: target.id,
      fingerprint,
      certificate: anchor.certificate.raw.toString('base64'),
      formats: [...anchor.formats],
      docTypes: anchor.docTypes ? [...anchor.docTypes] : null,
      label: anchor.label,
      notAfter: new Date(anchor.certificate.validTo),
    }]
  })
  const values = {
    kind: target.kind,
    location: target.location,
    publisher: list.publisher,
    issuedAt: list.issuedAt,
    sequence: list.sequence ?? null,
    nextUpdate: list.nextUpdate ?? null,
    refreshedAt: now,
    lastError: null,
    lastErrorAt: null,
    nextRefreshAt: nextRefresh(now, deps.config.trust.refreshHours, list.nextUpdate),
  }
  await deps.db.transaction(async (tx) => {
    if (target.existing) await tx.update(trustSources).set(values).where(eq(trustSources.id, target.id))
    else await tx.insert(trustSources).values({ id: target.id, importedAt: now, ...values })
    await tx.delete(trustAnchors).where(eq(trustAnchors.sourceId, target.id))
    if (anchors.length > 0) await tx.insert(trustAnchors).values(anchors)
    await announceTrustChange(tx)
  })
}

/**
 * Every CREDENTIAL_TRUST_REFRESH_HOURS, or at the list's own next update when that comes first: a list past it
 * no longer imports (AAMVA's VICAL names the next day), so the schedule must fetch the new one by then.
 */
function nextRefresh(now: Date, refreshHours: number, nextUpdate: Date | undefined): Date {
  const regular = new Date(now.getTime() + refreshHours * 3_600_000)
  return nextUpdate && nextUpdate > now && nextUpdate < regular ? nextUpdate : regular
}

/** A list older than the copy in force is a replay (or a publisher's mistake): it is never put back in force. */
function olderThanInForce(list: ReadSource, inForce: TrustSourceRow): string | undefined {
  if (inForce.sequence !== null && list.sequence !== undefined && list.sequence < inForce.sequence) {
    return `the list read has sequence ${list.sequence}, older than ${inForce.sequence} in force`
  }
  if (list.issuedAt < inForce.issuedAt) return `the list read was issued ${list.issuedAt.toISOString()}, before the copy in force (${inForce.issuedAt.toISOString()})`
  return undefined
}

/** Reads and verifies a list from a file or an address; a failure is a reason, never an exception. */
async function readLocation(deps: SourceDeps, kind: TrustSourceKind, location: string): Promise<{ ok: true; list: ReadSource } | { ok: false; reason: string }> {
  let signers: ListSigners
  try {
    signers = await readSigners(deps.config, kind)
  } catch (cause) {
    return { ok: false, reason: cause instanceof Error ? cause.message : String(cause) }
  }
  let bytes: Uint8Array
  if (isUrl(location)) {
    const accept = kind === 'vical' ? 'application/cbor, application/octet-stream, */*' : 'application/xml, text/xml, */*'
    const fetched = await fetchBounded(location, { ...deps.config.outbound, accept, maxBytes: MAX_LIST_BYTES, timeoutMs: FETCH_TIMEOUT_MS })
    if (!fetched.ok) return { ok: false, reason: `could not be fetched (${fetched.failure})` }
    bytes = fetched.body
  } else {
    try {
      bytes = new Uint8Array(await readFile(location))
    } catch (cause) {
      return { ok: false, reason: `could not be read (${(cause as NodeJS.ErrnoException).code ?? 'error'})` }
    }
    if (bytes.length > MAX_LIST_BYTES) return { ok: false, reason: `is larger than ${MAX_LIST_BYTES} bytes` }
  }
  return readTrustSource(kind, bytes, signers, deps.clock.now())
}

/** The signers a list must be signed by, from the operator's configuration; read at each use, so a rotation needs no restart. */
async function readSigners(config: Config, kind: TrustSourceKind): Promise<ListSigners> {
  const [variable, file] = kind === 'vical' ? ['CREDENTIAL_VICAL_SIGNER_FILE', config.trust.vicalSignerFile] : ['CREDENTIAL_TRUSTED_LIST_SIGNER_FILE', config.trust.trustedListSignerFile]
  if (!file) throw new Error(`${variable} is not set: a list is imported only with the certificate its signature must chain to`)
  const text = await readFile(file, 'utf8').catch(() => {
    throw new Error(`${variable} (${file}) could not be read`)
  })
  const certificates = (text.match(PEM_CERTIFICATE) ?? []).map((pem) => new X509Certificate(pem))
  if (certificates.length === 0) throw new Error(`${variable} (${file}) holds no PEM certificate`)
  return certificates
}

const isUrl = (location: string) => /^https?:\/\//i.test(location)

/** A URL as the URL parser writes it (so one list is not imported twice under two spellings); a path as given. */
function normaliseLocation(location: string): string {
  if (!isUrl(location)) return resolve(location)
  const url = URL.parse(location)
  if (!url) throw new TrustSourceError(`${location} is not a URL`)
  return url.href
}
