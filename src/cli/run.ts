import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { adminSocketPath, forwardCommand } from '../admin-socket.ts'
import { startServices, type Services } from '../boot.ts'
import type { Config } from '../config.ts'
import { ConfigError, OAuthError } from '../errors.ts'
import { NoSigningKeyYetError } from '../keys/signing-key.ts'
import { buildCommit } from '../lib/build-commit.ts'
import { silentLogger } from '../lib/log.ts'
import { findServerAddresses } from '../ops/server-addresses.ts'
import { consoleIo, type Io } from './command.ts'
import { findCommand, HELP, parseCommandLine, VERSION } from './commands.ts'
import { HELP_HINT, UsageError } from './parse.ts'

/**
 * Runs one command line and returns its exit status (-1: the server is running). `--version` and `--help`
 * answer before anything else, and a command line with a mistake is refused before anything is opened. A
 * command opens the database itself; when a running server holds the embedded store, the command goes to
 * that server over its admin socket instead, since PGlite allows one process per data directory. Tests
 * pass their own `io`.
 */
export async function runCli(argv: string[], config: Config, io: Io = consoleIo): Promise<number> {
  // Lenient here: only to find the command and --help/--version; the command then parses strictly.
  const found = findCommand(argv)
  const { name, sub, help, version } = found
  if (version || name === 'version') {
    io.out(`ofage ${VERSION} (commit ${buildCommit()})`)
    return 0
  }
  // `estimator eval --help` is the evaluation's own help; the test issuer and wallet open no database.
  if (found.command?.kind === 'standalone' && (!help || found.command.ownHelp?.includes(sub!))) return found.command.run(argv, { io, config })
  if (help || name === 'help') {
    io.out(HELP)
    return 0
  }
  let parsed
  try {
    parsed = parseCommandLine(argv)
  } catch (cause) {
    if (!(cause instanceof UsageError)) throw cause
    io.err(`ofage: ${cause.message}\n${HELP_HINT}`)
    return 2
  }
  const { command, words } = parsed
  if (command.kind === 'server') {
    await command.run(config, runCommand)
    return -1
  }
  // help, version and the standalone commands have answered above.
  if (command.kind !== 'database') throw new UsageError(`"${command.name}" is not a command that runs against the database`)
  let services
  try {
    services = await startServices(config, { holder: 'an ofage command', log: silentLogger, createSigningKey: command.generatesSigningKey !== false, serve: false })
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
    const printsLinks = command.printsLinks?.includes(words[0]!) ?? false
    return await runCommand(await withServerAppUrl(services, printsLinks, io), argv, io)
  } finally {
    await services.close()
  }
}

/**
 * Parses a database command line (not `serve`, `help` or `version`) and runs it against open services;
 * returns the exit status. The admin socket runs the command lines it is sent with this.
 */
export async function runCommand(services: Services, argv: string[], io: Io): Promise<number> {
  try {
    const { command, words, flags } = parseCommandLine(argv)
    // serve, help, version, dev and estimator never reach an open database.
    if (command.kind !== 'database') throw new UsageError(`"${command.name}" is not a command that runs against the database`)
    const result = await command.run(services, { words, flags })
    io.out(flags.json ? JSON.stringify(result.json, null, 2) : result.text)
    return 0
  } catch (cause) {
    if (cause instanceof UsageError) {
      io.err(`ofage: ${cause.message}\n${HELP_HINT}`)
      return 2
    }
    if (cause instanceof OAuthError) {
      io.err(`ofage: ${cause.description}`)
      return 1
    }
    throw cause
  }
}

/**
 * The services a command runs with, with the app address the server recorded at its start: links a
 * command prints (`users create`, `users reset-password`) must lead to the server, whatever this shell's
 * APP_URL or PORT say. Before any server has started on this database there is nothing to read, and a
 * command that prints a link says which address it assumed.
 */
async function withServerAppUrl(services: Services, printsLinks: boolean, io: Io): Promise<Services> {
  const recorded = await findServerAddresses(services.deps.db)
  if (recorded) return { ...services, deps: { ...services.deps, config: { ...services.deps.config, appUrl: recorded.appUrl } } }
  if (printsLinks) {
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
