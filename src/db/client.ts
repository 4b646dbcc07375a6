import { mkdirSync } from 'node:fs'
import type { PGlite } from '@electric-sql/pglite'
import { sql } from 'drizzle-orm'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import type { DatabaseTarget } from '../config.ts'
import { ConfigError } from '../errors.ts'
import { acquireDataDirLock } from './data-dir-lock.ts'
import { pgliteAssets } from './pglite-assets.ts'
import { reportingPglite, type OnStatement } from './statement-log.ts'
import { watchedSockets } from './watched-socket.ts'
import * as schema from './schema.ts'

/** Longest a statement may run on the server (issue 10: no query outlives the 10 s API deadline). */
export const STATEMENT_TIMEOUT_MS = 4_000
/** Longest a statement waits for a row or table lock held by someone else. */
export const LOCK_TIMEOUT_MS = 3_000
/** A connection whose server says nothing this long after a query is dead (src/db/watched-socket.ts). */
export const SILENT_CONNECTION_MS = STATEMENT_TIMEOUT_MS + 1_000

/** The fix that the installed postgres.js must carry (applied by `bun install`, or by the postinstall under npm). */
export const DRIVER_PATCH = 'src/db/patches/postgres@3.4.9.patch'

/** The one database type the services use: Drizzle over PGlite or over postgres.js, same schema. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>

/** A transaction or the database itself: services that write several rows accept either. */
export type Executor = Parameters<Parameters<Database['transaction']>[0]>[0] | Database

export type OpenDatabase = {
  db: Database
  target: DatabaseTarget
  /**
   * Hears NOTIFYs on `channel`. `onListen` runs each time listening (re)starts: notifications sent while
   * it was not listening are lost, so whatever was learnt before must be forgotten then.
   */
  listen(channel: string, onNotify: (payload: string) => void, onListen: () => void): Promise<void>
  close(): Promise<void>
}

export type OpenOptions = {
  /** Who is opening the embedded store, for the message shown to a second process. */
  holder?: string
  /** postgres.js pool size (default 10). */
  maxConnections?: number
  /** Hears every statement sent (src/db/statement-log.ts): for counting them, never in production. */
  onStatement?: OnStatement
}

/**
 * Opens the configured database and checks that it answers. Failures become a {@link ConfigError}
 * naming the variable to fix, so start-up prints one line instead of a stack trace.
 */
export async function openDatabase(target: DatabaseTarget, options: OpenOptions = {}): Promise<OpenDatabase> {
  if (target.kind === 'postgres') return openPostgres(target, options)
  return openPglite(target, options)
}

async function openPostgres(target: DatabaseTarget & { kind: 'postgres' }, options: OpenOptions): Promise<OpenDatabase> {
  // Without src/db/patches/ a lost connection can crash the process or run a transaction's statements
  // outside it; an install that skipped the patch (`--ignore-scripts`, a hand-copied tree) must not start.
  if (Reflect.get(postgres, 'ofagePatched') !== true) {
    throw new ConfigError(
      'DATABASE_URL',
      `needs the postgres driver patched by ${DRIVER_PATCH}, and the installed one is not: ` +
        'run `npm install` or `bun install` again, with install scripts allowed',
    )
  }
  // `socket` is a documented postgres.js option that its type declarations leave out.
  const client = postgres(target.url, {
    max: options.maxConnections ?? 10,
    onnotice: () => {},
    // Fail fast when Postgres is gone or a connection is cut mid-handshake, instead of letting requests
    // queue: the request answers 500 and the next one connects afresh (test/database-faults.test.ts).
    connect_timeout: 3,
    idle_timeout: 60,
    // Every statement ends on the server before the API's 10-second deadline: a query that waits on an
    // outside lock, or runs away, gives its connection back instead of holding it after the caller gave up.
    connection: { statement_timeout: STATEMENT_TIMEOUT_MS, lock_timeout: LOCK_TIMEOUT_MS, idle_in_transaction_session_timeout: 10_000 },
    // A cut link is noticed by TCP keepalive probes while idle, and by the silence watch while a query waits.
    keep_alive: 5,
    socket: watchedSockets(SILENT_CONNECTION_MS),
    ...(options.onStatement && { debug: (_connection: number, text: string) => options.onStatement!(text) }),
  } as postgres.Options<{}>)
  const db = drizzlePostgres(preparing(client), { schema }) as unknown as Database
  try {
    await db.execute(sql`select 1`)
  } catch (cause) {
    await client.end({ timeout: 1 }).catch(() => {})
    throw new ConfigError('DATABASE_URL', `cannot connect to Postgres: ${describe(cause)}`)
  }
  return {
    db,
    target,
    // postgres.js keeps one connection for its listeners and listens again after reconnecting.
    listen: async (channel, onNotify, onListen) => void (await client.listen(channel, onNotify, onListen)),
    close: () => client.end({ timeout: 5 }),
  }
}

