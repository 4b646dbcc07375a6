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
        'client_logos',
        'clients',
        'credential_requests',
        'dashboard_passkey_challenges',
        'dashboard_passkeys',
        'dashboard_sessions',
        'dashboard_users',
        'gate_hosts',
        'passkeys',
        'pushed_requests',
        'rate_limits',
        'server_secrets',
        'trust_anchors',
        'trust_sources',
        'usage_daily',
        'verification_sessions',
        'webhook_deliveries',
        'webhook_endpoints',
      ])
      await services.close()
      if (onPostgres) {
        // A second start on the same database finds the migrations applied and the same key.
        const again = await startServices(config, { log: silentLogger })
        expect((await again.deps.keys.signing.published()).jwk.n).toBe((await services.deps.keys.signing.published()).jwk.n)
        await again.close()
      }
    } finally {
      await database.drop()
    }
  })
})

describe('migration 0014: credential failures become an enum', () => {
  /** Runs the journal's migrations up to and including `lastTag` on a fresh embedded database. */
  async function migratedUpTo(lastTag: string) {
    const { PGlite } = await import('@electric-sql/pglite')
    const db = new PGlite()
    for (const entry of migrationJournal.entries) {
      for (const statement of migrationFiles[entry.tag]!.split('--> statement-breakpoint')) await db.exec(statement)
      if (entry.tag === lastTag) break
    }
    return db
  }

  test('refusals stored as text keep their reason; text that is no reason reads as malformed; none stays none', async () => {
    const db = await migratedUpTo('0013_dashboard_passkey_origin')
    try {
      // The rows only, not the sessions they belong to: foreign keys are not what this test is about.
      await db.exec("set session_replication_role = replica")
      const row = (id: string, failure: string | null) =>
        db.query(`insert into credential_requests (id_hash, state_hash, session_id_hash, nonce, created_at, expires_at, failure) values ($1, $1, 's', 'n', now(), now(), $2)`, [id, failure])
      await row('a', 'key_binding')
      await row('b', 'declined')
      await row('c', 'Verify Error: JWT is expired')
      await row('d', null)
      for (const statement of migrationFiles['0014_credential_answer_keys']!.split('--> statement-breakpoint')) await db.exec(statement)
      const { rows } = await db.query<{ id_hash: string; failure: string | null }>('select id_hash, failure from credential_requests order by id_hash')
      expect(rows).toEqual([
        { id_hash: 'a', failure: 'key_binding' },
        { id_hash: 'b', failure: 'declined' },
        { id_hash: 'c', failure: 'malformed' },
        { id_hash: 'd', failure: null },
      ])
      // The column now refuses free text.
      await expect(row('e', 'something else')).rejects.toThrow(/credential_failure/)
    } finally {
      await db.close()
    }
  })
})

describe('several instances on one Postgres database', () => {
  test.skipIf(!onPostgres)('four instances starting at once migrate safely and share one signing key and HMAC keys', async () => {
    const database = await freshDatabaseUrl()
    const config = testConfig({ DATABASE_URL: database.url })
    try {
      const instances = await Promise.all(Array.from({ length: 4 }, () => startServices(config, { log: silentLogger })))
      const moduli = new Set(await Promise.all(instances.map(async (i) => (await i.deps.keys.signing.signer()).jwk.n)))
      const secretKeys = new Set(instances.map((i) => Buffer.from(i.deps.keys.clientSecretKey).toString('hex')))
      expect(moduli.size).toBe(1)
      expect(secretKeys.size).toBe(1)
      await Promise.all(instances.map((i) => i.close()))
    } finally {
      await database.drop()
    }
  })
})
