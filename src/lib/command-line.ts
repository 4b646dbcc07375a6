/** A mistake in how a command was called: printed with a hint, exit status 2. */
export class UsageError extends Error {}

/** The hint under every usage error. */
export const HELP_HINT = 'See "ofage --help".'

/** A command's result, printed as JSON with --json and as text otherwise. */
export type Output = { json: unknown; text: string }

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

/** `key: value` lines; arrays joined with commas, null as `none`. */
export function formatFields(record: Record<string, unknown>): string {
  return Object.entries(record)
    .map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(', ') : value === null ? 'none' : String(value)}`)
    .join('\n')
}

/** A header line and one line per row, each column as wide as its widest cell; the last column unpadded. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)))
  return [header, ...rows]
    .map((cells) => cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '))
    .join('\n')
}
