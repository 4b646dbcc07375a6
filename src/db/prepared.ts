import { sql, type SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Database } from './client.ts'

/**
 * A statement that Drizzle builds once per database, for a hot path: `build` returns a query made with
 * placeholders and `.prepare(name)`, and each call then only fills in the values. Building the SQL text
 * again on every request was a third of the token exchange's main-thread CPU (docs/decisions.md, "The
 * exchange's statements are built once, too"). A database that is closed and dropped takes its statements
 * with it.
 */
export function builtOnce<T>(build: (db: Database) => T): (db: Database) => T {
  const built = new WeakMap<Database, T>()
  return (db) => {
    let statement = built.get(db)
    if (statement === undefined) built.set(db, (statement = build(db)))
    return statement
  }
}

/**
 * {@link builtOnce} for a statement written as SQL (`db.execute` has no `.prepare`): its values are
 * `sql.placeholder`s, and `execute(values)` fills them in. The rows come as each driver gives them
 * (`rowsOf` in src/db/rows.ts).
 */
export function sqlBuiltOnce(name: string, build: () => SQL): (db: Database) => { execute(values: Record<string, unknown>): Promise<unknown> } {
  return builtOnce((db) => db._.session.prepareQuery(new PgDialect().sqlToQuery(build()), undefined, name, false))
}

/**
 * A select-list item that lets its statement's transaction commit without waiting for the write-ahead log to
 * reach the disk (`synchronous_commit` off for that transaction alone, `set_config(…, true)`). The rows are
 * visible to every other statement at once, as with any commit; what changes is only what a crash of Postgres
 * itself (not of this server) may lose: the transactions of the last few hundred milliseconds (three times
 * `wal_writer_delay`, 200 ms by default) whose log no later commit has flushed. The log is flushed in order,
 * so a synchronous commit that follows carries every earlier one to the disk with it.
 *
 * Only for statements whose loss in such a crash is harmless and whose rows are all the later synchronous
 * writes lean on: the visitor's page opening and a check's hit and attempt (src/verification/sessions.ts).
 * Waiting for the disk there held each address's rate-limit row locked for the length of a disk flush, and
 * every visitor from the address waited behind it (docs/decisions.md, "Two of the flow's commits do not wait
 * for the disk").
 */
export const commitWithoutWaitingForDisk = sql`set_config('synchronous_commit', 'off', true)`
