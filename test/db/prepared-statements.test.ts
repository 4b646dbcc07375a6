import { afterAll, beforeAll, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import { openDatabase, type OpenDatabase } from '../../src/db/client.ts'
import { migrateDatabase } from '../../src/db/migrate.ts'
import { clients } from '../../src/db/schema.ts'
import { freshDatabaseUrl, onPostgres, queryRows } from '../helpers.ts'

/**
 * Every statement is prepared on Postgres (docs/decisions.md): once per connection, then executed by name in
 * one round trip. Drizzle asks postgres.js not to prepare (`prepare: false`), and until issue 34 the wrapper
 * of src/db/client.ts let it, so every statement with parameters was described and then executed: two
 * round trips. Read on one connection, from Postgres' own list of the connection's prepared statements.
 */
let database: Awaited<ReturnType<typeof freshDatabaseUrl>>
let open: OpenDatabase

beforeAll(async () => {
  if (!onPostgres) return
  database = await freshDatabaseUrl()
  open = await openDatabase({ kind: 'postgres', url: database.url }, { maxConnections: 1 })
  await migrateDatabase(open)
})

afterAll(async () => {
  if (!onPostgres) return
  await open.close()
  await database.drop()
})

test.skipIf(!onPostgres)("a Drizzle query and an SQL statement are each prepared once on a connection, and run again by name", async () => {
  const statements: string[] = []
  for (let i = 0; i < 3; i++) {
    await open.db.select().from(clients).where(eq(clients.id, `cl_${i}`))
    await queryRows(open.db, sql`select ${`cl_${i}`}::text as id`)
  }
  await open.db.transaction(async (tx) => {
    for (let i = 0; i < 2; i++) await tx.select().from(clients).where(eq(clients.id, `cl_${i}`))
  })
  const prepared = await queryRows<{ statement: string }>(open.db, sql`select statement from pg_prepared_statements`)
  for (const { statement } of prepared) statements.push(statement)
  expect(statements.filter((text) => text.includes('from "clients"'))).toHaveLength(1)
  expect(statements.filter((text) => text.includes('::text as id'))).toHaveLength(1)
})
