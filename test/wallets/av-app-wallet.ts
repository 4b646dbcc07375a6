import type { JWK } from 'jose'
import { presentMdoc, type MdocPresentation } from './mdoc.ts'
import { walletSessionTranscript } from './openid4vp-handover.ts'

/**
 * A test wallet that plays the EU age verification app in its fallback (technical specification, Annex A
 * §A.5, "OpenID for Verifiable Presentations profile requirements"), written from that section and
 * OpenID4VP 1.0 alone: it is invoked by an `av://` link, reads the request by value from the link's query,
 * requires response type `vp_token`, response mode `direct_post`, a client id `redirect_uri:` followed by the
 * response URI, a nonce and a DCQL query for the Proof of Age attestation (`mso_mdoc`, `eu.europa.ec.av.1`),
 * and posts `vp_token` form-encoded to the response URI. Nothing is signed and nothing encrypted: the
 * profile relies on TLS and the Web PKI (§A.9). The DeviceResponse comes from test/wallets/mdoc.ts and its
 * SessionTranscript from test/wallets/openid4vp-handover.ts, neither of them the verifier's code.
 */

/** What the app reads from the link: where to answer, bound to what, and which claim is asked for. */
export type AvAppRequest = {
  clientId: string
  responseUri: string
  nonce: string
  /** §A.5: optional; returned as received when present (OpenID4VP 1.0 §8.2). */
  state: string | undefined
  /** The credential query the app answers: its id, and the one `age_over_NN` it asks about. */
  query: { id: string; namespace: string; element: string }
}

/** Why the app refuses a link, before it shows the user anything. */
export type AvLinkRefusal = 'not_av' | 'by_reference' | 'response_type' | 'response_mode' | 'client_id' | 'not_https' | 'nonce' | 'dcql_query'

/** The doc type and namespace of the Proof of Age attestation (Annex A §A.10's example). */
const AV_DOCTYPE = 'eu.europa.ec.av.1'

/**
 * Reads an `av://` link (§A.5). The client id prefix `redirect_uri` means the client id, less its prefix,
 * is the response URI (OpenID4VP 1.0 §5.9.3), which must then be the `response_uri` parameter; a
 * `redirect_uri` parameter must not be present with `direct_post` (§8.2). The answer goes over TLS, the
 * profile's only protection, so the response URI must be https (plain http only for the names RFC 6761
 * reserves for tests and loopback, where the tests run).
 */
export function readAvLink(link: string): { ok: true; request: AvAppRequest } | { ok: false; refusal: AvLinkRefusal } {
  let url: URL
  try {
    url = new URL(link)
  } catch {
    return { ok: false, refusal: 'not_av' }
  }
  const get = (name: string) => url.searchParams.get(name) ?? undefined
  if (url.protocol !== 'av:') return { ok: false, refusal: 'not_av' }
  if (get('request') !== undefined || get('request_uri') !== undefined) return { ok: false, refusal: 'by_reference' }
  if (get('response_type') !== 'vp_token') return { ok: false, refusal: 'response_type' }
  if (get('response_mode') !== 'direct_post' || get('redirect_uri') !== undefined) return { ok: false, refusal: 'response_mode' }
  const responseUri = get('response_uri')
  const clientId = get('client_id')
  if (!responseUri || clientId !== `redirect_uri:${responseUri}`) return { ok: false, refusal: 'client_id' }
  if (!isSecureOrTestAddress(responseUri)) return { ok: false, refusal: 'not_https' }
  const nonce = get('nonce')
  if (!nonce) return { ok: false, refusal: 'nonce' }
  const query = readAgeQuery(get('dcql_query'))
  if (!query) return { ok: false, refusal: 'dcql_query' }
  return { ok: true, request: { clientId, responseUri, nonce, state: get('state'), query } }
}

function isSecureOrTestAddress(address: string): boolean {
  try {
    const { protocol, hostname } = new URL(address)
    return protocol === 'https:' || (protocol === 'http:' && (hostname === 'localhost' || hostname === '127.0.0.1' || hostname.endsWith('.test')))
  } catch {
    return false
  }
}