async function openPglite(target: DatabaseTarget, options: OpenOptions): Promise<OpenDatabase> {
  // Loaded only for the embedded store: a server on Postgres never holds PGlite's module (about 2 MiB idle).
  const [{ PGlite }, { drizzle: drizzlePglite }] = await Promise.all([import('@electric-sql/pglite'), import('drizzle-orm/pglite')])
  let release = () => {}
  let client: PGlite
  if (target.kind === 'pglite') {
    try {
      mkdirSync(target.dataDir, { recursive: true, mode: 0o700 })
    } catch (cause) {
      throw new ConfigError('DATA_DIR', `cannot be created: ${describe(cause)}`)
    }
    // PGlite allows one process per data directory; a second opener would corrupt it.
    release = acquireDataDirLock(target.dataDir, options.holder ?? 'ofage')
    try {
      client = await PGlite.create(`${target.dataDir}/pgdata`, await pgliteAssets())
    } catch (cause) {
      release()
      throw new ConfigError('DATA_DIR', `holds no usable embedded database: ${describe(cause)}`)
    }
  } else {
    client = await PGlite.create(await pgliteAssets())
  }
  const db = drizzlePglite(options.onStatement ? reportingPglite(client, options.onStatement) : client, { schema }) as unknown as Database
  return {
    db,
    target,
    async listen(channel, onNotify, onListen) {
      await client.listen(channel, onNotify)
      onListen()
    },
    async close() {
      await client.close()
      release()
    },
  }
}

/**
 * The client Drizzle gets: every statement a named prepared statement. Drizzle sends its queries through
 * `unsafe` with `prepare: false` (true only for a query it was asked to `.prepare(name)`), and an
 * unprepared statement with parameters costs two round trips (describe, then execute); prepared, it costs
 * one after the first use on a connection (`bun run bench --profile`: socket writes were 40% of the
 * server's time). Drizzle's `false` is overridden: until issue 34 it was kept, and every statement took two
 * round trips (test/db/prepared-statements.test.ts). Transactions and savepoints hand out scoped clients,
 * which are wrapped the same way. Our statements are a bounded set (Drizzle parameterises every value), so
 * the per-connection statement cache stays small.
 */
function preparing(sql: postgres.Sql): postgres.Sql {
  return new Proxy(sql, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      if (property === 'unsafe') {
        return (query: string, parameters?: unknown[], options: { prepare?: boolean } = {}) => value.call(target, query, parameters, { ...options, prepare: true })
      }
      if (property === 'begin' || property === 'savepoint') {
        return (...args: unknown[]) => {
          const scope = args.pop() as (scoped: postgres.Sql) => unknown
          return value.call(target, ...args, (scoped: postgres.Sql) => scope(preparing(scoped)))
        }
      }
      return value
    },
  })
}

/** Drizzle wraps driver errors in "Failed query: …"; the driver's own message says what is wrong. */
function describe(cause: unknown): string {
  const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause
  return inner instanceof Error ? inner.message : String(inner)
}
