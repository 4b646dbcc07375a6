import { parseArgs } from 'node:util'
import pkg from '../package.json' with { type: 'json' }
import { AUDIT_SUBCOMMANDS, auditCommand } from './audit/audit-command.ts'
import type { Services } from './boot.ts'
import { USERS_SUBCOMMANDS, USERS_USAGE, usersCommand } from './dashboard/user-command.ts'
import { describeMigrations, upToDate } from './db/migrate.ts'
import { OAuthError } from './errors.ts'
import { KEYS_SUBCOMMANDS, keysCommand } from './keys/key-command.ts'
import { didYouMean, formatFields, HELP_HINT, UsageError, type Output } from './lib/command-line.ts'
import { CLIENTS_SUBCOMMANDS, clientsCommand, requireClient } from './oauth/client-command.ts'
import { DEV_USAGE } from './credentials/dev/command.ts'
import { EVAL_HELP, EVAL_USAGE, evaluateDataset } from './estimator/eval-command.ts'
import { countUsage, periods, resolveInterval, type Period } from './usage/report.ts'
import { DEFAULT_FACE_POLICY } from './liveness/face-policy.ts'
import { defaultFaceBuffer } from './clients/face-buffer.ts'
import { WEBHOOKS_SUBCOMMANDS, WEBHOOKS_USAGE, webhooksCommand } from './webhooks/webhook-command.ts'
import { TRUST_SUBCOMMANDS, TRUST_USAGE, trustCommand } from './credentials/trust/trust-command.ts'

/** From package.json, imported so that `bun build --compile` embeds it in the binary. */
export const VERSION = pkg.version

export const HELP = `ofage ${VERSION} — self-hosted age verification

Usage: ofage [command] [--json]
  serve                                   run the server (the default)
  migrate                                 apply database migrations
  clients create --name NAME --redirect-uri URI [--redirect-uri URI …]
                 [--min-age N] [--limit N] [--face-buffer N] [--home-url URL] [--sandbox]
                 [--require-pkce on|off] [--require-par on|off]
                 [--methods face,credential,passkey,age_pass]   the ways it accepts (default all)
                 [--gate-host HOST …] [--gate-age N] [--gate-ttl 30d]   gate sites (docs/gate.md);
                                          a gate host needs no --redirect-uri
  clients list | show ID | suspend ID | activate ID
  clients rotate-secret ID [--overlap 0|90m|24h|7d]   the old secret keeps working this long (default 0)
  clients update ID [--name NAME] [--limit N|none] [--min-age N|none] [--face-buffer N|none]
                    [--home-url URL|none] [--add-redirect-uri URI] [--remove-redirect-uri URI]
                    [--require-pkce on|off] [--require-par on|off] [--methods LIST]
                    [--gate-host HOST] [--remove-gate-host HOST] [--gate-age N|none] [--gate-ttl 30d]
                    [--display-name NAME|none] [--accent-colour '#rrggbb'|none] [--privacy-url URL|none]
                    [--logo FILE|none]   the site's look on the hosted page (PNG, JPEG or WebP, 1 MiB)
  clients delete ID [--force]             with its audit rows, usage counters, webhooks, open codes
                                          and sessions, in one transaction; refused while it has
                                          verifications this month unless --force (suspend keeps them)
  audit show TRANSACTION_ID
  audit list --client ID [--since DATE] [--limit N]   newest first (default 50)
  usage CLIENT_ID [--period day|month|all] [--start-date D] [--end-date D]
  ${USERS_USAGE}
  keys show                               the key in force (every instance signs with it and publishes
                                          it), where it comes from, and whether the running instances agree
  keys rotate [--file PATH] [--leaked]    a new key for every instance at once: generated and kept in the
                                          database, or the one every SIGNING_KEY_FILE already holds (PATH);
                                          the old key is still accepted by validation for 630 s, unless
                                          --leaked (docs/deploy.md, Keys)
  ${WEBHOOKS_USAGE}
  ${TRUST_USAGE}
  ${EVAL_USAGE}
                                          (estimator eval --help: what it reports)
  ${DEV_USAGE}
  help, --help, -h                        this text
  version, --version, -v                  the version, and the commit it was built from

Configuration comes from the environment (DATABASE_URL, DATA_DIR, SIGNING_KEY_FILE, …): every variable is in
docs/deploy.md, "Configuration reference".`

export type Io = { out(text: string): void; err(text: string): void }

export const consoleIo: Io = { out: (text) => console.log(text), err: (text) => console.error(text) }