type DcqlCredential = { id?: unknown; format?: unknown; meta?: { doctype_value?: unknown }; claims?: { path?: unknown }[] }

/** The first credential query the app can answer: an `mso_mdoc` of the AV doc type asking for one `age_over_NN`. */
function readAgeQuery(text: string | undefined): AvAppRequest['query'] | undefined {
  let dcql: { credentials?: DcqlCredential[] }
  try {
    dcql = JSON.parse(text ?? '')
  } catch {
    return undefined
  }
  for (const credential of Array.isArray(dcql?.credentials) ? dcql.credentials : []) {
    const path = credential.claims?.[0]?.path
    if (credential.format !== 'mso_mdoc' || credential.meta?.doctype_value !== AV_DOCTYPE || typeof credential.id !== 'string') continue
    if (!Array.isArray(path) || path.length !== 2 || path[0] !== AV_DOCTYPE || !/^age_over_\d{2}$/.test(String(path[1]))) continue
    return { id: credential.id, namespace: path[0], element: path[1] }
  }
  return undefined
}

/** The attestation the app holds (an issued Document, test/wallets/mdoc.ts `issueMdoc`) and its device key. */
export type AvAppHolder = { mdoc: Uint8Array; privateKey: JWK }

export type AvAnswerOptions = {
  /** The user declines: `error=access_denied` instead of a `vp_token` (OpenID4VP 1.0 §8.5). */
  decline?: boolean
  /** Plays an app that signs over another nonce than the request's. */
  nonce?: string
  /** How the holder presents; by default test/wallets/mdoc.ts `presentMdoc` as asked. */
  present?: (mdoc: Uint8Array, presentation: MdocPresentation) => Promise<Uint8Array>
}

/**
 * The form the app posts (`direct_post`, OpenID4VP 1.0 §8.2): `vp_token`, the JSON object of the query id
 * to one base64url DeviceResponse (§8.1, Appendix B.2.5), whose device signature covers the SessionTranscript
 * of a request by link (Appendix B.2.6.1) with the `redirect_uri:` client id, the nonce, null for the key
 * thumbprint (the answer is not encrypted) and the response URI. `state` is returned when it was sent.
 */
export async function buildAvAnswer(request: AvAppRequest, holder: AvAppHolder, options: AvAnswerOptions = {}): Promise<URLSearchParams> {
  const fields: Record<string, string> = {}
  if (options.decline) fields.error = 'access_denied'
  else {
    const sessionTranscript = await walletSessionTranscript({ clientId: request.clientId, responseUri: request.responseUri, jwkThumbprint: null }, options.nonce ?? request.nonce)
    const threshold = Number(request.query.element.slice('age_over_'.length))
    const deviceResponse = await (options.present ?? presentMdoc)(holder.mdoc, { holderPrivateKey: holder.privateKey, sessionTranscript, threshold })
    fields.vp_token = JSON.stringify({ [request.query.id]: [Buffer.from(deviceResponse).toString('base64url')] })
  }
  if (request.state !== undefined) fields.state = request.state
  return new URLSearchParams(fields)
}

/** Posts a form to a response URI as the app does: no redirect followed (OpenID4VP 1.0 §8.2, "HTTP Redirects"). */
export async function postAvAnswer(responseUri: string, body: URLSearchParams, fetcher: typeof fetch = fetch): Promise<{ status: number; body: unknown }> {
  const response = await fetcher(responseUri, { method: 'POST', body, redirect: 'manual' })
  return { status: response.status, body: await response.json().catch(() => undefined) }
}

/** Scans an `av://` link and answers it end to end; `sent` is what was posted, for replays. */
export async function answerAvLink(
  link: string,
  holder: AvAppHolder,
  options: AvAnswerOptions & { fetcher?: typeof fetch } = {},
): Promise<{ status: number; body: unknown; sent: { url: string; body: URLSearchParams } }> {
  const read = readAvLink(link)
  if (!read.ok) throw new Error(`the app refuses the link: ${read.refusal}`)
  const body = await buildAvAnswer(read.request, holder, options)
  return { ...(await postAvAnswer(read.request.responseUri, body, options.fetcher)), sent: { url: read.request.responseUri, body } }
}
