import postgres from 'postgres'
import { randomToken, sha256Hex } from '../src/lib/crypto.ts'

/**
 * Bulk data for `bun run bench`, written straight with SQL: the service's own code paths are what is
 * measured, not what fills the tables.
 */

/** A fresh database on the Postgres server of `adminUrl`, for one benchmark run; `drop()` removes it. */
export async function freshBenchDatabase(adminUrl: string, prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })
  const name = `${prefix}_${Date.now()}`
  await admin.unsafe(`create database ${name}`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}

/**
 * `n` audit rows for a client over the past year, and the daily usage counters that go with them, as the
 * service would have written them one completion at a time.
 */
export async function seedAuditRows(sql: postgres.Sql, clientId: string, n: number): Promise<void> {
  const batch = 1_000_000
  for (let from = 0; from < n; from += batch) {
    const to = Math.min(n, from + batch)
    await sql`
      insert into audit_logs (transaction_id, client_id, subject, method_class, verification_level, age_over, method, created_at)
      select gen_random_uuid(), ${clientId}, md5(i::text),
             case when i % 3 = 0 then 'biometric' else 'age_only' end,
             case when i % 5 = 0 then 're_verification' else 'first_verification' end,
             18, 'sandbox', now() - (i % 365) * interval '1 day' - (i % 86400) * interval '1 second'
      from generate_series(${from + 1}::int, ${to}::int) as i`
  }
  await sql`
    insert into usage_daily (client_id, day, total, age_only, biometric, reverification)
    select client_id, (created_at at time zone 'utc')::date, count(*)::int,
           (count(*) filter (where method_class = 'age_only'))::int,
           (count(*) filter (where method_class = 'biometric'))::int,
           (count(*) filter (where verification_level = 're_verification'))::int
    from audit_logs where client_id = ${clientId}
    group by 1, 2
    on conflict (client_id, day, shard) do update set total = excluded.total, age_only = excluded.age_only,
      biometric = excluded.biometric, reverification = excluded.reverification`
  await sql`analyze`
}

/**
 * `n` unused codes, each with its audit row, valid for `minutes`: more than a code's 60 seconds, so that
 * one seeding serves a whole run (the exchange checks expiry against the row, not against its own rule).
 */
export async function seedCodes(sql: postgres.Sql, clientId: string, redirectUri: string, n: number, minutes: number): Promise<string[]> {
  const codes = Array.from({ length: n }, () => randomToken(32))
  for (let from = 0; from < n; from += 10_000) {
    const slice = codes.slice(from, from + 10_000)
    const ids = slice.map(() => crypto.randomUUID())
    await sql`
      insert into audit_logs (transaction_id, client_id, subject, method_class, verification_level, age_over, method, created_at)
      select id::uuid, ${clientId}, md5(id), 'age_only', 'first_verification', 18, 'sandbox', now() from unnest(${ids}::text[]) as id`
    await sql`
      insert into auth_codes (code_hash, client_id, transaction_id, redirect_uri, state, created_at, expires_at)
      select hash, ${clientId}, id::uuid, ${redirectUri}, 'bench', now(), now() + ${`${minutes} minutes`}::interval
      from unnest(${slice.map((code) => sha256Hex(code))}::text[], ${ids}::text[]) as t(hash, id)`
  }
  return codes
}
