import type { Services } from '../boot.ts'
import { OAuthError } from '../errors.ts'
import { findClient } from '../clients/registry.ts'
import { parseBound } from '../usage/report.ts'
import { describeAuditLog, findAuditLog, listAuditLogs } from '../audit/audit-logs.ts'
import { databaseCommand, jsonOption, type Flags } from './command.ts'
import { formatFields, formatTable, type Output } from './output.ts'
import { UsageError } from './parse.ts'

const DEFAULT_LIMIT = 50
const MAX_LIMIT = 100_000

const options = { ...jsonOption, limit: { type: 'string' }, client: { type: 'string' }, since: { type: 'string' } } as const

/** `ofage audit show TRANSACTION_ID` and `ofage audit list --client ID [--since DATE] [--limit N]`: the audit log (src/audit/). */
export const audit = databaseCommand({
  kind: 'database',
  name: 'audit',
  usage: `audit show TRANSACTION_ID
  audit list --client ID [--since DATE] [--limit N]   newest first (default 50)`,
  subcommands: ['show', 'list'],
  options,
  run: (services, { words: [sub, id], flags }) => runAudit(services, sub, id, flags),
})

async function runAudit(services: Services, sub: string | undefined, id: string | undefined, flags: Flags<typeof options>): Promise<Output> {
  const { db } = services.deps
  if (sub === 'show') {
    if (!id) throw new UsageError('usage: audit show TRANSACTION_ID')
    const row = await findAuditLog(db, id)
    if (!row) throw new OAuthError('invalid_request', `no audit log with transaction_id ${id}`)
    const json = describeAuditLog(row)
    return { json, text: formatFields(json) }
  }
  if (sub !== 'list') throw new UsageError(`unknown audit command "${sub ?? ''}"`)
  if (!flags.client) throw new UsageError('usage: audit list --client CLIENT_ID [--since DATE] [--limit N]')
  if (flags.limit !== undefined && !(/^\d+$/.test(flags.limit) && Number(flags.limit) >= 1 && Number(flags.limit) <= MAX_LIMIT)) {
    throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}`)
  }
  const since = flags.since === undefined ? undefined : parseBound('--since', flags.since, 'start')
  if (!(await findClient(db, flags.client))) throw new OAuthError('invalid_request', `no client ${flags.client}`)
  const rows = await listAuditLogs(db, { clientId: flags.client, since, limit: flags.limit === undefined ? DEFAULT_LIMIT : Number(flags.limit) })
  const json = rows.map(describeAuditLog)
  const text = json.length
    ? formatTable(
        ['CREATED_AT', 'TRANSACTION_ID', 'CLASS', 'LEVEL', 'AGE_OVER', 'METHOD', 'REVOKED'],
        json.map((row) => [row.created_at, row.transaction_id, row.method_class, row.verification_level, String(row.age_over), row.method ?? '-', row.revoked_at ? 'yes' : 'no']),
      )
    : `No audit rows for ${flags.client}${since ? ` since ${since.toISOString()}` : ''}.`
  return { json, text }
}
