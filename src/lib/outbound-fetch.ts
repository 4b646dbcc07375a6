import { lookup as dnsLookup } from 'node:dns/promises'
import http, { type ClientRequest, type IncomingMessage } from 'node:http'
import https from 'node:https'
import type { LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import { rootCertificates } from 'node:tls'
import { refuseAddress } from './address-policy.ts'

/** How far an outbound fetch may go; the same for every fetch of one checker. */
export type OutboundFetchOptions = {
  /** The whole exchange, connection to last byte: a server dripping bytes is cut off here. 5 s if not given. */
  timeoutMs?: number
  /** The largest body read; a longer one is abandoned, not truncated. 1 MiB if not given. */
  maxBytes?: number
  /**
   * Allows loopback addresses (127.0.0.0/8, ::1), over http or https: an operator's local mirror, and tests.
   * Off in production unless the operator says otherwise.
   */
  allowLoopback: boolean
  /**
   * Allows plain http to public addresses too. Only for objects that carry their own signature and are
   * conventionally served over http (CRLs, RFC 5280 §4.2.1.13); a status list is always fetched over https.
   */
  allowHttp?: boolean
  /** Resolves a host name to its addresses; the system resolver if not given (tests name hosts this way). */
  resolveHost?: (hostname: string) => Promise<LookupAddress[]>
  /** Extra certificate authorities (PEM) for https, beside the system's: an operator's internal CA, tests. */
  ca?: string[]
}

/** Why a fetch gave nothing: every one of them is "not available", none an exception. */
export type FetchFailure =
  /** Not https (or http where allowed), a URL with credentials, or a redirect to another origin or too many. */
  | 'refused_url'
  /** The host resolves to an address we never connect to (private, link-local, loopback where not allowed...). */
  | 'refused_address'
  | 'unreachable'
  | 'timeout'
  | 'too_large'
  /** A status other than 2xx (or 3xx followed). */
  | 'http_status'

export type FetchResult = { ok: true; body: Uint8Array; contentType: string | undefined } | { ok: false; failure: FetchFailure }

const MAX_REDIRECTS = 3

/**
 * GETs `url` within bounds, for a URL a credential's issuer chose: https only (see the options for
 * exceptions); every address the host resolves to is checked before connecting, and the connection goes to
 * the addresses checked (the check runs in the socket's own `lookup`, so a second DNS answer cannot slip in
 * between); redirects followed only within the same origin, at most three; the whole response within
 * `timeoutMs` and `maxBytes`. Never throws for network trouble: the caller fails closed on any failure.
 */
export async function fetchBounded(url: string, options: OutboundFetchOptions & { accept: string }): Promise<FetchResult> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000)
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return { ok: false, failure: 'refused_url' }
  }
  const origin = target.origin
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const refused = refuseUrl(target, options)
    if (refused) return { ok: false, failure: refused }
    const response = await getOnce(target, options, deadline)
    if (!('redirect' in response)) return response
    let next: URL
    try {
      next = new URL(response.redirect, target)
    } catch {
      return { ok: false, failure: 'refused_url' }
    }
    // Another origin is another party's say: an issuer's status list moves with a new credential, not a redirect.
    if (next.origin !== origin) return { ok: false, failure: 'refused_url' }
    target = next
  }
  return { ok: false, failure: 'refused_url' }
}

function refuseUrl(url: URL, options: OutboundFetchOptions): FetchFailure | undefined {
  if (url.username || url.password) return 'refused_url'
  const hostname = bareHostname(url)
  if (isIP(hostname) !== 0 && refuseAddress(hostname, options)) return 'refused_address'
  if (url.protocol === 'https:') return undefined
  if (url.protocol !== 'http:') return 'refused_url'
  if (options.allowHttp) return undefined
  // Plain http only to a loopback literal (a local mirror): nothing between us and it to tamper with the bytes.
  const loopbackLiteral = isIP(hostname) !== 0 && refuseAddress(hostname, { allowLoopback: false }) === 'loopback_address'
  return options.allowLoopback && loopbackLiteral ? undefined : 'refused_url'
}

/** The URL's host without IPv6 brackets. */
const bareHostname = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1')

type Hop = FetchResult | { redirect: string }

function getOnce(url: URL, options: OutboundFetchOptions & { accept: string }, deadline: number): Promise<Hop> {
  const maxBytes = options.maxBytes ?? 1024 * 1024
  const resolveHost = options.resolveHost ?? ((hostname: string) => dnsLookup(hostname, { all: true, verbatim: true }))
  let refusedAddress = false
  return new Promise<Hop>((resolve) => {
    let settled = false
    // Set first: the deadline covers the lookup, the connection, the headers and every byte of the body.
    const timer = setTimeout(() => finish({ ok: false, failure: 'timeout' }), Math.max(0, deadline - Date.now()))
    const finish = (hop: Hop) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      request.destroy()
      resolve(hop)
    }
    const lookup = (hostname: string, _options: unknown, callback: (error: Error | null, addresses: LookupAddress[]) => void) => {
      const literal = isIP(hostname)
      const resolved = literal !== 0 ? Promise.resolve([{ address: hostname, family: literal }]) : resolveHost(hostname)
      resolved.then(
        (addresses) => {
          // Every address, not the first: the socket may try the others, and one private answer is enough to say no.
          if (addresses.length === 0 || addresses.some(({ address }) => refuseAddress(address, options))) {
            refusedAddress = true
            callback(new Error('address refused'), [])
          } else callback(null, addresses)
        },
        (error: Error) => callback(error, []),
      )
    }
    const client = url.protocol === 'https:' ? https : http
    const request: ClientRequest = client.request(
      {
        protocol: url.protocol,
        host: bareHostname(url),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: { accept: options.accept, 'accept-encoding': 'identity' },
        lookup: lookup as never,
        agent: false,
        // Giving `ca` replaces the system's roots; an operator's internal CA is meant to add to them.
        ...(url.protocol === 'https:' && options.ca && { ca: [...rootCertificates, ...options.ca] }),
      },
      (response) => readResponse(response, maxBytes, finish),
    )
    request.on('error', () => finish({ ok: false, failure: refusedAddress ? 'refused_address' : 'unreachable' }))
    request.end()
  })
}

function readResponse(response: IncomingMessage, maxBytes: number, finish: (hop: Hop) => void) {
  const status = response.statusCode ?? 0
  if (status >= 300 && status < 400 && typeof response.headers.location === 'string') return finish({ redirect: response.headers.location })
  if (status < 200 || status >= 300) return finish({ ok: false, failure: 'http_status' })
  const declared = Number(response.headers['content-length'])
  if (Number.isFinite(declared) && declared > maxBytes) return finish({ ok: false, failure: 'too_large' })
  const chunks: Buffer[] = []
  let length = 0
  response.on('data', (chunk: Buffer) => {
    length += chunk.length
    if (length > maxBytes) return finish({ ok: false, failure: 'too_large' })
    chunks.push(chunk)
  })
  response.on('end', () => finish({ ok: true, body: new Uint8Array(Buffer.concat(chunks)), contentType: response.headers['content-type'] }))
  response.on('error', () => finish({ ok: false, failure: 'unreachable' }))
}
