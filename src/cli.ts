import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { adminSocketPath, forwardCommand } from './admin-socket.ts'
import { startServices, type Services } from './boot.ts'
import { consoleIo, HELP, options, parseCommandLine, runCommand, runEstimatorCommand, VERSION, type Io } from './commands.ts'
import { loadConfig, type Config } from './config.ts'
import { ConfigError } from './errors.ts'
import { runDevCommand } from './credentials/dev/command.ts'
import { NoSigningKeyYetError } from './keys/signing-key.ts'
import { buildCommit } from './lib/build-commit.ts'
import { HELP_HINT, UsageError } from './lib/command-line.ts'
import { silentLogger } from './lib/log.ts'
import { findServerAddresses } from './ops/server-addresses.ts'
import { runServer } from './server.ts'

export type { Io } from './commands.ts'

/**
 * Runs one command line and returns its exit status (-1: the server is running). `--version` and `--help`
 * answer before anything else, and a command line with a mistake is refused before anything is opened. A
 * command opens the database itself; when a running server holds the embedded store, the command goes to
 * that server over its admin socket instead, since PGlite allows one process per data directory. Tests
 * pass their own `io`.
 */
export async function runCli(argv: string[], config: Config, io: Io = consoleIo): Promise<number> {
  // Lenient here: only to find the command and --help/--version; each command then parses strictly.
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: false })
  const [command = 'serve', sub] = positionals
  if (values.version || command === 'version') {
    io.out(`ofage ${VERSION} (commit ${buildCommit()})`)
    return 0
  }
  // `estimator eval --help` is the evaluation's own help; the test issuer and wallet open no database.
  if (command === 'estimator' && (sub === 'eval' || !values.help)) return runEstimatorCommand(argv, io, config.face.workers)
  if (command === 'dev' && !values.help) return runDevCommand(argv, io, config.production)
  if (values.help || command === 'help') {
    io.out(HELP)
    return 0
  }
  try {
    parseCommandLine(argv)
  } catch (cause) {
    if (!(cause instanceof UsageError)) throw cause
    io.err(`ofage: ${cause.message}\n${HELP_HINT}`)
    return 2
  }
  if (command === 'serve') {
    await runServer(config)
    return -1
  }
  let services
  try {
    // `keys show` never generates the signing key: it shows the one the server has, or says there is none.
    services = await startServices(config, { holder: 'an ofage command', log: silentLogger, createSigningKey: command !== 'keys', serve: false })
  } catch (cause) {
    if (cause instanceof NoSigningKeyYetError) {
      io.err(`ofage: ${cause.message}`)
      return 1
    }
    const socket = config.database.kind === 'pglite' ? adminSocketPath(config.database.dataDir) : undefined
    if (cause instanceof ConfigError && cause.variable === 'DATA_DIR' && socket && existsSync(socket)) {
      return forwardCommand(socket, withAbsoluteFiles(argv), io)
    }
    throw cause
  }
  try {
    return await runCommand(await withServerAppUrl(services, [command, sub].join(' '), io), argv, io)
  } finally {
    await services.close()
  }
}

/**
 * The services a command runs with, with the app address the server recorded at its start: links a
 * command prints (`users create`, `users reset-password`) must lead to the server, whatever this shell's
 * APP_URL or PORT say. Before any server has started on this database there is nothing to read, and a
 * command that prints a link says which address it assumed.
 */
async function withServerAppUrl(services: Services, command: string, io: Io): Promise<Services> {
  const recorded = await findServerAddresses(services.deps.db)
  if (recorded) return { ...services, deps: { ...services.deps, config: { ...services.deps.config, appUrl: recorded.appUrl } } }
  if (command === 'users create' || command === 'users reset-password') {
    io.err(
      `ofage: note: no server has started on this database yet, so links use this shell's address (APP_URL=${services.deps.config.appUrl}); ` +
        'if the server will run elsewhere, replace the start of the link with its address.',
    )
  }
  return services
}

/**
 * The command line with `--logo FILE` and `--file PATH` as absolute paths: the server reads the file, from
 * wherever it was started, on behalf of a command typed here.
 */
export function withAbsoluteFiles(argv: string[]): string[] {
  return argv.map((arg, i) => {
    for (const option of ['--logo', '--file']) {
      if (arg.startsWith(`${option}=`) && arg !== `${option}=none`) return `${option}=${resolve(arg.slice(option.length + 1))}`
      if (argv[i - 1] === option && arg !== 'none') return resolve(arg)
    }
    return arg
  })
}

/** The process entry for `bun run cli`, `bun start` and the compiled binary: one clear line on failure. */
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
