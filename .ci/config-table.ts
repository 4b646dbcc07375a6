// The configuration tables of README.md (the essentials) and docs/deploy.md (every variable, by topic), written
// from src/config-variables.ts between their markers. `bun .ci/config-table.ts --write` rewrites them; without
// --write it only says whether they are current (exit 1 if not). test/config-table.test.ts runs the same check.
import { CONFIG_GROUPS, CONFIG_VARIABLES, type ConfigVariable } from '../src/config-variables.ts'

/** Each file's tables, and how its links are written (from the repository's root, or from docs/). */
export const TABLE_FILES = [
  { file: 'README.md', kind: 'essential', fromDocs: false },
  { file: 'docs/deploy.md', kind: 'all', fromDocs: true },
] as const

type Kind = (typeof TABLE_FILES)[number]['kind']

const START = (kind: Kind) => `<!-- config-table: ${kind}, written by \`bun .ci/config-table.ts --write\` from src/config-variables.ts: edit there -->`
const END = '<!-- /config-table -->'

function cell(text: string, fromDocs: boolean): string {
  if (text.includes('|') || text.includes('\n')) throw new Error(`a table cell cannot hold "|" or a line break: ${text}`)
  return fromDocs ? text.replaceAll('](docs/deploy.md#', '](#').replaceAll('](docs/', '](') : text
}

function table(rows: readonly ConfigVariable[], fromDocs: boolean): string {
  const lines = ['| variable | meaning | default |', '|---|---|---|']
  for (const row of rows) {
    lines.push(`| ${row.names.map((name) => `\`${name}\``).join(', ')} | ${cell(row.meaning, fromDocs)} | ${cell(row.default, fromDocs)} |`)
  }
  return lines.join('\n')
}

/** The text between a file's markers, markers included. */
export function renderTable(kind: Kind, fromDocs: boolean): string {
  if (kind === 'essential') return [START(kind), table(CONFIG_VARIABLES.filter((row) => row.essential), fromDocs), END].join('\n')
  const sections = Object.entries(CONFIG_GROUPS).map(([group, { title, intro }]) => {
    const rows = CONFIG_VARIABLES.filter((row) => row.group === group)
    return [`### ${title}`, ...(intro ? [cell(intro, fromDocs)] : []), table(rows, fromDocs)].join('\n\n')
  })
  return [START(kind), '', sections.join('\n\n'), '', END].join('\n')
}

/** The file's text with its table as the list says, or an error when the markers are missing. */
export function withCurrentTable(text: string, kind: Kind, fromDocs: boolean): string {
  const start = text.indexOf(START(kind))
  const end = text.indexOf(END, start)
  if (start < 0 || end < 0) throw new Error(`no "${START(kind)}" … "${END}" markers`)
  return text.slice(0, start) + renderTable(kind, fromDocs) + text.slice(end + END.length)
}

if (import.meta.main) {
  const write = process.argv.includes('--write')
  let stale = 0
  for (const { file, kind, fromDocs } of TABLE_FILES) {
    const text = await Bun.file(file).text()
    const current = withCurrentTable(text, kind, fromDocs)
    if (current === text) continue
    if (write) {
      await Bun.write(file, current)
      console.log(`${file}: table rewritten`)
    } else {
      console.error(`${file}: the configuration table is not what src/config-variables.ts says; run bun .ci/config-table.ts --write`)
      stale++
    }
  }
  process.exit(stale ? 1 : 0)
}