export const options = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  name: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  'add-redirect-uri': { type: 'string', multiple: true },
  'remove-redirect-uri': { type: 'string', multiple: true },
  'min-age': { type: 'string' },
  limit: { type: 'string' },
  'face-buffer': { type: 'string' },
  methods: { type: 'string' },
  'home-url': { type: 'string' },
  sandbox: { type: 'boolean' },
  'require-pkce': { type: 'string' },
  'require-par': { type: 'string' },
  force: { type: 'boolean' },
  overlap: { type: 'string' },
  file: { type: 'string' },
  leaked: { type: 'boolean' },
  'gate-host': { type: 'string', multiple: true },
  'remove-gate-host': { type: 'string', multiple: true },
  'gate-age': { type: 'string' },
  'gate-ttl': { type: 'string' },
  'display-name': { type: 'string' },
  'accent-colour': { type: 'string' },
  'privacy-url': { type: 'string' },
  logo: { type: 'string' },
  url: { type: 'string' },
  event: { type: 'string', multiple: true },
  client: { type: 'string' },
  email: { type: 'string' },
  since: { type: 'string' },
  period: { type: 'string' },
  'start-date': { type: 'string' },
  'end-date': { type: 'string' },
  dataset: { type: 'string' },
  thresholds: { type: 'string' },
  buffers: { type: 'string' },
  workers: { type: 'string' },
  vical: { type: 'string' },
  'etsi-tl': { type: 'string' },
} as const

export type Flags = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>['values']

/**
 * Every command and its subcommands (null: the next word is an argument, such as `usage CLIENT_ID`).
 * `dev` and `estimator` parse their own arguments (src/credentials/dev-command.ts, src/estimator/).
 */
const COMMANDS: Record<string, readonly string[] | null> = {
  serve: [],
  migrate: [],
  help: null,
  version: [],
  clients: CLIENTS_SUBCOMMANDS,
  audit: AUDIT_SUBCOMMANDS,
  usage: null,
  keys: KEYS_SUBCOMMANDS,
  webhooks: WEBHOOKS_SUBCOMMANDS,
  trust: TRUST_SUBCOMMANDS,
  users: USERS_SUBCOMMANDS,
  estimator: ['eval'],
  dev: ['issuer', 'wallet'],
}

/**
 * Parses a command line strictly: an unknown option, a missing value, an unknown command or subcommand is
 * a {@link UsageError} that names it (with a suggestion when one is close), before anything is opened.
 */
export function parseCommandLine(argv: string[]): { flags: Flags; positionals: string[] } {
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true })
  const names = Object.keys(options).map((name) => `--${name}`)
  for (const token of tokens) {
    if (token.kind === 'option' && !(token.name in options)) {
      throw new UsageError(`unknown option ${token.rawName}${didYouMean(token.rawName, names)}`)
    }
  }
  let parsed
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true })
  } catch (cause) {
    throw new UsageError((cause as Error).message)
  }
  const [command = 'serve', sub] = parsed.positionals
  const subcommands = COMMANDS[command]
  if (subcommands === undefined) throw new UsageError(`unknown command "${command}"${didYouMean(command, Object.keys(COMMANDS))}`)
  if (subcommands?.length === 0 && sub !== undefined) throw new UsageError(`${command} takes no arguments, got "${sub}"`)
  if (subcommands?.length && sub === undefined) throw new UsageError(`${command} needs a command: ${subcommands.join(', ')}`)
  if (subcommands?.length && !subcommands.includes(sub!)) {
    throw new UsageError(`unknown ${command} command "${sub}"${didYouMean(sub!, subcommands)}`)
  }
  return { flags: parsed.values, positionals: parsed.positionals }
}

async function dispatch(services: Services, command: string, sub: string | undefined, rest: string[], flags: Flags): Promise<Output> {
  const { deps } = services
  switch (command) {
    case 'migrate': {
      // Opening the database migrated it (startServices); this says what that did.
      const report = services.migrations ?? upToDate()
      return { json: { migrated: true, ...report }, text: describeMigrations(report) }
    }
    case 'clients':
      return clientsCommand(services, sub, rest[0], flags)
    case 'audit':
      return auditCommand(services, sub, rest[0], flags)
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
    case 'users':
      return usersCommand(services, sub, rest[0], flags)
    case 'trust':
      return trustCommand(services, sub, rest[0], flags)
    case 'keys':
      return keysCommand(services, sub, flags)
    default:
      // serve, help, version, dev and estimator never reach an open database.
      throw new UsageError(`"${command}" is not a command that runs against the database`)
  }
}

/** Parses a command line (not `serve`, `help` or `version`) and runs it against open services; returns the exit status. */
export async function runCommand(services: Services, argv: string[], io: Io): Promise<number> {
  try {
    const { flags, positionals } = parseCommandLine(argv)
    const [command = 'serve', sub, ...rest] = positionals
    const result = await dispatch(services, command, sub, rest, flags)
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
 * `estimator eval --dataset DIR`: needs no database, so it runs before any is opened. Without --buffers it
 * measures the live check's own policy (each threshold's default buffer, its face-score bound); the
 * estimator is handed those numbers, it does not import the policy.
 */
export async function runEstimatorCommand(argv: string[], io: Io, workers: number): Promise<number> {
  let parsed
  try {
    parsed = parseCommandLine(argv)
  } catch (cause) {
    if (!(cause instanceof UsageError)) throw cause
    io.err(`ofage: ${cause.message}\nusage: ofage ${EVAL_USAGE}`)
    return 2
  }
  const { flags, positionals } = parsed
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
