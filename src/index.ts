import { ConfigError, loadConfig } from './config.ts'
import { runServer } from './server.ts'

/** `bun start`: configuration → database → migrations → keys → HTTP server. */
try {
  await runServer(loadConfig())
} catch (cause) {
  console.error(
    cause instanceof ConfigError
      ? `ofage: configuration error: ${cause.message}`
      : `ofage: start-up failed: ${cause instanceof Error ? cause.message : String(cause)}`,
  )
  process.exit(1)
}
