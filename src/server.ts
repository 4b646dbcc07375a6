import packageJson from '../package.json' with { type: 'json' }
import { serveAdminSocket } from './admin-socket.ts'
import { createHandler } from './app.tsx'
import { startServices } from './boot.ts'
import type { CommandRunner } from './cli/command.ts'
import type { Config } from './config.ts'
import type { MigrationReport } from './db/migrate.ts'
import { serverError } from './errors.ts'
import { forgetInstance } from './keys/instance-reports.ts'
import { startBackgroundJobs } from './jobs/background-jobs.ts'
import { recordServerAddresses } from './ops/server-addresses.ts'
import { buildCommit } from './lib/build-commit.ts'
import { describeError } from './lib/log.ts'
import { MAX_MULTIPART_BYTES } from './lib/strict-request.ts'
import { readPeersFrom } from './ratelimit/peer.ts'
import { startWorkers, watchParent, workerIndex } from './ops/workers.ts'
import { staticKeyRoutes } from './keys/routes.ts'
import type { PublicKeyForms } from './keys/signing-key.ts'
import { transportSecurityHeader } from './web/headers.ts'
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'

/** The `migrations` log line's fields: how many this start applied, the first and last of them, and the total. */
export function migrationFields({ applied, total }: MigrationReport): Record<string, unknown> {
  return { applied: applied.length, ...(applied.length > 0 && { first: applied[0], last: applied.at(-1) }), total }
}

/**
 * Runs the HTTP server until SIGTERM or SIGINT, then stops accepting, finishes, and closes the database.
 * With WORKERS above 1, this first process migrates and loads the keys, then starts the other workers
 * (src/ops/workers.ts); all of them listen on the same port and the kernel spreads connections. On the
 * embedded store it runs, with `commands`, the command lines that `ofage` commands send to its admin socket.
 */
export async function runServer(config: Config, { commands }: { commands: CommandRunner }): Promise<void> {
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
  const handler = createHandler(deps)
  const hsts = transportSecurityHeader(config)
  const firstKey = await deps.keys.signing.published()
  const options = {
    // The key set and the PEM key, answered by Bun without the app; swapped at each change of the key in force.
    routes: staticKeyRoutes(firstKey, hsts),
    port: config.port,
    hostname: config.host,
    reusePort: config.workers > 1,
    // Never Bun's development error page (source, stack, working directory), whatever NODE_ENV says.
    development: false,
    error(cause) {
      deps.log.error('request_failed', { code: 'UNHANDLED', ...describeError(cause) })
      return new Response(JSON.stringify(serverError.toBody()), { status: 500, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } })
    },
    fetch: (request) => handler(request),
    // Form posts with camera frames are the largest bodies (MAX_MULTIPART_BYTES); JSON routes bound their own.
    maxRequestBodySize: MAX_MULTIPART_BYTES + 64 * 1024,
  } satisfies Parameters<typeof Bun.serve>[0]
  const server = Bun.serve(options)
  const publish = (key: PublicKeyForms) => server.reload({ ...options, routes: staticKeyRoutes(key, hsts) })
  const stopPublishing = deps.keys.signing.onPublished(publish)
  // A change heard between the first read and the subscription is published now.
  const keyNow = await deps.keys.signing.published()
  if (keyNow.thumbprint !== firstKey.thumbprint) publish(keyNow)
  readPeersFrom(server)
  const workers = primary && config.workers > 1 ? startWorkers(config.workers - 1, deps.log) : undefined
  deps.log.info('listening', {
    worker: workerIndex(),
    version: packageJson.version,
    commit: buildCommit(),
    host: config.host,
    port: config.port,
    public_url: config.publicUrl,
    database: config.database.kind,
    signs_with: deps.keys.signing.signsWith ?? null,
    openapi: `${config.publicUrl}/api/openapi.json`,
    ...(config.demo && { demo: `${config.publicUrl}/demo` }),
  })

  const admin = config.database.kind === 'pglite' ? serveAdminSocket(services, config.database.dataDir, commands) : undefined
  const jobs = startBackgroundJobs(deps, { primary })

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    deps.log.info('shutting_down', { signal })
    // Stop accepting, let in-flight requests finish, then close the pool (and the estimator's workers).
    await workers?.stop()
    stopPublishing()
    await server.stop()
    await jobs.stop()
    await admin?.stop()
    await forgetInstance(deps.db, instance.id).catch(() => {})
    await services.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
  if (!primary) watchParent(() => void shutdown('orphaned'))
}
