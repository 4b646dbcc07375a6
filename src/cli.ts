import { runCli } from './cli/run.ts'
import { loadConfig } from './config.ts'
import { ConfigError } from './errors.ts'

/**
 * The process entry for `bun run cli`, `bun start` and the compiled binary: one command line (src/cli/),
 * its exit status, and one clear line on failure.
 */
export async function main(argv: string[]): Promise<void> {
  try {
    const status = await runCli(argv, loadConfig())
    if (status >= 0) process.exit(status)
  } catch (cause) {
    console.error(
      cause instanceof ConfigError
        ? `ofage: configuration error: ${cause.message}`
        : `ofage: ${cause instanceof Error ? cause.message : String(cause)}`,
    )
    process.exit(1)
  }
}

if (import.meta.main) await main(process.argv.slice(2))
