import { lookup as dnsLookup } from 'node:dns/promises'
import http, { type ClientRequest, type IncomingMessage } from 'node:http'
import https from 'node:https'
import type { LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import { rootCertificates } from 'node:tls'
import { knownAddresses, refuseAddress, type AddressPolicy } from './address-policy.ts'

/**
 * The one way ofage sends a request over the network: webhooks (POST), and status lists, CRLs and published
 * trust lists (GET). Every address a host resolves to is judged by `refuseAddress` inside the socket's own
 * `lookup`, so the connection goes to the addresses judged (no second DNS answer slips in between), whatever
 * form the URL wrote the host in: the URL parser already reads `127.1`, `2130706433`, `0x7f000001` and
 * `0177.0.0.1` as 127.0.0.1, an IPv4-mapped IPv6 address is judged as its IPv4 address, and a localhost name
 * (`localhost.`, `foo.localhost`) is loopback (`knownAddresses`). SMTP is not sent through here: its server
 * is the operator's own SMTP_URL, not an address anyone else chose.
 */

/** How far an outbound request may go; the same for every request of one caller. */
export type OutboundFetchOptions = AddressPolicy & {
  /** The whole exchange, connection to last byte: a server dripping bytes is cut off here. 5 s if not given. */
  timeoutMs?: number
  /** The largest body read; a longer one is abandoned, not truncated. 1 MiB if not given. */
  maxBytes?: number
  /**
   * Allows plain http to public addresses too. Only for what carries its own signature: CRLs, conventionally
   * served over http (RFC 5280 §4.2.1.13), and webhooks, whose scheme the endpoint registry decides (https
   * for a live client and in production). A status list is always fetched over https.
   */
  allowHttp?: boolean
  /** Resolves a host name to its addresses; the system resolver if not given (tests name hosts this way). */
  resolveHost?: (hostname: string) => Promise<LookupAddress[]>
  /** Extra certificate authorities (PEM) for https, beside the system's: an operator's internal CA, tests. */
  ca?: string[]
}

/** Why a request gave nothing: every one of them is "not available", none an exception. */
export type FetchFailure =
  /** Not https (or http where allowed), a URL with credentials, or a redirect to another origin or too many. */
  | 'refused_url'
  /** The host is or resolves to an address we never connect to (private, link-local, loopback where not allowed...). */
  | 'refused_address'
  | 'unreachable'
  | 'timeout'
  | 'too_large'
  /** A status other than 2xx (or 3xx followed). */
  | 'http_status'

export type FetchResult = { ok: true; body: Uint8Array; contentType: string | undefined } | { ok: false; failure: FetchFailure }

/**
 * A POST's outcome: the receiver's status, whatever it is (a 3xx included: never followed), or why there was
 * none (`refused_url`, `refused_address`, `unreachable` or `timeout`), with the network error where there was
 * one (for the log; its message may hold the URL).
 */
export type PostResult = { ok: true; status: number } | { ok: false; failure: FetchFailure; cause?: Error }

const MAX_REDIRECTS = 3

/**
 * GETs `url` within bounds, for a URL a credential's issuer chose: https only (see the options for
 * exceptions); every address the host resolves to is checked before connecting, and the connection goes to
 * the addresses checked; redirects followed only within the same origin, at most three; the whole response
 * within `timeoutMs` and `maxBytes`. Never throws for network trouble: the caller fails closed on any failure.
 */
export async function fetchBounded(url: string, options: OutboundFetchOptions & { accept: string }): Promise<FetchResult> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000)
  const headers = { accept: options.accept, 'accept-encoding': 'identity' }
  let target = readUrl(url)
  if (!target) return { ok: false, failure: 'refused_url' }
  const origin = target.origin
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const refused = refuseUrl(target, options)
    if (refused) return { ok: false, failure: refused }
    const sent = await exchangeOnce(target, options, { method: 'GET', headers, readBody: true }, deadline)
    if (!sent.ok) return { ok: false, failure: sent.failure }
    const { status, location, body, contentType } = sent.answer
    if (status >= 200 && status < 300) return { ok: true, body, contentType }
    if (status < 300 || status >= 400 || location === undefined) return { ok: false, failure: 'http_status' }
    const next = readUrl(location, target)
    // Another origin is another party's say: an issuer's status list moves with a new credential, not a redirect.
    if (!next || next.origin !== origin) return { ok: false, failure: 'refused_url' }
    target = next
  }
  return { ok: false, failure: 'refused_url' }
}

/**
 * POSTs `body` to `url` with `headers`, for a webhook: the same address rule as `fetchBounded`, checked at
 * connect time, and no redirect followed (Standard Webhooks receivers answer 2xx: a 3xx is the receiver's
 * answer, a failed attempt, and a redirect to an internal address goes nowhere). The answer's body is not
 * read. Never throws for network trouble.
 */
