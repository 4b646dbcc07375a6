import { describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator'
import type { PgliteDatabase } from 'drizzle-orm/pglite'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import { openDatabase } from '../../src/db/client.ts'
import { describeMigrations, migrateDatabase, reportBetween } from '../../src/db/migrate.ts'
import { migrationFiles } from '../../src/db/migrations.ts'
import { freshDatabaseUrl } from '../helpers.ts'
import journalOnDisk from '../../drizzle/meta/_journal.json' with { type: 'json' }

/**
 * `ofage migrate` and a start that migrates say what they applied (issue 32, item 5: "Migrations applied."
 * whether 0 or 13 ran, and a start logged nothing of it). The expected tags are read from drizzle/'s own
 * journal file, not from the program's copy.
 */
const tags = journalOnDisk.entries.map((entry) => entry.tag)

/** A database as an older release left it: the first `count` migrations applied by drizzle's own migrator. */
async function databaseMigratedTo(count: number) {
  const database = await freshDatabaseUrl()
  const folder = mkdtempSync(join(tmpdir(), 'ofage-old-release-'))
  mkdirSync(join(folder, 'meta'))
  const entries = journalOnDisk.entries.slice(0, count)
  writeFileSync(join(folder, 'meta', '_journal.json'), JSON.stringify({ ...journalOnDisk, entries }))
  for (const entry of entries) writeFileSync(join(folder, `${entry.tag}.sql`), migrationFiles[entry.tag]!)
  const target = database.url === 'memory:' ? ({ kind: 'memory' } as const) : ({ kind: 'postgres', url: database.url } as const)
  const open = await openDatabase(target, { holder: 'the migration test' })
  if (target.kind === 'postgres') {
    const connection = postgres(target.url, { max: 1, onnotice: () => {} })
    await migratePostgres(drizzlePostgres(connection), { migrationsFolder: folder })
    await connection.end()
  } else {
    await migratePglite(open.db as unknown as PgliteDatabase, { migrationsFolder: folder })
  }
  rmSync(folder, { recursive: true, force: true })
  return { open, drop: async () => (await open.close(), await database.drop()) }
}

describe('what a migration run applied', () => {
  test('a fresh database: every migration, then none', async () => {
    const { open, drop } = await databaseMigratedTo(0)
    try {
      const first = await migrateDatabase(open)
      expect(first).toEqual({ applied: tags, total: tags.length })
      expect(describeMigrations(first)).toBe(`Applied ${tags.length} migrations (0000_init … ${tags.at(-1)}).`)
      const again = await migrateDatabase(open)
      expect(again).toEqual({ applied: [], total: tags.length })
      expect(describeMigrations(again)).toBe(`The database is up to date (${tags.length} migrations).`)
    } finally {
      await drop()
    }
  })

  test("an older release's database: the migrations it lacked, first and last named", async () => {
    const { open, drop } = await databaseMigratedTo(13)
    try {
      const report = await migrateDatabase(open)
      expect(report.applied).toEqual(tags.slice(13))
      expect(describeMigrations(report)).toBe(`Applied ${tags.length - 13} migrations (0013_dashboard_passkey_origin … ${tags.at(-1)}).`)
    } finally {
      await drop()
    }
  })

  test('the sentence for one, and the journal entries between two points', () => {
    expect(describeMigrations({ applied: ['0021_next'], total: 22 })).toBe('Applied 1 migration (0021_next).')
    const journal = { entries: [{ when: 10, tag: 'a' }, { when: 20, tag: 'b' }, { when: 30, tag: 'c' }] }
    expect(reportBetween(0, 30, journal)).toEqual({ applied: ['a', 'b', 'c'], total: 3 })
    expect(reportBetween(10, 30, journal)).toEqual({ applied: ['b', 'c'], total: 3 })
    expect(reportBetween(30, 30, journal)).toEqual({ applied: [], total: 3 })
  })
})
