import type { SQL } from 'drizzle-orm'
import type { Executor } from './client.ts'

/**
 * The rows of a statement written as SQL (`db.execute`): postgres.js answers an array, PGlite an object that
 * holds `rows`. Values come as each driver reads them, so such statements return integers, booleans and
 * text, never an instant.
 */
export async function queryRows<T>(db: Executor, query: SQL): Promise<T[]> {
  return rowsOf<T>(await db.execute(query))
}

/** The rows of a statement written as SQL: postgres.js answers an array, PGlite an object that holds `rows`. */
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[]
}
