import packageJson from '../package.json' with { type: 'json' }
import { serveAdminSocket } from './admin-socket.ts'
import { createHandler } from './app.tsx'
import { startServices } from './boot.ts'
import type { Config } from './config.ts'
import type { MigrationReport } from './db/migrate.ts'
import type { AppDeps } from './deps.ts'
import { pruneDashboardSessions } from './dashboard/sessions.ts'
import { serverError } from './errors.ts'
import { forgetInstance, pruneInstanceReports, REPORT_EVERY_MS } from './keys/instance-reports.ts'
import { recordServerAddresses } from './ops/server-addresses.ts'
import { buildCommit } from './lib/build-commit.ts'
import { describeError } from './lib/log.ts'
import { MAX_MULTIPART_BYTES } from './lib/strict-request.ts'
import { pruneExpiredCodes } from './oauth/codes.ts'
import { pruneExpiredPushedRequests } from './oauth/pushed-requests.ts'
import { pruneExpiredPasskeys } from './passkeys/store.ts'
import { rememberPeer } from './ratelimit/peer.ts'
import { pruneRateLimits } from './ratelimit/limits.ts'
import { pruneExpiredPasses } from './verification/age-pass.ts'
import { pruneExpiredSessions } from './verification/sessions.ts'
import { startWebhookWorker } from './webhooks/delivery.ts'
import { refreshTrustSources } from './credentials/trust/trust-sources.ts'
import { startWorkers, watchParent, workerIndex } from './ops/workers.ts'
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'

const PRUNE_EVERY_MS = 10 * 60_000
/** How often the server looks for imported trust lists due for a refresh (CREDENTIAL_TRUST_REFRESH_HOURS says when one is). */
const TRUST_REFRESH_CHECK_MS = 5 * 60_000
/** Codes are kept an hour past expiry so a late replay is still recognised and revokes its tokens. */
const KEEP_EXPIRED_MS = 60 * 60_000

/**
 * Deletes expired codes, pushed requests, verification sessions, age passes, passkeys, dashboard sessions and
 * past rate-limit windows; audit rows and usage stay.
 */
export async function pruneExpired(deps: AppDeps): Promise<void> {
  const before = new Date(deps.clock.now().getTime() - KEEP_EXPIRED_MS)
  await pruneExpiredCodes(deps.db, before)
  await pruneExpiredPushedRequests(deps.db, before)
  await pruneExpiredSessions(deps.db, before)
  await pruneExpiredPasses(deps.db, before)
  await pruneExpiredPasskeys(deps.db, before)
  await pruneDashboardSessions(deps.db, before)
  await pruneRateLimits(deps.db, before)
  await pruneInstanceReports(deps.db, before)
}

/** The `migrations` log line's fields: how many this start applied, the first and last of them, and the total. */
export function migrationFields({ applied, total }: MigrationReport): Record<string, unknown> {
  return { applied: applied.length, ...(applied.length > 0 && { first: applied[0], last: applied.at(-1) }), total }
}

/**
 * Runs the HTTP server until SIGTERM or SIGINT, then stops accepting, finishes, and closes the database.
 * With WORKERS above 1, this first process migrates and loads the keys, then starts the other workers
 * (src/ops/workers.ts); all of them listen on the same port and the kernel spreads connections.
 */
export async function runServer(config: Config): Promise<void> {
  const services = await startServices(config, { estimator: true, syncDemoClient: true })
  const { deps } = services
  const primary = workerIndex() === 0
  // What this start applied, in one line: a start that migrated says so (the other workers found it done).
  if (primary && services.migrations) deps.log.info('migrations', migrationFields(services.migrations))
  // The address that CLI commands put in the links they print.
  if (primary) await recordServerAddresses(deps)
  // Every process reads the key in force again and says which key it signs with, for `keys show` and
  // `keys rotate`; a rotation is also heard at once by NOTIFY (src/keys/signing-keys.ts).
  const instance = { id: randomUUID(), host: hostname(), pid: process.pid }
  await deps.keys.signing.reportAs(instance)
  const keyCheck = setInterval(
    () => deps.keys.signing.refresh().catch((cause) => deps.log.error('signing_key_read_failed', { message: String(cause) })),
    REPORT_EVERY_MS,
  )
  keyCheck.unref()
  const handler = createHandler(deps)
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    reusePort: config.workers > 1,
    // Never Bun's development error page (source, stack, working directory), whatever NODE_ENV says.
    development: false,
    error(cause) {
      deps.log.error('request_failed', { code: 'UNHANDLED', ...describeError(cause) })
      return new Response(JSON.stringify(serverError.toBody()), { status: 500, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } })
    },
    fetch: (request, server) => {
      rememberPeer(request, server.requestIP(request)?.address)
      return handler(request)
    },
    // Form posts with camera frames are the largest bodies (MAX_MULTIPART_BYTES); JSON routes bound their own.
    maxRequestBodySize: MAX_MULTIPART_BYTES + 64 * 1024,
  })
  const workers = primary && config.workers > 1 ? startWorkers(config.workers - 1, deps.log) : undefined
  deps.log.info('listening', {
    worker: workerIndex(),
    version: packageJson.version,
    commit: buildCommit(),
    host: config.host,
    port: config.port,
    public_url: config.publicUrl,
    database: config.database.kind,
    openapi: `${config.publicUrl}/api/openapi.json`,
    ...(config.demo && { demo: `${config.publicUrl}/demo` }),
  })

  const admin = config.database.kind === 'pglite' ? serveAdminSocket(services, config.database.dataDir) : undefined
  // Every instance delivers webhooks; leases in the outbox keep them from sending one attempt twice.
  const webhooks = startWebhookWorker(deps)

  // One process prunes: the deletes are the same whoever runs them.
  const prune = primary
    ? setInterval(() => pruneExpired(deps).catch((cause) => deps.log.error('prune_failed', { message: String(cause) })), PRUNE_EVERY_MS)
    : undefined
  prune?.unref()
  // Imported trust lists read again when due; each due list is taken by one instance (trust-sources.ts).
  const refreshTrust = primary
    ? setInterval(() => refreshTrustSources(deps).catch((cause) => deps.log.error('trust_refresh_failed', { message: String(cause) })), TRUST_REFRESH_CHECK_MS)
    : undefined
  refreshTrust?.unref()

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    deps.log.info('shutting_down', { signal })
    clearInterval(prune)
    clearInterval(refreshTrust)
    clearInterval(keyCheck)
    // Stop accepting, let in-flight requests finish, then close the pool (and the estimator's workers).
    await workers?.stop()
    await server.stop()
    await webhooks.stop()
    await admin?.stop()
    await forgetInstance(deps.db, instance.id).catch(() => {})
    await services.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
  if (!primary) watchParent(() => void shutdown('orphaned'))
}
