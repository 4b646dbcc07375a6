import { parseArgs } from 'node:util'
import { describeAuditLog, findAuditLog } from './audit/audit-logs.ts'
import type { Services } from './boot.ts'
import { OAuthError } from './errors.ts'
import {
  createClient,
  describeClient,
  findClient,
  listClients,
  rotateClientSecret,
  updateClient,
  type Client,
  type ClientChanges,
} from './oauth/clients.ts'
import { DEV_USAGE } from './credentials/dev-command.ts'
import { EVAL_HELP, EVAL_USAGE, evaluateDataset } from './estimator/eval-command.ts'
import { countUsage, periods, resolveInterval, type Period } from './usage/report.ts'
import { DEFAULT_FACE_POLICY, defaultFaceBuffer } from './verification/methods/face-policy.ts'
import { WEBHOOKS_USAGE, webhooksCommand } from './webhooks/webhook-command.ts'

export const HELP = `ofage — self-hosted age verification

Usage: ofage [command] [--json]
  serve                                   run the server (the default)
  migrate                                 apply database migrations
  clients create --name NAME --redirect-uri URI [--redirect-uri URI …]
                 [--min-age N] [--limit N] [--face-buffer N] [--home-url URL] [--sandbox]
                 [--require-pkce on|off] [--require-par on|off]
  clients list | show ID | suspend ID | activate ID | rotate-secret ID
  clients update ID [--limit N|none] [--min-age N|none] [--face-buffer N|none]
                    [--home-url URL|none] [--add-redirect-uri URI] [--remove-redirect-uri URI]
                    [--require-pkce on|off] [--require-par on|off]
  audit show TRANSACTION_ID
  usage CLIENT_ID [--period day|month|all] [--start-date D] [--end-date D]
  keys show
  ${WEBHOOKS_USAGE}
  ${EVAL_USAGE}
                                          (estimator eval --help: what it reports)
  ${DEV_USAGE}

Configuration comes from the environment (DATABASE_URL, DATA_DIR, SIGNING_KEY_FILE, …); see README.md.`

export type Io = { out(text: string): void; err(text: string): void }

export const consoleIo: Io = { out: (text) => console.log(text), err: (text) => console.error(text) }

/** A mistake in how the command was called: printed with a hint, exit status 2. */
export class UsageError extends Error {}

export const options = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  'add-redirect-uri': { type: 'string', multiple: true },
  'remove-redirect-uri': { type: 'string', multiple: true },
  'min-age': { type: 'string' },
  limit: { type: 'string' },
  'face-buffer': { type: 'string' },
  'home-url': { type: 'string' },
  sandbox: { type: 'boolean' },
  'require-pkce': { type: 'string' },
  'require-par': { type: 'string' },
  url: { type: 'string' },
  event: { type: 'string', multiple: true },
  client: { type: 'string' },
  period: { type: 'string' },
  'start-date': { type: 'string' },
  'end-date': { type: 'string' },
  dataset: { type: 'string' },
  thresholds: { type: 'string' },
  buffers: { type: 'string' },
  workers: { type: 'string' },
} as const

export type Flags = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>['values']

type Output = { json: unknown; text: string }

