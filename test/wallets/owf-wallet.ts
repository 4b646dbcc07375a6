import { createHash, X509Certificate } from 'node:crypto'
import { Openid4vpClient } from '@openid4vc/openid4vp'
import { CoseKey, DeviceKey, DeviceRequest, DeviceResponse, DocRequest, IssuerSigned, Issuer, ItemsRequest, SessionTranscript, SignatureAlgorithm } from '@owf/mdoc'
import { SDJwtInstance } from '@sd-jwt/core'
import { DcqlQuery, type DcqlCredential } from 'dcql'
import type { JWK } from 'jose'
import { thumbprint } from './jwe-encrypt.ts'
import { mdocContext, openid4vpCallbacks, type Fetcher } from './owf-context.ts'

/**
 * A wallet that nobody here wrote, as far as a wallet can be: the Open Wallet Foundation libraries the Credo
 * framework is built on. @openid4vc/openid4vp parses our link, fetches and checks the signed request (the
 * `x509_hash` client id, or `expected_origins` over the Digital Credentials API) and writes and posts the
 * encrypted answer; dcql matches the query against what the wallet holds; @owf/mdoc issues the mdoc and
 * presents it as a DeviceResponse over the OpenID4VP session transcript; @sd-jwt/core presents the PID with its
 * key-binding JWT. Only what the libraries leave to their caller is written here (owf-context.ts), as Credo
 * writes it: which credential to offer, the session transcript's inputs, the KB-JWT's audience. When a release
 * of these libraries stops working with our verifier, this wallet's tests fail in our CI, not at a visitor's.
 */

/** An mdoc as the wallet stores it: the IssuerSigned @owf/mdoc issued, CBOR. */
export type OwfMdoc = { format: 'mso_mdoc'; issuerSigned: Uint8Array }
/** An SD-JWT VC as issued: compact, disclosures and all. */
export type OwfSdJwt = { format: 'dc+sd-jwt'; credential: string }
export type OwfWallet = { holder: { privateKey: JWK; publicKey: JWK }; credentials: (OwfMdoc | OwfSdJwt)[] }

/** What issues an mdoc: the document signer's key and certificate (PEM), as the test PKI makes them. */
export type MdocSigner = { signerKey: JWK; signerCertificate: string }

/**
 * Issues an age mdoc with @owf/mdoc's Issuer: `age_over_NN` elements in `namespace`, an MSO signed ES256 by the
 * document signer, its certificate in x5chain, bound to the holder's key. @owf/mdoc 0.6 writes no MSO `status`.
 */
export async function issueOwfMdoc(
  signer: MdocSigner,
  options: { docType: string; namespace: string; ages: Record<string, boolean>; holderPublicKey: JWK; validFrom: Date; validUntil: Date },
): Promise<OwfMdoc> {
  const elements = Object.fromEntries(Object.entries(options.ages).map(([age, over]) => [`age_over_${age.padStart(2, '0')}`, over]))
  const issuerSigned = await new Issuer(options.docType, mdocContext).addIssuerNamespace(options.namespace, elements).sign({
    signingKey: CoseKey.fromJwk({ ...signer.signerKey }),
    algorithm: SignatureAlgorithm.ES256,
    digestAlgorithm: 'SHA-256',
    validityInfo: { signed: options.validFrom, validFrom: options.validFrom, validUntil: options.validUntil },
    deviceKeyInfo: { deviceKey: DeviceKey.fromJwk({ ...options.holderPublicKey }) },
    certificates: [new Uint8Array(new X509Certificate(signer.signerCertificate).raw)],
  })
  return { format: 'mso_mdoc', issuerSigned: issuerSigned.encode() }
}

export type OwfAnswerOptions = {
  /** How the wallet reaches the verifier. */
  fetcher: Fetcher
  /** When the KB-JWT is made (its `iat`). */
  now: Date
  /**
   * Give the device key the `alg` it signs with (ES256), as Credo does before presenting. Without one,
   * @owf/mdoc 0.6 writes `{1: undefined}` as the DeviceSignature's protected header.
   */
  deviceKeyAlg?: boolean
}

type Resolved = Awaited<ReturnType<Openid4vpClient['resolveOpenId4vpAuthorizationRequest']>>
type RequestPayload = Resolved['authorizationRequestPayload']
/** Where the answer is bound (OpenID4VP 1.0 B.2.6, B.3.6): the client id and response URI, or the page's origin. */
type Binding = { clientId: string; responseUri: string } | { origin: string }

/**
 * Answers a cross-device request as a phone would after scanning the QR code: the library parses the link (an
 * `openid4vp://` request by reference, fetched and checked; or an `av://` request by value under a `redirect_uri:`
 * client id), the wallet answers, and the library posts `response=<JWE>` (`direct_post.jwt`) or the plain
 * parameters (`direct_post`) to the response URI.
 */
