/** A command's result, printed as JSON with --json and as text otherwise. */
export type Output = { json: unknown; text: string }

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
