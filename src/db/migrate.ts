import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator'
import type { PgliteDatabase } from 'drizzle-orm/pglite'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import { sql } from 'drizzle-orm'
import type { OpenDatabase } from './client.ts'
import { migrationFiles, migrationJournal } from './migrations.ts'

/** Any number that is ours alone: the advisory lock serialising migrations across instances. */
const MIGRATION_LOCK = 4_207_117

/** What a migration run did: the tags it applied, in order, and how many the program knows. */
export type MigrationReport = { applied: string[]; total: number }

/**
 * Drizzle's record of what ran (`drizzle.__drizzle_migrations`): it applies every journal entry newer than
 * the newest row there, so the newest row before and after a run says which entries that run applied.
 */
const NEWEST_APPLIED = sql`select coalesce(max(created_at), 0)::text as newest from drizzle.__drizzle_migrations`
const HAS_RECORD = sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`

/**
 * Applies the migrations in `drizzle/` and says which ran. On Postgres, instances starting together take an
 * advisory lock on a dedicated connection first, so exactly one of them migrates and the others wait and
 * find it done (and report nothing applied).
 */
export async function migrateDatabase(open: OpenDatabase): Promise<MigrationReport> {
  const migrationsFolder = writeMigrationsFolder()
  try {
    if (open.target.kind !== 'postgres') {
      const query = async (statement: typeof NEWEST_APPLIED) => rowsOf(await open.db.execute(statement))
      const before = await newestApplied(query)
      await migratePglite(open.db as unknown as PgliteDatabase, { migrationsFolder })
      return reportBetween(before, await newestApplied(query))
    }
    const connection = postgres(open.target.url, { max: 1, onnotice: () => {}, connect_timeout: 5 })
    try {
      await connection`select pg_advisory_lock(${MIGRATION_LOCK})`
      const db = drizzlePostgres(connection)
      const query = async (statement: typeof NEWEST_APPLIED) => rowsOf(await db.execute(statement))
      const before = await newestApplied(query)
      await migratePostgres(db, { migrationsFolder })
      const report = reportBetween(before, await newestApplied(query))
      await connection`select pg_advisory_unlock(${MIGRATION_LOCK})`
      return report
    } finally {
      await connection.end({ timeout: 5 })
    }
  } finally {
    rmSync(migrationsFolder, { recursive: true, force: true })
  }
}

/** The `when` of the newest migration the database records (0: none, or no record yet). */
async function newestApplied(query: (statement: typeof NEWEST_APPLIED) => Promise<Record<string, unknown>[]>): Promise<number> {
  const [record] = await query(HAS_RECORD)
  if (record?.present !== true) return 0
  const [row] = await query(NEWEST_APPLIED)
  return Number(row?.newest ?? 0)
}

/** PGlite answers `{ rows }`, postgres.js an array of rows. */
function rowsOf(result: unknown): Record<string, unknown>[] {
  return (Array.isArray(result) ? result : (result as { rows: Record<string, unknown>[] }).rows) as Record<string, unknown>[]
}

/** The journal's entries newer than `before` and not newer than `after`: what one run applied. */
export function reportBetween(before: number, after: number, journal: { entries: readonly { when: number; tag: string }[] } = migrationJournal): MigrationReport {
  return {
    applied: journal.entries.filter((entry) => entry.when > before && entry.when <= after).map((entry) => entry.tag),
    total: journal.entries.length,
  }
}

/** What a run finds on a database already migrated: a running server's, which migrated at its start. */
export function upToDate(): MigrationReport {
  return { applied: [], total: migrationJournal.entries.length }
}

/**
 * The report in one sentence, for `ofage migrate`: "Applied 13 migrations (0007_integrators … 0019_client_branding)."
 * or "The database is up to date (21 migrations)."
 */
export function describeMigrations(report: MigrationReport): string {
  const { applied, total } = report
  if (applied.length === 0) return `The database is up to date (${total} migrations).`
  if (applied.length === 1) return `Applied 1 migration (${applied[0]}).`
  return `Applied ${applied.length} migrations (${applied[0]} … ${applied.at(-1)}).`
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