export async function answerWithOwfWallet(wallet: OwfWallet, walletUrl: string, options: OwfAnswerOptions): Promise<{ status: number; body: unknown }> {
  const client = new Openid4vpClient({ callbacks: openid4vpCallbacks(options.fetcher) })
  const { params } = client.parseOpenid4vpAuthorizationRequest({ authorizationRequest: walletUrl })
  const resolved = await client.resolveOpenId4vpAuthorizationRequest({ authorizationRequestPayload: params })
  const request = resolved.authorizationRequestPayload
  const responseUri = typeof request.response_uri === 'string' ? request.response_uri : undefined
  // The prefixes our two links use: `x509_hash` (signed, by reference) and `redirect_uri` (the `av://` profile, by value).
  if ((resolved.client.prefix !== 'x509_hash' && resolved.client.prefix !== 'redirect_uri') || !responseUri) throw new Error(`not a cross-device request we expect (${resolved.client.prefix})`)
  const response = await createResponse(client, wallet, request, { clientId: resolved.client.effective, responseUri }, options)
  const submitted = await client.submitOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: { response_uri: responseUri },
    authorizationResponsePayload: response.authorizationResponsePayload,
    jarm: response.jarm && { responseJwt: response.jarm.responseJwt },
  })
  return { status: submitted.response.status, body: await submitted.response.json().catch(() => undefined) }
}

/**
 * Answers a Digital Credentials API request (`openid4vp-v1-signed` or `-unsigned`) as the browser hands it to the
 * wallet, called from `origin`; returns the `data` the page gets back: `{ response: <JWE> }` for `dc_api.jwt`.
 */
export async function answerDcApiWithOwfWallet(wallet: OwfWallet, dcRequest: { protocol: string; data: unknown }, options: OwfAnswerOptions & { origin: string }) {
  const client = new Openid4vpClient({ callbacks: openid4vpCallbacks(options.fetcher) })
  const { params } = client.parseOpenid4vpAuthorizationRequest({ authorizationRequest: dcRequest.data as Record<string, unknown> })
  const resolved = await client.resolveOpenId4vpAuthorizationRequest({ authorizationRequestPayload: params, origin: options.origin })
  if ((dcRequest.protocol === 'openid4vp-v1-signed') !== (resolved.jar !== undefined)) throw new Error(`a ${dcRequest.protocol} request ${resolved.jar ? 'signed' : 'unsigned'}`)
  const response = await createResponse(client, wallet, resolved.authorizationRequestPayload, { origin: options.origin }, options)
  return response.jarm ? { response: response.jarm.responseJwt } : response.authorizationResponsePayload
}

/** The `vp_token` for the request, in an authorization response the library encrypts where the request asks. */
async function createResponse(client: Openid4vpClient, wallet: OwfWallet, request: RequestPayload, binding: Binding, options: OwfAnswerOptions) {
  const encrypted = request.response_mode === 'direct_post.jwt' || request.response_mode === 'dc_api.jwt'
  const jwks = request.client_metadata?.jwks?.keys ?? []
  // As Credo picks it: the request's key for ECDH-ES (extractEncryptionJwkFromJwks with that alg).
  const encryptionJwk = encrypted ? (jwks.find((key) => key.alg === 'ECDH-ES') ?? jwks[0]) : undefined
  if (encrypted && !encryptionJwk) throw new Error('the request names no key to encrypt to')
  const vpToken = await presentAge(wallet, request, binding, encryptionJwk && (await thumbprint(encryptionJwk)), options)
  return client.createOpenid4vpAuthorizationResponse({
    authorizationRequestPayload: request,
    origin: 'origin' in binding ? binding.origin : undefined,
    authorizationResponsePayload: { vp_token: vpToken },
    jarm: encryptionJwk && {
      encryption: { nonce: crypto.randomUUID(), jwk: encryptionJwk },
      serverMetadata: { authorization_signing_alg_values_supported: [], authorization_encryption_alg_values_supported: ['ECDH-ES'], authorization_encryption_enc_values_supported: ['A128GCM', 'A256GCM'] },
    },
  })
}

/**
 * Matches the DCQL query against the wallet with dcql (the first option of the first credential set it can
 * satisfy, or the first query it matches), and presents the one credential that answers it.
 */
async function presentAge(wallet: OwfWallet, request: RequestPayload, binding: Binding, jwkThumbprint: Uint8Array | undefined, options: OwfAnswerOptions): Promise<Record<string, [string]>> {
  const query = DcqlQuery.parse(request.dcql_query as DcqlQuery.Input)
  DcqlQuery.validate(query)
  const held = await Promise.all(wallet.credentials.map(dcqlCredentialOf))
  const result = DcqlQuery.query(query, held)
  if (!result.can_be_satisfied) throw new Error('the wallet holds nothing this request asks for')
  const queryId = result.credential_sets?.[0]?.matching_options?.[0]?.[0] ?? Object.keys(result.credential_matches).find((id) => result.credential_matches[id]?.success)
  const match = queryId === undefined ? undefined : result.credential_matches[queryId]
  if (!queryId || !match?.success) throw new Error('dcql found no credential to present')
  const { input_credential_index: index, claims } = match.valid_credentials[0]!
  const credential = wallet.credentials[index]!
  const disclosed = claims.success ? claims.valid_claim_sets[0]!.output : {}
  if (credential.format === 'dc+sd-jwt') {
    // OpenID4VP 1.0 B.3.6: the KB-JWT's `aud` is the client id, or `origin:` and the origin over the DC API.
    const audience = 'origin' in binding ? `origin:${binding.origin}` : binding.clientId
    return { [queryId]: [await presentSdJwt(credential, wallet.holder.privateKey, disclosed, { audience, nonce: request.nonce, now: options.now })] }
  }
  const presentation = { binding, nonce: request.nonce, jwkThumbprint, deviceKeyAlg: options.deviceKeyAlg ?? true }
  return { [queryId]: [await presentOwfMdoc(credential, wallet.holder.privateKey, disclosed as Record<string, Record<string, unknown>>, presentation)] }
}

