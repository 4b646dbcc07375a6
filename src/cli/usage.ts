import { countUsage, periods, resolveInterval, type Period } from '../usage/report.ts'
import { requireClient } from './clients.ts'
import { databaseCommand, jsonOption } from './command.ts'
import { formatFields } from './output.ts'
import { UsageError } from './parse.ts'

/** `ofage usage CLIENT_ID`: a client's verifications over a period, as GET /api/oauth/usage counts them. */
export const usage = databaseCommand({
  kind: 'database',
  name: 'usage',
  usage: 'usage CLIENT_ID [--period day|month|all] [--start-date D] [--end-date D]',
  subcommands: null,
  options: { ...jsonOption, period: { type: 'string' }, 'start-date': { type: 'string' }, 'end-date': { type: 'string' } },
  async run(services, { words: [id], flags }) {
    if (!id) throw new UsageError('usage: usage CLIENT_ID [--period day|month|all]')
    const { deps } = services
    const client = await requireClient(services, id)
    const period = flags.period
    if (period !== undefined && !periods.includes(period as Period)) throw new UsageError('--period must be day, month or all')
    const interval = resolveInterval(
      { period: period as Period | undefined, start_date: flags['start-date'], end_date: flags['end-date'] },
      { now: deps.clock.now(), clientCreatedAt: client.createdAt },
    )
    const counts = await countUsage(deps.db, client.id, interval)
    const json = { client_id: client.id, period: { start: interval.start.toISOString(), end: interval.end.toISOString() }, usage: counts }
    return { json, text: formatFields({ client_id: client.id, start: json.period.start, end: json.period.end, ...counts }) }
  },
})
