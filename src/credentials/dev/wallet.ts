import { X509Certificate } from 'node:crypto'
import { digest, ES256, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { base64url, calculateJwkThumbprint, CompactEncrypt, decodeProtectedHeader, importJWK, importX509, jwtVerify, type JWK } from 'jose'
import { x509HashClientId } from '../../keys/verifier-key.ts'
import type { DevCredential } from './issuer.ts'
import { presentDevMdoc } from './mdoc.ts'
import { dcApiSessionTranscript, openId4VpSessionTranscript } from '../openid4vp/session-transcript.ts'

/**
 * A test wallet (`ofage dev wallet`): a holder key and the credentials issued to it. It answers an
 * OpenID4VP request as a conforming wallet does: it fetches the signed request object, checks that its
 * signature belongs to the `x509_hash` client id, discloses one age statement bound to the request's nonce
 * and audience, and posts it to the response URI. Nothing in it knows ofage's internals.
 */
export type DevWallet = { holder: { privateKey: JWK; publicKey: JWK }; credentials: DevCredential[] }

export async function createDevWallet(): Promise<DevWallet> {
  const { privateKey, publicKey } = (await ES256.generateKeyPair()) as { privateKey: JWK; publicKey: JWK }
  return { holder: { privateKey, publicKey }, credentials: [] }
}

type RequestObject = {
  client_id: string
  response_uri: string
  response_mode: string
  nonce: string
  state: string
  dcql_query: { credentials: { id: string; format: string; meta?: { doctype_value?: string }; claims?: { path: string[] }[] }[] }
  client_metadata?: { jwks?: { keys?: JWK[] }; encrypted_response_enc_values_supported?: string[] }
}

/** Where an answer goes: the response URI and client id (cross-device) or the page's origin (Digital Credentials API). */
export type AnswerBinding = ({ clientId: string; responseUri: string } | { origin: string }) & {
  /** The SHA-256 JWK thumbprint of the verifier's key an encrypted answer is sealed to (OpenID4VP 1.0 B.2.6). */
  jwkThumbprint?: Uint8Array
}

/**
 * Reads an `av://` link, the EU age verification app's request (Annex A §A.5): everything is in the link,
 * unsigned; the client id must be `redirect_uri:` and the response URI, where the answer goes in the clear.
 */
export function readAvAppRequest(walletUrl: string): Omit<RequestObject, 'state'> & { state?: string } {
  const link = new URL(walletUrl)
  const parameter = (name: string) => link.searchParams.get(name) ?? undefined
  const [clientId, responseUri, nonce, dcql] = [parameter('client_id'), parameter('response_uri'), parameter('nonce'), parameter('dcql_query')]
  if (link.protocol !== 'av:' || !responseUri || clientId !== `redirect_uri:${responseUri}` || !nonce || !dcql) throw new Error('the link is not an av:// request of Annex A §A.5')
  if (parameter('response_mode') !== 'direct_post') throw new Error(`response mode ${parameter('response_mode')} is not the profile's direct_post`)
  return { client_id: clientId, response_uri: responseUri, response_mode: 'direct_post', nonce, state: parameter('state'), dcql_query: JSON.parse(dcql) }
}

/** Reads `openid4vp://?client_id=…&request_uri=…`, fetches the request and checks who signed it. */
export async function fetchRequest(walletUrl: string, fetcher: typeof fetch = fetch, now = new Date()): Promise<RequestObject> {
  const link = new URL(walletUrl)
  const clientId = link.searchParams.get('client_id')
  const requestUri = link.searchParams.get('request_uri')
  if (!clientId || !requestUri) throw new Error('the link names no client_id and request_uri')
  const response = await fetcher(requestUri)
  if (!response.ok) throw new Error(`the request could not be fetched: HTTP ${response.status}`)
  const jwt = await response.text()
  const header = decodeProtectedHeader(jwt)
  const leaf = Array.isArray(header.x5c) ? header.x5c[0] : undefined
  // OpenID4VP 1.0 §5.9.3: with x509_hash, the client id is the hash of the certificate that signed.
  if (header.typ !== 'oauth-authz-req+jwt' || !leaf || x509HashClientId(leaf) !== clientId) throw new Error('the request is not signed by its client id')
  const pem = new X509Certificate(Buffer.from(leaf, 'base64')).toString()
  const { payload } = await jwtVerify(jwt, await importX509(pem, 'ES256'), { typ: 'oauth-authz-req+jwt', currentDate: now })
  if (payload.client_id !== clientId) throw new Error('the request names another client id than its link')
  return payload as unknown as RequestObject
}

/** The age a query asks about: the last path element, `18` or `age_over_18`. */
function askedAge(query: RequestObject['dcql_query']['credentials'][number]): number {
  const element = query.claims?.[0]?.path.at(-1) ?? ''
  return Number(element.replace(/^age_over_/, ''))
}

/**
 * The `vp_token` for a request: the first of our credentials that one of its queries asks for, disclosing
 * only the age statement asked about. `binding` is where the answer goes: the response URI and client id
 * (cross-device) or the page's origin (Digital Credentials API).
 */
export async function answerRequest(
  wallet: DevWallet,
  request: Pick<RequestObject, 'nonce' | 'dcql_query'>,
  binding: AnswerBinding,
  now: Date,
): Promise<Record<string, string[]>> {
  for (const query of request.dcql_query.credentials) {
    const credential = wallet.credentials.find(
      (held) => held.format === query.format && (held.format !== 'mso_mdoc' || held.docType === query.meta?.doctype_value),
    )
    if (!credential) continue
    const threshold = askedAge(query)
    if (credential.format === 'dc+sd-jwt') {
      const audience = 'origin' in binding ? `origin:${binding.origin}` : binding.clientId
      return { [query.id]: [await presentSdJwt(credential.credential, wallet.holder.privateKey, { threshold, nonce: request.nonce, audience, now })] }
    }
    const sessionTranscript =
      'origin' in binding
        ? dcApiSessionTranscript({ origin: binding.origin, nonce: request.nonce, jwkThumbprint: binding.jwkThumbprint })
        : openId4VpSessionTranscript({ clientId: binding.clientId, nonce: request.nonce, responseUri: binding.responseUri, jwkThumbprint: binding.jwkThumbprint })
    const response = await presentDevMdoc(Buffer.from(credential.credential, 'base64url'), { holderPrivateKey: wallet.holder.privateKey, sessionTranscript, threshold })
    return { [query.id]: [Buffer.from(response).toString('base64url')] }
  }
  throw new Error('the wallet holds no credential this request asks for')
}

async function presentSdJwt(credential: string, holderKey: JWK, options: { threshold: number; nonce: string; audience: string; now: Date }): Promise<string> {
  const instance = new SDJwtVcInstance({ hasher: digest, saltGenerator: generateSalt, kbSigner: await ES256.getSigner(holderKey), kbSignAlg: 'ES256' })
  const claims = (await instance.getClaims(credential)) as { age_equal_or_over?: Record<string, boolean> }
  const held = Object.keys(claims.age_equal_or_over ?? {}).map(Number)
  // The statement asked for if held; else the nearest true one above it, as ISO 18013-5 §7.2.5 does for mdoc.
  const ages = claims.age_equal_or_over ?? {}
  const disclose = held.includes(options.threshold) ? options.threshold : held.filter((age) => age > options.threshold && ages[age]).sort((a, b) => a - b)[0]
  const frame = disclose === undefined ? {} : { age_equal_or_over: { [String(disclose)]: true } }
  return instance.present(credential, frame as never, {
    kb: { payload: { iat: Math.floor(options.now.getTime() / 1000), aud: options.audience, nonce: options.nonce } },
  })
}

/**
 * The verifier's encryption key of a `direct_post.jwt` request (OpenID4VP 1.0 §8.3): the first key of
 * `client_metadata.jwks` for ECDH-ES, and the content encryption it names first.
 */
function encryptionKeyOf(request: Pick<RequestObject, 'client_metadata'>): { key: JWK; enc: string } {
  const key = request.client_metadata?.jwks?.keys?.find((candidate) => candidate.alg === 'ECDH-ES' || candidate.use === 'enc')
  if (!key) throw new Error('the request asks for an encrypted answer but names no encryption key')
  return { key, enc: request.client_metadata?.encrypted_response_enc_values_supported?.[0] ?? 'A128GCM' }
}

/** Answers a wallet link (`openid4vp://` or `av://`) end to end, as a phone would after the QR code was scanned. */
export async function presentToVerifier(wallet: DevWallet, walletUrl: string, options: { now?: Date; fetcher?: typeof fetch; decline?: boolean } = {}) {
  const fetcher = options.fetcher ?? fetch
  const now = options.now ?? new Date()
  const request = walletUrl.startsWith('av:') ? readAvAppRequest(walletUrl) : await fetchRequest(walletUrl, fetcher, now)
  if (request.response_mode !== 'direct_post' && request.response_mode !== 'direct_post.jwt') {
    throw new Error(`response mode ${request.response_mode} is not supported by the test wallet`)
  }
  const encryption = request.response_mode === 'direct_post.jwt' ? encryptionKeyOf(request) : undefined
  const jwkThumbprint = encryption && base64url.decode(await calculateJwkThumbprint(encryption.key, 'sha256'))
  const state: Record<string, string> = request.state === undefined ? {} : { state: request.state }
  const fields: Record<string, string> = options.decline
    ? { error: 'access_denied', ...state }
    : {
        vp_token: JSON.stringify(await answerRequest(wallet, request, { clientId: request.client_id, responseUri: request.response_uri, jwkThumbprint }, now)),
        ...state,
      }
  let body = new URLSearchParams(fields)
  if (encryption) {
    // §8.3.1: the whole answer, state included, is the JWE's payload; the form carries only `response`.
    const payload = options.decline ? fields : { vp_token: JSON.parse(fields.vp_token!), ...state }
    const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: 'ECDH-ES', enc: encryption.enc, ...(encryption.key.kid ? { kid: encryption.key.kid } : {}) })
      .encrypt(await importJWK(encryption.key, 'ECDH-ES'))
    body = new URLSearchParams({ response: jwe })
  }
  const response = await fetcher(request.response_uri, { method: 'POST', body })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}
