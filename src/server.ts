import { createApp } from './app.tsx'
import { startServices } from './boot.ts'
import type { Config } from './config.ts'
import { pruneExpiredCodes } from './oauth/codes.ts'

/** Codes are kept an hour past expiry so a late replay is still recognised and revokes its tokens. */
const PRUNE_EVERY_MS = 10 * 60_000
const KEEP_EXPIRED_CODES_MS = 60 * 60_000

/** Runs the HTTP server until SIGTERM or SIGINT, then stops accepting, finishes, and closes the database. */
export async function runServer(config: Config): Promise<void> {
  const services = await startServices(config)
  const { deps } = services
  const app = createApp(deps).listen({ port: config.port, maxRequestBodySize: 1024 * 1024 })
  deps.log.info('listening', {
    port: config.port,
    public_url: config.publicUrl,
    database: config.database.kind,
    openapi: `${config.publicUrl}/api/openapi.json`,
  })

  const prune = setInterval(() => {
    pruneExpiredCodes(deps.db, new Date(deps.clock.now().getTime() - KEEP_EXPIRED_CODES_MS)).catch((cause) =>
      deps.log.error('prune_failed', { message: String(cause) }),
    )
  }, PRUNE_EVERY_MS)
  prune.unref()

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    deps.log.info('shutting_down', { signal })
    clearInterval(prune)
    await app.stop()
    await services.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}
