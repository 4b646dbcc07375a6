import type { SQL } from 'drizzle-orm'
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
