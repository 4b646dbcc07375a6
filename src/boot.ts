import type { Config } from './config.ts'
import { openDatabase } from './db/client.ts'
import { migrateDatabase } from './db/migrate.ts'
import { ensureDemoClient } from './demo/demo-client.ts'
import type { AppDeps } from './deps.ts'
import { loadServerKeys } from './keys/server-keys.ts'
import { systemClock, type Clock } from './lib/clock.ts'
import { jsonLogger, type Logger } from './lib/log.ts'
import { createMetrics } from './ops/metrics.ts'

export type Services = { deps: AppDeps; close(): Promise<void> }

/**
 * Opens the database, applies migrations and loads the keys: what the server, the CLI and the tests
 * all need before they can call a service. Anything that fails closes what was opened.
 */
export async function startServices(
  config: Config,
  options: { clock?: Clock; log?: Logger; holder?: string } = {},
): Promise<Services> {
  const clock = options.clock ?? systemClock
  const open = await openDatabase(config.database, { holder: options.holder ?? 'the ofage server' })
  try {
    await migrateDatabase(open)
    const keys = await loadServerKeys(open.db, config.signingKeyFile, clock.now())
    const deps: AppDeps = { config, db: open.db, keys, clock, log: options.log ?? jsonLogger(), metrics: createMetrics() }
    if (config.demo) await ensureDemoClient(deps)
    return { deps, close: open.close }
  } catch (cause) {
    await open.close().catch(() => {})
    throw cause
  }
}
