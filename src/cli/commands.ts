import pkg from '../../package.json' with { type: 'json' }
import { audit } from './audit.ts'
import { clients } from './clients.ts'
import type { AnswerCommand, Command, Flags, OptionTable } from './command.ts'
import { dev } from './dev.ts'
import { estimator } from './estimator.ts'
import { keys } from './keys.ts'
import { migrate } from './migrate.ts'
import { didYouMean, optionsOf, readCommandLine, readLeniently, unknownOptions, UsageError } from './parse.ts'
import { serve } from './serve.ts'
import { trust } from './trust.ts'
import { usage } from './usage.ts'
import { users } from './users.ts'
import { webhooks } from './webhooks.ts'

/** From package.json, imported so that `bun build --compile` embeds it in the binary. */
export const VERSION = pkg.version

const help: AnswerCommand = { kind: 'answer', name: 'help', usage: 'help, --help, -h                        this text', subcommands: null, options: {} }

const version: AnswerCommand = {
  kind: 'answer',
  name: 'version',
  usage: 'version, --version, -v                  the version, and the commit it was built from',
  subcommands: [],
  options: {},
}

/** Every command, in the order of the help text; each declares its own flags (src/cli/<command>.ts). */
export const COMMANDS: readonly Command[] = [serve, migrate, clients, audit, usage, users, keys, webhooks, trust, estimator, dev, help, version]

const byName = new Map(COMMANDS.map((command) => [command.name, command]))

export const HELP = `ofage ${VERSION} — self-hosted age verification

Usage: ofage [command] [--json]
${COMMANDS.map((command) => `  ${command.usage}`).join('\n')}

Configuration comes from the environment (DATABASE_URL, DATA_DIR, SIGNING_KEY_FILE, …): every variable is in
docs/deploy.md, "Configuration reference".`

/** A command line's command, its subcommand (or argument), and whether it asks for --help or --version. */
export type CommandWord = { name: string; command: Command | undefined; sub: string | undefined; help: boolean; version: boolean }

/**
 * Finds the command of a command line, leniently: the first word that, read with that command's own flags,
 * is the first word that is no option or option's value (`clients list --json`, or `--json clients list`).
 * Without one, the first such word read with the shared flags names an unknown command; none at all is `serve`.
 */
export function findCommand(argv: string[]): CommandWord {
  for (const word of argv) {
    const command = byName.get(word)
    if (!command) continue
    const read = readLeniently(argv, optionsOf(command))
    if (read.positionals[0] === word) return { name: word, command, sub: read.positionals[1], help: read.help, version: read.version }
  }
  const read = readLeniently(argv, optionsOf(serve))
  const name = read.positionals[0] ?? serve.name
  return { name, command: byName.get(name), sub: read.positionals[1], help: read.help, version: read.version }
}

/** A command line as parsed: its command, the words after the command's name, and the flags its table read. */
export type ParsedCommandLine = { command: Command; words: string[]; flags: Flags<OptionTable> }

/**
 * Parses a command line strictly, before anything is opened: an unknown command, an unknown option (a flag
 * of another command is one), a missing value, an unknown or missing subcommand is a {@link UsageError}
 * that names it, with a suggestion when one is close.
 */
export function parseCommandLine(argv: string[]): ParsedCommandLine {
  const { name, command } = findCommand(argv)
  if (!command) {
    // `--prot 8080`: an option that no command takes is the mistake to name, not the "command" 8080.
    const everyFlag = Object.assign({}, ...COMMANDS.map(optionsOf)) as OptionTable
    const unknown = unknownOptions(argv, everyFlag)[0]
    if (unknown) throw new UsageError(`unknown option ${unknown}${didYouMean(unknown, Object.keys(everyFlag).map((flag) => `--${flag}`))}`)
    throw new UsageError(`unknown command "${name}"${didYouMean(name, [...byName.keys()])}`)
  }
  return { command, ...readCommandLine(command, argv) }
}
