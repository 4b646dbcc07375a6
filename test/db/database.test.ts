import { describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { readdirSync, readFileSync } from 'node:fs'
import { startServices } from '../../src/boot.ts'
import { migrationFiles, migrationJournal } from '../../src/db/migrations.ts'
import { silentLogger } from '../../src/lib/log.ts'
import { freshDatabaseUrl, onPostgres, queryRows, testConfig } from '../helpers.ts'

describe('migrations', () => {
  test('every SQL file in drizzle/ is embedded, byte for byte, and listed in the journal', () => {
    const onDisk = readdirSync('drizzle').filter((name) => name.endsWith('.sql'))
    expect(Object.keys(migrationFiles).map((tag) => `${tag}.sql`).sort()).toEqual(onDisk.sort())
    for (const name of onDisk) expect(migrationFiles[name.replace(/\.sql$/, '')]).toBe(readFileSync(`drizzle/${name}`, 'utf8'))
    expect(migrationJournal.entries.map((entry) => entry.tag).sort()).toEqual(Object.keys(migrationFiles).sort())
  })

  test('apply to an empty database, create every table, and are idempotent', async () => {
    const database = await freshDatabaseUrl()
    const config = testConfig({ DATABASE_URL: database.url })
    try {
      const services = await startServices(config, { log: silentLogger })
      const rows = await queryRows<{ table_name: string }>(
        services.deps.db,
        sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
      )
      expect(rows.map((r) => r.table_name)).toEqual([
        'age_passes',
        'audit_logs',
        'auth_codes',
        'clients',
        'credential_requests',
        'dashboard_passkey_challenges',
        'dashboard_passkeys',
        'dashboard_sessions',
        'dashboard_users',
        'passkeys',
        'pushed_requests',
        'rate_limits',
        'server_secrets',
        'usage_daily',
        'verification_sessions',
        'webhook_deliveries',
        'webhook_endpoints',
      ])
      await services.close()
      if (onPostgres) {
        // A second start on the same database finds the migrations applied and the same key.
        const again = await startServices(config, { log: silentLogger })
        expect(again.deps.keys.signing.jwk.n).toBe(services.deps.keys.signing.jwk.n)
        await again.close()
      }
    } finally {
      await database.drop()
    }
  })
})

describe('several instances on one Postgres database', () => {
  test.skipIf(!onPostgres)('four instances starting at once migrate safely and share one signing key and HMAC keys', async () => {
    const database = await freshDatabaseUrl()
    const config = testConfig({ DATABASE_URL: database.url })
    try {
      const instances = await Promise.all(Array.from({ length: 4 }, () => startServices(config, { log: silentLogger })))
      const moduli = new Set(instances.map((i) => i.deps.keys.signing.jwk.n))
      const secretKeys = new Set(instances.map((i) => Buffer.from(i.deps.keys.clientSecretKey).toString('hex')))
      expect(moduli.size).toBe(1)
      expect(secretKeys.size).toBe(1)
      await Promise.all(instances.map((i) => i.close()))
    } finally {
      await database.drop()
    }
  })
})
