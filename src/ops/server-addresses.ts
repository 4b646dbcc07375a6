import type { Config } from '../config.ts'
import type { Database } from '../db/client.ts'
import { readStartRecord, writeStartRecord } from '../keys/server-secrets.ts'
import type { Clock } from '../lib/clock.ts'

/**
 * Not a secret: the addresses the server last started with. A CLI command that opens the database itself
 * (Postgres, or the embedded store while no server runs) prints links to the server, not to wherever the
 * operator's shell would put one: a server started with PORT=3200 once got `users create` links to
 * `localhost:3000` built from the shell's defaults (issue 19).
 */
const RECORD = 'server_addresses'

export type ServerAddresses = { appUrl: string; publicUrl: string; recordedAt: Date }

/** Written by the server at start; the last server started wins. */
export async function recordServerAddresses(deps: { db: Database; config: Pick<Config, 'appUrl' | 'publicUrl'>; clock: Clock }): Promise<void> {
  await writeStartRecord(deps.db, RECORD, { app_url: deps.config.appUrl, public_url: deps.config.publicUrl }, deps.clock.now())
}

/** The addresses the server last started with, or undefined before any server ran on this database. */
export async function findServerAddresses(db: Database): Promise<ServerAddresses | undefined> {
  const record = await readStartRecord<{ app_url: string; public_url: string }>(db, RECORD)
  return record && { appUrl: record.value.app_url, publicUrl: record.value.public_url, recordedAt: record.recordedAt }
}