export async function postBounded(url: string, options: OutboundFetchOptions & { headers: Record<string, string>; body: string }): Promise<PostResult> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000)
  const target = readUrl(url)
  if (!target) return { ok: false, failure: 'refused_url' }
  const refused = refuseUrl(target, options)
  if (refused) return { ok: false, failure: refused }
  const sent = await exchangeOnce(target, options, { method: 'POST', headers: options.headers, body: options.body, readBody: false }, deadline)
  return sent.ok ? { ok: true, status: sent.answer.status } : sent
}

function readUrl(value: string, base?: URL): URL | undefined {
  try {
    return new URL(value, base)
  } catch {
    return undefined
  }
}

function refuseUrl(url: URL, options: OutboundFetchOptions): FetchFailure | undefined {
  if (url.username || url.password) return 'refused_url'
  // An address written in the URL (or a localhost name) is judged here: the socket connects to a literal
  // without calling `lookup` (Node's rule, and Bun's), so this is the connect-time check for literals.
  if (knownAddresses(url.hostname)?.some(({ address }) => refuseAddress(address, options))) return 'refused_address'
  if (url.protocol === 'https:') return undefined
  if (url.protocol !== 'http:') return 'refused_url'
  if (options.allowHttp) return undefined
  // Plain http only to a loopback literal (a local mirror): nothing between us and it to tamper with the bytes.
  const hostname = bareHostname(url)
  const loopbackLiteral = isIP(hostname) !== 0 && refuseAddress(hostname, { allowLoopback: false }) === 'loopback_address'
  return options.allowLoopback && loopbackLiteral ? undefined : 'refused_url'
}

/** The URL's host without IPv6 brackets. */
const bareHostname = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1')

type Exchange = { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; readBody: boolean }
/** What came back; `body` is read only for a 2xx answer to an exchange that reads it, and is empty otherwise. */
type Answer = { status: number; location: string | undefined; contentType: string | undefined; body: Uint8Array }
type Sent = { ok: true; answer: Answer } | { ok: false; failure: FetchFailure; cause?: Error }

function exchangeOnce(url: URL, options: OutboundFetchOptions, exchange: Exchange, deadline: number): Promise<Sent> {
  const maxBytes = options.maxBytes ?? 1024 * 1024
  const resolveHost = options.resolveHost ?? ((hostname: string) => dnsLookup(hostname, { all: true, verbatim: true }))
  let refusedAddress = false
  return new Promise<Sent>((resolve) => {
    let settled = false
    // Set first: the deadline covers the lookup, the connection, the headers and every byte of the body.
    const timer = setTimeout(() => finish({ ok: false, failure: 'timeout' }), Math.max(0, deadline - Date.now()))
    const finish = (sent: Sent) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      request.destroy()
      resolve(sent)
    }
    const lookup = (hostname: string, _options: unknown, callback: (error: Error | null, addresses: LookupAddress[]) => void) => {
      const known = knownAddresses(hostname)
      const resolved = known ? Promise.resolve(known) : resolveHost(hostname)
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
        method: exchange.method,
        headers: { ...exchange.headers, ...(exchange.body !== undefined && { 'content-length': String(Buffer.byteLength(exchange.body)) }) },
        lookup: lookup as never,
        agent: false,
        // Giving `ca` replaces the system's roots; an operator's internal CA is meant to add to them.
        ...(url.protocol === 'https:' && options.ca && { ca: [...rootCertificates, ...options.ca] }),
      },
      (response) => readResponse(response, exchange.readBody ? maxBytes : undefined, finish),
    )
    request.on('error', (cause) => finish(refusedAddress ? { ok: false, failure: 'refused_address' } : { ok: false, failure: 'unreachable', cause }))
    request.end(exchange.body)
  })
}

/** Reads the body of a 2xx answer within `maxBytes` when asked to; every other answer is its status and headers. */
function readResponse(response: IncomingMessage, maxBytes: number | undefined, finish: (sent: Sent) => void) {
  const status = response.statusCode ?? 0
  const answer = { status, location: typeof response.headers.location === 'string' ? response.headers.location : undefined, contentType: response.headers['content-type'] }
  if (maxBytes === undefined || status < 200 || status >= 300) return finish({ ok: true, answer: { ...answer, body: new Uint8Array() } })
  const declared = Number(response.headers['content-length'])
  if (Number.isFinite(declared) && declared > maxBytes) return finish({ ok: false, failure: 'too_large' })
  const chunks: Buffer[] = []
  let length = 0
  response.on('data', (chunk: Buffer) => {
    length += chunk.length
    if (length > maxBytes) return finish({ ok: false, failure: 'too_large' })
    chunks.push(chunk)
  })
  response.on('end', () => finish({ ok: true, answer: { ...answer, body: new Uint8Array(Buffer.concat(chunks)) } }))
  response.on('error', (cause) => finish({ ok: false, failure: 'unreachable', cause }))
}
