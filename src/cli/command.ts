import type { Services } from '../boot.ts'
import type { Config } from '../config.ts'
import type { Output } from './output.ts'

/** Where a command prints: the console, or the lines a test or the admin socket collects. */
export type Io = { out(text: string): void; err(text: string): void }

export const consoleIo: Io = { out: (text) => console.log(text), err: (text) => console.error(text) }

/** A command's flags, as `parseArgs` reads them. */
export type OptionTable = Readonly<Record<string, { readonly type: 'string' | 'boolean'; readonly multiple?: boolean; readonly short?: string }>>

/** The values `parseArgs` gives for a table: a boolean, a string, or every value of a repeatable flag. */
export type Flags<O extends OptionTable> = {
  [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : O[K] extends { multiple: true } ? string[] : string
}

/** The flags every command takes: the entry answers them before the command runs, wherever they stand. */
export const sharedOptions = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const satisfies OptionTable

/** `--json`: for each command that prints a result. */
export const jsonOption = { json: { type: 'boolean' } } as const satisfies OptionTable

/** A command line as a command reads it: the words after the command's name, and its flags. */
export type CommandLine<O extends OptionTable> = { words: string[]; flags: Flags<O> }

/** What every command declares: the help text and the parser read these, and nothing else. */
type Declaration<O extends OptionTable> = {
  name: string
  /** Its lines of `ofage --help`: the first after the two-space indent, the others as printed. */
  usage: string
  /** Its subcommands; `null`: the next word is an argument (`usage CLIENT_ID`); `[]`: it takes no argument. */
  subcommands: readonly string[] | null
  /** Only the flags it takes (besides --help and --version): any other is an unknown option. */
  options: O
}

/** A command that runs against an open database: here, or in the server that holds the embedded store. */
export type DatabaseCommand<O extends OptionTable = OptionTable> = Declaration<O> & {
  kind: 'database'
  /** False for `keys`: `keys show` shows the key the server has, or says there is none, and never generates one. */
  generatesSigningKey?: false
  /** The subcommands that print links to the server: they use the address the server recorded. */
  printsLinks?: readonly string[]
  run(services: Services, line: CommandLine<O>): Promise<Output>
}

/** A command that needs no database (`estimator`, `dev`): it reads its own command line and prints its own usage. */
export type StandaloneCommand<O extends OptionTable = OptionTable> = Declaration<O> & {
  kind: 'standalone'
  /** The subcommands whose --help is their own (`estimator eval --help`), not the help text. */
  ownHelp?: readonly string[]
  run(argv: string[], context: { io: Io; config: Config }): Promise<number>
}

/** Runs a database command line against open services and returns its exit status (the admin socket's work). */
export type CommandRunner = (services: Services, argv: string[], io: Io) => Promise<number>

/** `serve`: runs until stopped; it runs the commands that other processes send to its admin socket. */
export type ServerCommand = Declaration<Record<never, never>> & {
  kind: 'server'
  run(config: Config, commands: CommandRunner): Promise<void>
}

/** `help` and `version`: the entry answers them before anything else. */
export type AnswerCommand = Declaration<Record<never, never>> & { kind: 'answer' }

export type Command = DatabaseCommand | StandaloneCommand | ServerCommand | AnswerCommand

/** A database command, its `run` handed the flags typed from its own table. */
export function databaseCommand<const O extends OptionTable>(command: DatabaseCommand<O>): DatabaseCommand {
  return command
}
