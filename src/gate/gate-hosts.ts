import { eq } from 'drizzle-orm'
import type { Executor } from '../db/client.ts'
import { clients, gateHosts } from '../db/schema.ts'
import { DEFAULT_AGE_REQUIRED } from '../oauth/authorization-request.ts'

/** What the gate needs to know of one gated origin: its client and the client's gate settings. */
export type GateHost = {
  /** scheme://host[:port] */
  origin: string
  clientId: string
  /** A sandbox client never answers for a host name that a live client gates (gate-match.ts). */
  sandbox: boolean
  active: boolean
  /** The age the gate asks for (gateAgeOf). */
  ageRequired: number
  /** How long a gate cookie counts from the check it stands for. */
  ttlSeconds: number
}

/** The path on a gated host where the check comes back: registered as one of its client's redirect URIs. */
export const GATE_CALLBACK_PATH = '/.ofage/callback'

export function gateCallbackUri(origin: string): string {
  return `${origin}${GATE_CALLBACK_PATH}`
}

/** The age a client's gate asks for: its gate age, else its minimum age, else 18; never under its minimum age (raised since). */
export function gateAgeOf(client: { gateAge: number | null; minAge: number | null }): number {
  return Math.max(client.gateAge ?? client.minAge ?? DEFAULT_AGE_REQUIRED, client.minAge ?? 0)
}

const columns = {
  origin: gateHosts.origin,
  clientId: clients.id,
  status: clients.status,
  sandbox: clients.sandbox,
  gateAge: clients.gateAge,
  minAge: clients.minAge,
  ttlSeconds: clients.gateTtlSeconds,
}

type Row = { origin: string; clientId: string; status: string; sandbox: boolean; gateAge: number | null; minAge: number | null; ttlSeconds: number }

function describe(row: Row): GateHost {
  return { origin: row.origin, clientId: row.clientId, sandbox: row.sandbox, active: row.status === 'active', ageRequired: gateAgeOf(row), ttlSeconds: row.ttlSeconds }
}

/** Every gated origin of every client: what each instance's directory holds. */
export async function loadGateHosts(db: Executor): Promise<GateHost[]> {
  const rows = await db.select(columns).from(gateHosts).innerJoin(clients, eq(clients.id, gateHosts.clientId))
  return rows.map(describe)
}

/** The gated origins of one client, for its settings. */
export async function listClientGateHosts(db: Executor, clientId: string): Promise<string[]> {
  const rows = await db.select({ origin: gateHosts.origin }).from(gateHosts).where(eq(gateHosts.clientId, clientId)).orderBy(gateHosts.origin)
  return rows.map((row) => row.origin)
}

/** Every client's gated origins, for the CLI's list. */
export async function listGateHostsByClient(db: Executor): Promise<Map<string, string[]>> {
  const rows = await db.select({ origin: gateHosts.origin, clientId: gateHosts.clientId }).from(gateHosts).orderBy(gateHosts.origin)
  const byClient = new Map<string, string[]>()
  for (const row of rows) byClient.set(row.clientId, [...(byClient.get(row.clientId) ?? []), row.origin])
  return byClient
}