async function dispatch(services: Services, command: string, sub: string | undefined, rest: string[], flags: Flags): Promise<Output> {
  const { deps } = services
  switch (command) {
    case 'migrate':
      return { json: { migrated: true }, text: 'Migrations applied.' }
    case 'clients':
      return clientsCommand(services, sub, rest[0], flags)
    case 'audit': {
      if (sub !== 'show' || !rest[0]) throw new UsageError('usage: audit show TRANSACTION_ID')
      const row = await findAuditLog(deps.db, rest[0])
      if (!row) throw new OAuthError('invalid_request', `no audit log with transaction_id ${rest[0]}`)
      const json = describeAuditLog(row)
      return { json, text: formatFields(json) }
    }
    case 'usage': {
      if (!sub) throw new UsageError('usage: usage CLIENT_ID [--period day|month|all]')
      const client = await requireClient(services, sub)
      const period = flags.period
      if (period !== undefined && !periods.includes(period as Period)) throw new UsageError('--period must be day, month or all')
      const interval = resolveInterval(
        { period: period as Period | undefined, start_date: flags['start-date'], end_date: flags['end-date'] },
        { now: deps.clock.now(), clientCreatedAt: client.createdAt },
      )
      const usage = await countUsage(deps.db, client.id, interval)
      const json = { client_id: client.id, period: { start: interval.start.toISOString(), end: interval.end.toISOString() }, usage }
      return { json, text: formatFields({ client_id: client.id, start: json.period.start, end: json.period.end, ...usage }) }
    }
    case 'webhooks':
      return webhooksCommand(services, sub, rest[0], flags)
    case 'keys': {
      if (sub !== 'show') throw new UsageError('usage: keys show')
      const { signing } = deps.keys
      const json = {
        kid: signing.jwk.kid,
        alg: signing.jwk.alg,
        source: deps.config.signingKeyFile ? `SIGNING_KEY_FILE ${deps.config.signingKeyFile}` : 'generated, kept in the database',
        public_key: signing.publicPem,
        jwk: signing.jwk,
      }
      return { json, text: `kid: ${json.kid}\nalg: ${json.alg}\nsource: ${json.source}\n${json.public_key}` }
    }
    default:
      throw new UsageError(`unknown command "${command}"`)
  }
}

async function clientsCommand(services: Services, sub: string | undefined, id: string | undefined, flags: Flags): Promise<Output> {
  const { deps } = services
  if (sub === 'create') {
    if (!flags.name) throw new UsageError('clients create needs --name NAME')
    const { client, secret } = await createClient(deps, {
      name: flags.name,
      redirectUris: flags['redirect-uri'] ?? [],
      minAge: readOptionalInt('--min-age', flags['min-age']),
      verificationLimit: readOptionalInt('--limit', flags.limit),
      faceBuffer: readOptionalInt('--face-buffer', flags['face-buffer']),
      homeUrl: flags['home-url'],
      sandbox: flags.sandbox ?? false,
      requirePkce: readSwitch('--require-pkce', flags['require-pkce']),
      requirePushedRequests: readSwitch('--require-par', flags['require-par']),
    })
    return withSecret(client, secret)
  }
  if (sub === 'list') {
    const all = await listClients(deps.db)
    const json = all.map(describeClient)
    const text = json.length
      ? json.map((c) => `${c.client_id}  ${c.status.padEnd(9)} ${c.sandbox ? 'sandbox ' : ''}${c.name}`).join('\n')
      : 'No clients yet. Create one with: ofage clients create --name NAME --redirect-uri URI'
    return { json, text }
  }
  if (!id) throw new UsageError(`clients ${sub ?? ''} needs a client id`.replace('  ', ' '))
  switch (sub) {
    case 'show':
      return showClient(await requireClient(services, id))
    case 'suspend':
    case 'activate':
      return showClient(await requireUpdate(services, id, { status: sub === 'suspend' ? 'suspended' : 'active' }))
    case 'rotate-secret': {
      const rotated = await rotateClientSecret(deps, id)
      if (!rotated) throw new OAuthError('invalid_request', `no client ${id}`)
      return withSecret(rotated.client, rotated.secret)
    }
    case 'update':
      return showClient(
        await requireUpdate(services, id, {
          minAge: readOptionalInt('--min-age', flags['min-age'], true),
          verificationLimit: readOptionalInt('--limit', flags.limit, true),
          faceBuffer: readOptionalInt('--face-buffer', flags['face-buffer'], true),
          homeUrl: flags['home-url'] === 'none' ? null : flags['home-url'],
          addRedirectUris: flags['add-redirect-uri'],
          removeRedirectUris: flags['remove-redirect-uri'],
          requirePkce: readSwitch('--require-pkce', flags['require-pkce']),
          requirePushedRequests: readSwitch('--require-par', flags['require-par']),
        }),
      )
    default:
      throw new UsageError(`unknown clients command "${sub ?? ''}"`)
  }
}

