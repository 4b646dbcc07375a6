import { parseArgs } from 'node:util'
import { sharedOptions, type Flags, type OptionTable } from './command.ts'

/** A mistake in how a command was called: printed with a hint, exit status 2. */
export class UsageError extends Error {}

/** The hint under every usage error. */
export const HELP_HINT = 'See "ofage --help".'

/** The flags a command's command line is read with: its own, and --help and --version. */
export function optionsOf(command: { options: OptionTable }): OptionTable {
  return { ...sharedOptions, ...command.options }
}

/**
 * Reads a command line leniently, with one command's flags: only to find its words and --help/--version
 * before the command reads it strictly (an unknown option is then a flag without a value).
 */
export function readLeniently(argv: string[], options: OptionTable): { positionals: string[]; help: boolean; version: boolean } {
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: false })
  return { positionals, help: values.help === true, version: values.version === true }
}

/**
 * Reads a command line strictly with its command's own flags: an unknown option (a flag another command
 * takes is one too), a missing value, an unknown or missing subcommand is a {@link UsageError} that names
 * it, with a suggestion when one is close. Returns the words after the command's name, and its flags.
 */
export function readCommandLine<O extends OptionTable>(
  command: { name: string; subcommands: readonly string[] | null; options: O },
  argv: string[],
): { words: string[]; flags: Flags<O & typeof sharedOptions> } {
  const options = optionsOf(command)
  const unknown = unknownOptions(argv, options)[0]
  if (unknown) throw new UsageError(`unknown option ${unknown}${didYouMean(unknown, Object.keys(options).map((name) => `--${name}`))}`)
  let parsed
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  } catch (cause) {
    throw new UsageError((cause as Error).message)
  }
  const words = parsed.positionals.slice(1)
  const [sub] = words
  const { name, subcommands } = command
  if (subcommands?.length === 0 && sub !== undefined) throw new UsageError(`${name} takes no arguments, got "${sub}"`)
  if (subcommands?.length && sub === undefined) throw new UsageError(`${name} needs a command: ${subcommands.join(', ')}`)
  if (subcommands?.length && !subcommands.includes(sub!)) throw new UsageError(`unknown ${name} command "${sub}"${didYouMean(sub!, subcommands)}`)
  return { words, flags: parsed.values as Flags<O & typeof sharedOptions> }
}

/** The options of a command line that a table does not know, as they were typed (`--bogus`, `-x`). */
export function unknownOptions(argv: string[], options: OptionTable): string[] {
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true })
  return tokens.flatMap((token) => (token.kind === 'option' && !(token.name in options) ? [token.rawName] : []))
}

/** ` (did you mean "clients"?)` when one candidate is a likely typo of `word`, else an empty string. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  let best: { candidate: string; distance: number } | undefined
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate)
    if (!best || distance < best.distance) best = { candidate, distance }
  }
  const letters = word.replace(/^-+/, '').length
  // One edit in a short word, two in a longer one: further than that is a guess, not a typo.
  const close = best && best.distance <= (letters > 5 ? 2 : 1) ? best.candidate : undefined
  const completion = letters >= 3 ? candidates.find((candidate) => candidate.startsWith(word)) : undefined
  const suggestion = close ?? completion
  return suggestion ? ` (did you mean "${suggestion}"?)` : ''
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit (optimal string alignment). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i]!
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      row[j] = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1)
    }
  }
  return rows[a.length]![b.length]!
}
