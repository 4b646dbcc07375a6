/**
 * Which gated host a proxy's request is for (docs/gate.md, "Who a host belongs to"). A name typed into a
 * dashboard never decides it alone: the proxy's own configuration names the client (`client=` in the
 * address of `/gate/auth`, `X-Ofage-Client` on `/.ofage/`), since whoever controls the proxy owns the
 * site. Among that client's origins, scheme and port must match exactly; a request that could mean two
 * is refused, never resolved by picking one.
 */

/** What a proxy tells us of a request to a gated site. */
export type GateRequest = {
  /** `host[:port]`, as `X-Forwarded-Host` (else `Host`) carries it. */
  host: string
  /** The scheme the visitor used (`X-Forwarded-Proto`), where the proxy says. */
  proto: string | undefined
  /** The client the proxy's configuration names; undefined for a configuration written before it did. */
  clientId: string | undefined
}

/** What the matcher needs of a gated origin. */
export type GateClaim = { origin: string; clientId: string; sandbox: boolean }

export type GateMatch<T> =
  | { outcome: 'found'; host: T }
  | { outcome: 'unknown_host' }
  /** Two entries could answer, or a sandbox client is named for a name a live client gates: refused, and logged for the operator. */
  | { outcome: 'ambiguous'; hostname: string; reason: string }

type Entry<T> = { host: T; scheme: string; port: string; defaultPort: boolean }

/** The gated origins of one host name, with what the checks per request need worked out once. */
type NameEntries<T> = { entries: Entry<T>[]; clients: number; live: boolean }

/** Gated hosts by host name: built once per read of the hosts, not per request. */
export type GateHostIndex<T> = Map<string, NameEntries<T>>

export function indexGateHosts<T extends GateClaim>(hosts: Iterable<T>): GateHostIndex<T> {
  const index: GateHostIndex<T> = new Map()
  for (const host of hosts) {
    const url = new URL(host.origin)
    const scheme = url.protocol.slice(0, -1)
    const entry = { host, scheme, port: url.port || (scheme === 'https' ? '443' : '80'), defaultPort: url.port === '' }
    const name = index.get(url.hostname) ?? { entries: [], clients: 0, live: false }
    if (!name.entries.some((other) => other.host.clientId === host.clientId)) name.clients++
    name.entries.push(entry)
    name.live ||= !host.sandbox
    index.set(url.hostname, name)
  }
  return index
}

/**
 * The one gated origin a request is for. With a client named, only its origins count (another client's
 * claim of the same name changes nothing), and a sandbox client never answers for a name that a live client
 * gates. With none named, the name must be claimed by one client alone. Then the scheme, where the proxy
 * says it, and the port must match: a host without a port means its scheme's default one (RFC 9110 §7.2),
 * so nginx must send `$host:$server_port`, since its `$host` drops the port.
 */
export function findGateHost<T extends GateClaim>(index: GateHostIndex<T>, request: GateRequest): GateMatch<T> {
  const wanted = readRequestHost(request.host)
  const name = wanted && index.get(wanted.hostname)
  if (!name) return UNKNOWN
  let claims = name.entries
  if (request.clientId !== undefined) {
    claims = claims.filter((entry) => entry.host.clientId === request.clientId)
    if (claims.length === 0) return UNKNOWN
    if (claims[0]!.host.sandbox && name.live) return ambiguous(wanted.hostname, 'the proxy names a sandbox client for a host name that a live client gates')
  } else if (name.clients > 1) {
    return ambiguous(wanted.hostname, 'several clients gate this host name and the proxy names none (docs/gate.md: client=)')
  }
  const proto = readProto(request.proto)
  const matching = claims.filter((entry) => (proto === undefined || entry.scheme === proto) && (wanted.port === '' ? entry.defaultPort : entry.port === wanted.port))
  if (matching.length === 1) return { outcome: 'found', host: matching[0]!.host }
  if (matching.length === 0) return UNKNOWN
  return ambiguous(wanted.hostname, 'the request fits both an http and an https origin of the client: the proxy must send X-Forwarded-Proto')
}

export function matchGateHost<T extends GateClaim>(hosts: Iterable<T>, request: GateRequest): GateMatch<T> {
  return findGateHost(indexGateHosts(hosts), request)
}

const UNKNOWN = { outcome: 'unknown_host' } as const

function ambiguous(hostname: string, reason: string) {
  return { outcome: 'ambiguous', hostname, reason } as const
}

/** `host[:port]` as a Host or X-Forwarded-Host header carries it: a name, an IPv4 address or a bracketed IPv6 one. */
const REQUEST_HOST = /^(\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,253})(?::(\d{1,5}))?$/

/**
 * The host name and port a header names, or undefined when it is not one. Read by hand, not by the URL
 * parser, since it runs on every request: names compare lower-cased, as the parser writes a gated origin;
 * anything the parser would rewrite further (an IPv4 address in short form, a non-ASCII name, a trailing
 * dot) names no gated host, which fails closed.
 */
function readRequestHost(value: string): { hostname: string; port: string } | undefined {
  const match = REQUEST_HOST.exec(value)
  if (!match) return undefined
  return { hostname: match[1]!.toLowerCase(), port: match[2] === undefined ? '' : String(Number(match[2])) }
}

/** `http` or `https` from X-Forwarded-Proto (the first of a list); anything else matches no origin. */
function readProto(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  return value.split(',')[0]!.trim().toLowerCase()
}

/**
 * What a proxy says of a request: the host it was made to, `X-Forwarded-Host` (Traefik's and Caddy's
 * forward auth set it, and the nginx configuration of docs/gate.md), else `Host`; the scheme in
 * `X-Forwarded-Proto`; only the first of a comma-separated list counts, the one the first proxy saw.
 * The client comes from wherever the route reads the proxy's own configuration.
 */
export function readGateRequest(headers: Headers, clientId: string | undefined): GateRequest {
  const value = headers.get('x-forwarded-host') ?? headers.get('host') ?? ''
  return { host: value.split(',')[0]!.trim(), proto: headers.get('x-forwarded-proto') ?? undefined, clientId }
}
