import { fileURLToPath } from 'node:url'
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator'
import type { PgliteDatabase } from 'drizzle-orm/pglite'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'
import type { OpenDatabase } from './client.ts'

const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url))

/** Any number that is ours alone: the advisory lock serialising migrations across instances. */
const MIGRATION_LOCK = 4_207_117

/**
 * Applies the migrations in `drizzle/`. On Postgres, instances starting together take an advisory lock
 * on a dedicated connection first, so exactly one of them migrates and the others wait and find it done.
 */
export async function migrateDatabase(open: OpenDatabase): Promise<void> {
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
}