async function requireClient(services: Services, id: string): Promise<Client> {
  const client = await findClient(services.deps.db, id)
  if (!client) throw new OAuthError('invalid_request', `no client ${id}`)
  return client
}

async function requireUpdate(services: Services, id: string, changes: ClientChanges): Promise<Client> {
  const client = await updateClient(services.deps.db, id, changes)
  if (!client) throw new OAuthError('invalid_request', `no client ${id}`)
  return client
}

function showClient(client: Client): Output {
  const json = describeClient(client)
  return { json, text: formatFields(json) }
}

function withSecret(client: Client, secret: string): Output {
  const json = { ...describeClient(client), client_secret: secret }
  return { json, text: `${formatFields(json)}\n\nThe client secret is shown this once: store it in the client's backend now.` }
}

/** Reads `N`, or `none` (null) where `allowNone`; undefined when the flag is absent. */
function readOptionalInt(flag: string, value: string | undefined, allowNone = false): number | null | undefined {
  if (value === undefined) return undefined
  if (allowNone && value === 'none') return null
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number${allowNone ? ' or "none"' : ''}`)
  return Number(value)
}

/** Reads `on` or `off`; undefined when the flag is absent. */
function readSwitch(flag: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined
  if (value !== 'on' && value !== 'off') throw new UsageError(`${flag} must be "on" or "off"`)
  return value === 'on'
}

function formatFields(record: Record<string, unknown>): string {
  return Object.entries(record)
    .map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(', ') : value === null ? 'none' : String(value)}`)
    .join('\n')
}

/** Parses a command line (not `serve` or `help`) and runs it against open services; returns the exit status. */
export async function runCommand(services: Services, argv: string[], io: Io): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  } catch (cause) {
    io.err(`ofage: ${(cause as Error).message}\n\n${HELP}`)
    return 2
  }
  const { values: flags, positionals } = parsed
  const [command = 'serve', sub, ...rest] = positionals
  try {
    const result = await dispatch(services, command, sub, rest, flags)
    io.out(flags.json ? JSON.stringify(result.json, null, 2) : result.text)
    return 0
  } catch (cause) {
    if (cause instanceof UsageError) {
      io.err(`ofage: ${cause.message}\nRun "ofage help" for the commands.`)
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
 * `estimator eval --dataset DIR`: needs no database, so it runs before any is opened. Without --buffers it
 * measures the live check's own policy (each threshold's default buffer, its face-score bound); the
 * estimator is handed those numbers, it does not import the policy.
 */
export async function runEstimatorCommand(argv: string[], io: Io, workers: number): Promise<number> {
  const { values: flags, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  if (positionals[1] === 'eval' && flags.help) {
    io.out(EVAL_HELP)
    return 0
  }
  if (positionals[1] !== 'eval' || !flags.dataset) {
    io.err(`ofage: usage: ${EVAL_USAGE}`)
    return 2
  }
  const list = (value: string | undefined) => value?.split(',').map((n) => Number(n.trim()))
  const thresholds = list(flags.thresholds) ?? [18, 21, 25]
  const buffers = list(flags.buffers)
  if ([...thresholds, ...(buffers ?? [])].some((n) => !Number.isInteger(n) || n < 0 || n > 120)) {
    io.err('ofage: --thresholds and --buffers take whole numbers separated by commas')
    return 2
  }
  const workerCount = flags.workers === undefined ? workers : Number(flags.workers)
  if (!Number.isInteger(workerCount) || workerCount < 1 || workerCount > 64) {
    io.err('ofage: --workers takes a whole number from 1 to 64')
    return 2
  }
  try {
    const { report, text } = await evaluateDataset(
      { dataset: flags.dataset, thresholds, buffers, bufferFor: defaultFaceBuffer, minFaceScore: DEFAULT_FACE_POLICY.minFaceScore, workers: workerCount },
      (line) => io.err(line),
    )
    io.out(flags.json ? JSON.stringify(report, null, 2) : text)
    return 0
  } catch (cause) {
    io.err(`ofage: ${(cause as Error).message}`)
    return 1
  }
}
