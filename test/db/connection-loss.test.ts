import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import postgres from 'postgres'
import { openDatabase, type OpenDatabase } from '../../src/db/client.ts'
import { freshDatabaseUrl, onPostgres, queryRows } from '../helpers.ts'

/**
 * A pooled connection lost in the middle of a transaction (the backend terminated, a proxy reset). The
 * statements the transaction issues afterwards must fail like any query, not crash the process (an
 * uncaught TypeError from postgres.js, porsager/postgres#1208), and must never run outside the transaction
 * on a connection the pool opens again (#1155). Both are fixed by src/db/patches/postgres@3.4.9.patch.
 */
let database: Awaited<ReturnType<typeof freshDatabaseUrl>>
let open: OpenDatabase
let outside: postgres.Sql

beforeAll(async () => {
  if (!onPostgres) return
  database = await freshDatabaseUrl()
  open = await openDatabase({ kind: 'postgres', url: database.url })
  outside = postgres(database.url, { max: 1, onnotice: () => {} })
  await outside`create table marks (note text not null)`
})

afterAll(async () => {
  if (!onPostgres) return
  await outside.end()
  await open.close()
  await database.drop()
})

test.skipIf(!onPostgres)('statements after the connection is lost fail, in the transaction and never outside it; the process lives on', async () => {
  const outcomes: string[] = []
  // The transaction is rejected as soon as its connection closes, while its callback goes on (the pool's
  // reconnections below take a while on a busy machine): the checks wait for the callback itself.
  let callback: Promise<void> | undefined
  const body = async (tx: Parameters<Parameters<typeof open.db.transaction>[0]>[0]) => {
    const [backend] = await queryRows<{ pid: number }>(tx, sql`select pg_backend_pid() as pid`)
    await tx.execute(sql`insert into marks values ('before')`)
    const sleeping = tx.execute(sql`select pg_sleep(3)`).then(
      () => outcomes.push('slept'),
      () => outcomes.push('lost'),
    )
    await Bun.sleep(200)
    await outside`select pg_terminate_backend(${backend!.pid})`
    await sleeping
    // Other requests keep the pool busy, so it may well reconnect this very connection now.
    await Promise.all(Array.from({ length: 12 }, () => open.db.execute(sql`select 1`).catch(() => undefined)))
    await tx.execute(sql`insert into marks values ('after')`).then(
      () => outcomes.push('after ran'),
      () => outcomes.push('after refused'),
    )
  }
  const transaction = open.db.transaction((tx) => (callback = body(tx)))
  await expect(transaction).rejects.toThrow()
  await callback
  // Give a deferred write every chance to run (and, unpatched, to throw from setImmediate).
  await Bun.sleep(300)
  expect(outcomes).toEqual(['lost', 'after refused'])
  expect(await outside`select note from marks`.then((rows) => [...rows])).toEqual([])
  // The pool serves the next request on a fresh connection.
  expect(await queryRows<{ n: number }>(open.db, sql`select 1 as n`)).toEqual([{ n: 1 }])
}, 20_000)
