import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator'
import type { PgliteDatabase } from 'drizzle-orm/pglite'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import type { OpenDatabase } from './client.ts'
import { migrationFiles, migrationJournal } from './migrations.ts'

/** Any number that is ours alone: the advisory lock serialising migrations across instances. */
const MIGRATION_LOCK = 4_207_117

/**
 * Applies the migrations in `drizzle/`. On Postgres, instances starting together take an advisory lock
 * on a dedicated connection first, so exactly one of them migrates and the others wait and find it done.
 */
export async function migrateDatabase(open: OpenDatabase): Promise<void> {
  const migrationsFolder = writeMigrationsFolder()
  try {
    if (open.target.kind !== 'postgres') {
      await migratePglite(open.db as unknown as PgliteDatabase, { migrationsFolder })
      return
    }
    const connection = postgres(open.target.url, { max: 1, onnotice: () => {}, connect_timeout: 5 })
    try {
      await connection`select pg_advisory_lock(${MIGRATION_LOCK})`
      await migratePostgres(drizzlePostgres(connection), { migrationsFolder })
      await connection`select pg_advisory_unlock(${MIGRATION_LOCK})`
    } finally {
      await connection.end({ timeout: 5 })
    }
  } finally {
    rmSync(migrationsFolder, { recursive: true, force: true })
  }
}

/**
 * Drizzle's migrator reads a folder; the migrations travel inside the program (src/db/migrations.ts), so
 * the same code runs from a checkout and from the compiled binary. The folder lives only while migrating.
 */
function writeMigrationsFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'ofage-migrations-'))
  mkdirSync(join(folder, 'meta'))
  writeFileSync(join(folder, 'meta', '_journal.json'), JSON.stringify(migrationJournal))
  for (const entry of migrationJournal.entries) {
    const sql = migrationFiles[entry.tag]
    if (sql === undefined) throw new Error(`migration ${entry.tag} is in the journal but not in src/db/migrations.ts`)
    writeFileSync(join(folder, `${entry.tag}.sql`), sql)
  }
  return folder
}