/** What dcql matches a query against: the claims of a credential as the wallet reads them with the libraries. */
async function dcqlCredentialOf(credential: OwfMdoc | OwfSdJwt): Promise<DcqlCredential> {
  if (credential.format === 'dc+sd-jwt') {
    const claims = (await new SDJwtInstance({ hasher }).getClaims(credential.credential)) as { vct: string }
    return { credential_format: 'dc+sd-jwt', vct: claims.vct, claims, cryptographic_holder_binding: true }
  }
  const signed = IssuerSigned.decode(credential.issuerSigned)
  const namespaces = Object.fromEntries([...signed.issuerNamespaces.issuerNamespaces.keys()].map((namespace) => [namespace, signed.getPrettyClaims(namespace) ?? {}]))
  return { credential_format: 'mso_mdoc', doctype: signed.issuerAuth.mobileSecurityObject.docType, namespaces, cryptographic_holder_binding: true }
}

const hasher = (data: string | ArrayBuffer, alg: string) => new Uint8Array(createHash(alg.replace('-', '').toLowerCase()).update(typeof data === 'string' ? data : new Uint8Array(data)).digest())

/**
 * A DeviceResponse with one document, disclosing the claims dcql matched, made as Credo
 * makes it: a DeviceRequest for them, then DeviceResponse.createWithDeviceRequest over the session transcript
 * @owf/mdoc computes (B.2.6.1 `OpenID4VPHandover`, B.2.6.2 `OpenID4VPDCAPIHandover`), signed by the device key.
 */
export async function presentOwfMdoc(
  mdoc: OwfMdoc,
  holderKey: JWK,
  disclosed: Record<string, Record<string, unknown>>,
  options: { binding: Binding; nonce: string; jwkThumbprint: Uint8Array | undefined; deviceKeyAlg: boolean },
): Promise<string> {
  const namespaces = Object.fromEntries(Object.entries(disclosed).map(([namespace, elements]) => [namespace, Object.fromEntries(Object.keys(elements).map((element) => [element, false]))]))
  const issuerSigned = IssuerSigned.decode(mdoc.issuerSigned)
  const docType = issuerSigned.issuerAuth.mobileSecurityObject.docType
  const deviceRequest = DeviceRequest.create({ version: '1.0', docRequests: [DocRequest.create({ itemsRequest: ItemsRequest.create({ docType, namespaces }) })] })
  const { binding, nonce, jwkThumbprint } = options
  const sessionTranscript =
    'origin' in binding
      ? await SessionTranscript.forOid4VpDcApi({ origin: binding.origin, nonce, jwkThumbprint }, mdocContext)
      : await SessionTranscript.forOid4Vp({ clientId: binding.clientId, responseUri: binding.responseUri, nonce, jwkThumbprint }, mdocContext)
  const signingKey = CoseKey.fromJwk({ ...holderKey, ...(options.deviceKeyAlg && { alg: 'ES256' }) })
  const response = await DeviceResponse.createWithDeviceRequest({ deviceRequest, sessionTranscript, issuerSigned: [issuerSigned], signature: { signingKey } }, mdocContext)
  return response.encodedForOid4Vp
}

/** The SD-JWT with the disclosures dcql matched and a KB-JWT (ES256) over the nonce and audience, by @sd-jwt/core. */
async function presentSdJwt(held: OwfSdJwt, holderKey: JWK, disclosed: Record<string, unknown>, options: { audience: string; nonce: string; now: Date }): Promise<string> {
  const key = await crypto.subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: holderKey.x, y: holderKey.y, d: holderKey.d }, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign'])
  const sdJwt = new SDJwtInstance({
    hasher,
    kbSignAlg: 'ES256',
    kbSigner: async (data) => Buffer.from(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key, new TextEncoder().encode(data))).toString('base64url'),
  })
  const frame = Object.fromEntries(Object.entries(disclosed).map(([name, value]) => [name, framed(value)]))
  return sdJwt.present(held.credential, frame as never, { kb: { payload: { iat: Math.floor(options.now.getTime() / 1000), aud: options.audience, nonce: options.nonce } } })
}

/** A presentation frame (@sd-jwt) for the claims dcql matched: `true` at each disclosed leaf. */
function framed(value: unknown): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, framed(inner)])) : true
}

