import { SignJWT } from 'jose'
import type { VerifierKey } from '../keys/verifier-key.ts'
import type { PresentationResult } from './presentation.ts'
import { verifySdJwtAgePresentation } from './sd-jwt-vc.ts'
import type { TrustList } from './trust-list.ts'

/**
 * OpenID for Verifiable Presentations 1.0, the verifier's side, for one question: is the holder at least
 * `threshold` years old? A DCQL query asks for exactly one age statement from any of the credentials that
 * carry one; the answer is verified by its format's module. No routes here: the page, the CLI's test wallet
 * and the tests share it.
 */

/** SD-JWT VC types of national PIDs that carry `age_equal_or_over` (EUDI PID rulebook, German PID). */
export const PID_VCT_VALUES = ['urn:eudi:pid:1', 'urn:eudi:pid:de:1', 'urn:eu.europa.ec.eudi:pid:1']

/** The credential query ids of our DCQL query, and how each answer is read. */
export const CREDENTIAL_QUERIES = {
  pid_sd_jwt: { format: 'dc+sd-jwt' },
  age_verification_mdoc: { format: 'mso_mdoc', docType: 'eu.europa.ec.av.1', namespace: 'eu.europa.ec.av.1' },
  mdl: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL', namespace: 'org.iso.18013.5.1' },
} as const
type QueryId = keyof typeof CREDENTIAL_QUERIES

/** ISO 18013-5 §7.2.5 names age statements with two digits: age_over_18, age_over_09. */
export function ageOverElement(threshold: number): string {
  return `age_over_${String(threshold).padStart(2, '0')}`
}

/**
 * The DCQL query (OpenID4VP 1.0 §6): one of three credentials, each asked for its single age claim only,
 * so a wallet discloses nothing else. `credential_sets` makes them alternatives, not a conjunction.
 */
export function ageQuery(threshold: number) {
  const element = ageOverElement(threshold)
  const mdoc = (id: 'age_verification_mdoc' | 'mdl') => ({
    id,
    format: 'mso_mdoc',
    meta: { doctype_value: CREDENTIAL_QUERIES[id].docType },
    claims: [{ path: [CREDENTIAL_QUERIES[id].namespace, element], intent_to_retain: false }],
  })
  return {
    credentials: [
      { id: 'pid_sd_jwt', format: 'dc+sd-jwt', meta: { vct_values: PID_VCT_VALUES }, claims: [{ path: ['age_equal_or_over', String(threshold)] }] },
      mdoc('age_verification_mdoc'),
      mdoc('mdl'),
    ],
    credential_sets: [{ options: [['pid_sd_jwt'], ['age_verification_mdoc'], ['mdl']] }],
  }
}

const clientMetadata = {
  vp_formats_supported: {
    'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['ES256'] },
    mso_mdoc: { issuerauth_alg_values: [-7], deviceauth_alg_values: [-7] },
  },
}

export type WalletRequest = { nonce: string; state: string; responseUri: string; threshold: number }

/**
 * The signed request object a wallet fetches from `request_uri` (OpenID4VP 1.0 §5, RFC 9101): typed
 * `oauth-authz-req+jwt`, signed with the key of the `x509_hash` client id, our certificate in `x5c`.
 */
export async function signRequestObject(verifier: VerifierKey, request: WalletRequest, now: Date): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000)
  return new SignJWT({
    client_id: verifier.clientId,
    response_type: 'vp_token',
    response_mode: 'direct_post',
    response_uri: request.responseUri,
    nonce: request.nonce,
    state: request.state,
    dcql_query: ageQuery(request.threshold),
    client_metadata: clientMetadata,
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'oauth-authz-req+jwt', x5c: verifier.x5c })
    // §5.8: a request fetched by reference is addressed to the Self-Issued OP, whoever the wallet is.
    .setAudience('https://self-issued.me/v2')
    .setIssuedAt(iat)
    .setExpirationTime(iat + 300)
    .sign(verifier.privateKey)
}

/** What the QR code and the same-device link carry: the client id and where to fetch the request. */
export function walletLink(verifier: VerifierKey, requestUri: string): string {
  return `openid4vp://?${new URLSearchParams({ client_id: verifier.clientId, request_uri: requestUri })}`
}

/**
 * The Digital Credentials API request (OpenID4VP 1.0 Appendix A): unsigned, answered to the page's
 * script (`dc_api`); the browser binds it to our origin, so the audience is `origin:<origin>`.
 */
export function digitalCredentialsRequest(nonce: string, threshold: number) {
  return {
    protocol: 'openid4vp-v1-unsigned',
    data: { response_type: 'vp_token', response_mode: 'dc_api', nonce, dcql_query: ageQuery(threshold), client_metadata: clientMetadata },
  }
}

export type AnswerCheck = {
  trustList: TrustList
  nonce: string
  threshold: number
  now: Date
  /** Cross-device: our client id and response URI; same device: the page's origin. */
  binding: { clientId: string; responseUri: string } | { origin: string }
}

/**
 * Verifies a `vp_token` (OpenID4VP 1.0 §8.1: a JSON object from credential query id to an array of
 * presentations). Exactly one presentation for one of our queries is read; anything else is malformed.
 */
export async function verifyAgeAnswer(vpToken: unknown, check: AnswerCheck): Promise<PresentationResult> {
  const entries = vpToken && typeof vpToken === 'object' && !Array.isArray(vpToken) ? Object.entries(vpToken) : []
  if (entries.length !== 1) return { valid: false, failure: 'malformed' }
  const [id, presentations] = entries[0]!
  const presentation = Array.isArray(presentations) && presentations.length === 1 ? presentations[0] : undefined
  if (!Object.hasOwn(CREDENTIAL_QUERIES, id) || typeof presentation !== 'string') return { valid: false, failure: 'malformed' }
  const now = Math.floor(check.now.getTime() / 1000)
  const query = CREDENTIAL_QUERIES[id as QueryId]
  if (query.format === 'dc+sd-jwt') {
    const audience = 'origin' in check.binding ? `origin:${check.binding.origin}` : check.binding.clientId
    return verifySdJwtAgePresentation(presentation, { trustList: check.trustList, nonce: check.nonce, audience, threshold: check.threshold, now })
  }
  // @auth0/mdl loads at the first mdoc presented: a server that never sees one does not hold it.
  const { dcApiSessionTranscript, openId4VpSessionTranscript, verifyMdocAgePresentation } = await import('./mdoc.ts')
  const sessionTranscript =
    'origin' in check.binding
      ? dcApiSessionTranscript({ origin: check.binding.origin, nonce: check.nonce })
      : openId4VpSessionTranscript({ clientId: check.binding.clientId, nonce: check.nonce, responseUri: check.binding.responseUri })
  const bytes = /^[A-Za-z0-9_-]+$/.test(presentation) ? Buffer.from(presentation, 'base64url') : undefined
  if (!bytes) return { valid: false, failure: 'malformed' }
  return verifyMdocAgePresentation(bytes, { trustList: check.trustList, sessionTranscript, threshold: check.threshold, now })
}
