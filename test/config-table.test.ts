import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { TABLE_FILES, withCurrentTable } from '../.ci/config-table.ts'
import { FLAGS, loadConfig, NUMBERS, TEXT_DEFAULTS, type Config } from '../src/config.ts'
import { CONFIG_GROUPS, CONFIG_VARIABLES, describeFaceBufferDefaults } from '../src/config-variables.ts'

/**
 * One source for the configuration tables (issue 32, item 5: docs/deploy.md's table and the README's
 * disagreed on TRUST_PROXY, NODE_ENV, RATE_LIMIT_*, WORKERS and DATABASE_POOL, and gave FACE_AGE_BUFFER's
 * default as "8 for 18, 7 from 21" long after the code said 11/9/12).
 */
const read = readFileSync('src/config.ts', 'utf8')
const variablesRead = new Set([...read.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)].map((match) => match[1]!))
const documented = CONFIG_VARIABLES.flatMap((row) => row.names)

/** Where loadConfig keeps each variable with a default of its own (Postgres: WORKERS and the demo follow the database). */
const setting: Record<string, (config: Config) => unknown> = {
  PORT: (c) => c.port,
  DATABASE_POOL: (c) => c.databasePool,
  FACE_WORKERS: (c) => c.face.workers,
  FACE_QUEUE: (c) => c.face.queue,
  FACE_NICE: (c) => c.face.nice,
  FACE_UPLOAD_SECONDS: (c) => c.face.uploadSeconds,
  CREDENTIAL_TRUST_REFRESH_HOURS: (c) => c.trust.refreshHours,
  RATE_LIMIT_AUTH_FAILURES: (c) => c.limits.authFailures.max,
  RATE_LIMIT_SESSIONS: (c) => c.limits.sessions.max,
  RATE_LIMIT_CHECKS: (c) => c.limits.checks.max,
  RATE_LIMIT_SIGNIN_ACCOUNT: (c) => c.limits.signInAccount.max,
  RATE_LIMIT_SIGNIN_ACCOUNT_CEILING: (c) => c.limits.signInAccountCeiling.max,
  RATE_LIMIT_SIGNIN_ADDRESS: (c) => c.limits.signInAddress.max,
  RATE_LIMIT_PASSWORD_RESET_EMAIL: (c) => c.limits.passwordResetEmail.max,
  RATE_LIMIT_PASSWORD_RESET_ADDRESS: (c) => c.limits.passwordResetAddress.max,
  FACE_CHECK: (c) => c.face.enabled,
  FACE_UPLOAD: (c) => c.face.upload,
  METRICS_PUBLIC: (c) => c.metricsPublic,
  TRUST_PROXY: (c) => c.trustProxy,
  HSTS_INCLUDE_SUBDOMAINS: (c) => c.hstsIncludeSubDomains,
  CREDENTIAL_PLAIN_ANSWERS: (c) => c.credentials?.plainAnswers,
  CREDENTIAL_AV_PROFILE: (c) => c.credentials?.avProfile,
  HOST: (c) => c.host,
  DATA_DIR: (c) => c.dataDir,
  CREDENTIAL_REVOCATION_UNREACHABLE: (c) => c.trust.revocationUnreachable,
  PASSWORD_HASH_MEMORY_KIB: (c) => c.passwordHash.memoryCost,
}

describe('the configuration variables (src/config-variables.ts)', () => {
  test('the list is read: config.ts reads dozens of variables', () => {
    expect(variablesRead.size).toBeGreaterThan(40)
    expect(variablesRead).toContain('TRUST_PROXY')
  })

  test('every variable config.ts reads is described exactly once, and nothing it does not read', () => {
    expect([...documented].sort()).toEqual([...variablesRead].sort())
    expect(new Set(documented).size).toBe(documented.length)
  })

  test('every default is the one loadConfig falls back to, and the table says it', () => {
    const row = (name: string) => CONFIG_VARIABLES.find((variable) => variable.names.includes(name))!
    // Unset, on Postgres, with the digital ID on (its switches are read only then).
    const config = loadConfig({ DATABASE_URL: 'postgres://u@h/db', CREDENTIAL_TRUST_LIST: 'trust.pem' })
    const expected: Record<string, unknown> = {
      ...Object.fromEntries(Object.entries(NUMBERS).flatMap(([name, rule]) => ('fallback' in rule ? [[name, rule.fallback]] : []))),
      ...FLAGS,
      ...TEXT_DEFAULTS,
    }
    expect(Object.keys(setting).sort()).toEqual(Object.keys(expected).sort())
    for (const [name, value] of Object.entries(expected)) {
      expect({ name, value: setting[name]!(config) }).toEqual({ name, value })
      const written = typeof value === 'boolean' ? (value ? '`on`' : '`off`') : `\`${value}\``
      expect({ name, default: row(name).default }).toEqual({ name, default: expect.stringContaining(written) })
    }
  })

  test("FACE_AGE_BUFFER's default is the measured one of docs/accuracy.md: 11 years at 18, 9 at 21, 12 at 25", () => {
    expect(describeFaceBufferDefaults()).toBe('12 under 16, 11 for 16–20, 9 for 21–24, 12 from 25')
    expect(CONFIG_VARIABLES.find((row) => row.names.includes('FACE_AGE_BUFFER'))!.default).toContain('11 for 16–20, 9 for 21–24')
  })

  test("each whole number's bounds in the table are the ones config.ts enforces", () => {
    for (const [name, rule] of Object.entries(NUMBERS)) {
      const row = CONFIG_VARIABLES.find((variable) => variable.names.includes(name))!
      const words = `${row.meaning} ${CONFIG_GROUPS[row.group].intro}`
      expect({ name, words }).toEqual({ name, words: expect.stringMatching(new RegExp(`\\b${rule.min}–${rule.max.toLocaleString('en-US').replace(',', ',?')}\\b`)) })
      expect(() => loadConfig({ DATABASE_URL: 'postgres://u@h/db', [name]: String(rule.max + 1) })).toThrow(name)
      expect(() => loadConfig({ DATABASE_URL: 'postgres://u@h/db', [name]: String(rule.max) })).not.toThrow()
    }
  })
})

describe('README.md and docs/deploy.md: the configuration tables', () => {
  test.each(TABLE_FILES.map((entry) => [entry.file, entry]))('%s holds the table the list gives (bun .ci/config-table.ts --write)', (file, { kind, fromDocs }) => {
    const text = readFileSync(file, 'utf8')
    expect(withCurrentTable(text, kind, fromDocs)).toBe(text)
  })

  test('every variable is in docs/deploy.md; the README names the essentials, with the same words', () => {
    const deploy = readFileSync('docs/deploy.md', 'utf8')
    const readme = readFileSync('README.md', 'utf8')
    for (const name of documented) expect(deploy).toContain(`| \`${name}\``)
    for (const row of CONFIG_VARIABLES.filter((variable) => variable.essential)) {
      const readmeRow = readme.split('\n').find((line) => line.startsWith(`| \`${row.names[0]}\``))
      const deployRow = deploy.split('\n').find((line) => line.startsWith(`| \`${row.names[0]}\``))
      // The same row, but for links, which each file writes from where it lies.
      const unlinked = (line: string | undefined) => line?.replace(/\]\([^)]*\)/g, '](…)')
      expect(unlinked(readmeRow)).toBe(unlinked(deployRow)!)
    }
  })
})
