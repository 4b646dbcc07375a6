import { eq } from 'drizzle-orm'
import type { Executor } from '../db/client.ts'
import { clients, gateHosts } from '../db/schema.ts'
import { DEFAULT_AGE_REQUIRED } from '../oauth/authorization-request.ts'

/** What the gate needs to know of one gated origin: its client and the client's gate settings. */
export type GateHost = {
  /** scheme://host[:port] */
  origin: string
  clientId: string
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
  gateAge: clients.gateAge,
  minAge: clients.minAge,
  ttlSeconds: clients.gateTtlSeconds,
}

type Row = { origin: string; clientId: string; status: string; gateAge: number | null; minAge: number | null; ttlSeconds: number }

function describe(row: Row): GateHost {
  return { origin: row.origin, clientId: row.clientId, active: row.status === 'active', ageRequired: gateAgeOf(row), ttlSeconds: row.ttlSeconds }
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

/** Gated hosts by host name, each with the port its origin is served on: built once per read, not per request. */
export type GateHostIndex<T> = Map<string, { host: T; port: string; defaultPort: boolean }[]>

export function indexGateHosts<T extends { origin: string }>(hosts: Iterable<T>): GateHostIndex<T> {
  const index: GateHostIndex<T> = new Map()
  for (const host of hosts) {
    const url = new URL(host.origin)
    const entry = { host, port: url.port || (url.protocol === 'https:' ? '443' : '80'), defaultPort: url.port === '' }
    index.set(url.hostname, [...(index.get(url.hostname) ?? []), entry])
  }
  return index
}

/**
 * The entry a request's host names: the same host name, and the same port where the request names one (a
 * browser leaves out the default port, and nginx's `$host` drops any port); without a port, the origin on
 * its scheme's default port first.
 */
export function findGateHost<T>(index: GateHostIndex<T>, requestHost: string): T | undefined {
  const wanted = readRequestHost(requestHost)
  const entries = wanted && index.get(wanted.hostname)
  if (!entries) return undefined
  if (wanted.port !== '') return entries.find((entry) => entry.port === wanted.port)?.host
  return (entries.find((entry) => entry.defaultPort) ?? entries[0])?.host
}

export function matchGateHost<T extends { origin: string }>(hosts: Iterable<T>, requestHost: string): T | undefined {
  return findGateHost(indexGateHosts(hosts), requestHost)
}

/** `host[:port]` as a Host or X-Forwarded-Host header carries it: a name, an IPv4 address or a bracketed IPv6 one. */
const REQUEST_HOST = /^(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,253})(?::(\d{1,5}))?$/

/**
 * The host name and port a header names, or undefined when it is not one. Read by hand, not by the URL
 * parser, since it runs on every request: names compare lower-cased, as the parser writes a gated origin;
 * anything the parser would rewrite further (an IPv4 address in short form, a non-ASCII name) names no
 * gated host, which fails closed.
 */
function readRequestHost(value: string): { hostname: string; port: string } | undefined {
  const match = REQUEST_HOST.exec(value)
  if (!match) return undefined
  return { hostname: match[1]!.toLowerCase(), port: match[2] === undefined ? '' : String(Number(match[2])) }
}

/**
 * The host a request was made to, as the proxy in front says: `X-Forwarded-Host` (Traefik's and Caddy's
 * forward auth set it, and the nginx configuration of docs/gate.md), else `Host`. Only the first of a
 * comma-separated list counts: the one the first proxy saw.
 */
export function forwardedHost(headers: Headers): string {
  const forwarded = headers.get('x-forwarded-host')
  const value = forwarded ?? headers.get('host') ?? ''
  return value.split(',')[0]!.trim()
}
