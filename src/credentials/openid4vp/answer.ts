import type { JWK } from 'jose'
import type { AnswerResult } from '../presentation.ts'
import { AGE_QUERY_IDS, CREDENTIAL_QUERIES, isCredentialQueryId, type CredentialQueryId } from '../queries.ts'
import { verifySdJwtAgePresentation } from '../sd-jwt-vc/verify.ts'
import type { Revocation } from '../status/revocation.ts'
import type { TrustList } from '../trust/trust-list.ts'
import { responseKeyThumbprint } from './response-encryption-key.ts'

/**
 * OpenID for Verifiable Presentations 1.0, the verifier's side, for one question: is the holder at least
 * `threshold` years old? The answer to our DCQL query (queries.ts) is verified by its format's module,
 * against the query it answers. No routes here: the page, the CLI's test wallet and the tests share it.
 */

/**
 * Where and how the answer came back, by response mode: what the presentation must be bound to.
 * Cross-device (`direct_post`, `direct_post.jwt`): the request's client id and response URI (our `x509_hash`
 * id, or `redirect_uri:` and the response URI for the `av://` request). Digital Credentials API
 * (`dc_api`, `dc_api.jwt`): the page's origin, whether the request was signed or not (Appendix A.4). The
 * encrypted modes add the public key the answer was encrypted to, which an mdoc's transcript names.
 * `responseMode` may be left out for the two unencrypted modes (the shape says which).
 */
export type AnswerBinding =
  | { responseMode?: 'direct_post'; clientId: string; responseUri: string }
  | { responseMode: 'direct_post.jwt'; clientId: string; responseUri: string; encryptionKey: JWK }
  | { responseMode?: 'dc_api'; origin: string }
  | { responseMode: 'dc_api.jwt'; origin: string; encryptionKey: JWK }

export type AnswerCheck = {
  trustList: TrustList
  nonce: string
  threshold: number
  now: Date
  binding: AnswerBinding
  /** Status lists and CRLs, checked last (status/revocation.ts). */
  revocation: Revocation
  /**
   * The credential query ids the request asked under (`ageQuery`'s by default): an answer under any other id
   * answers nothing we asked, and is malformed. The `av://` request asks under `proof_of_age` alone.
   */
  queries?: readonly CredentialQueryId[]
}

/**
 * Verifies a `vp_token` (OpenID4VP 1.0 §8.1: a JSON object from credential query id to an array of
 * presentations). Exactly one presentation for one of our queries is read; anything else is malformed. The
 * presentation must be the credential its query asked for (§6.1: `vct_values`, `doctype_value`): an mDL
 * answered under the age attestation's id, or a credential of another `vct`, is refused.
 */
export async function verifyAgeAnswer(vpToken: unknown, check: AnswerCheck): Promise<AnswerResult> {
  const entries = vpToken && typeof vpToken === 'object' && !Array.isArray(vpToken) ? Object.entries(vpToken) : []
  if (entries.length !== 1) return { valid: false, failure: 'malformed' }
  const [id, presentations] = entries[0]!
  const presentation = Array.isArray(presentations) && presentations.length === 1 ? presentations[0] : undefined
  const asked: readonly string[] = check.queries ?? AGE_QUERY_IDS
  if (!isCredentialQueryId(id) || !asked.includes(id) || typeof presentation !== 'string') return { valid: false, failure: 'malformed' }
  const now = Math.floor(check.now.getTime() / 1000)
  const query = CREDENTIAL_QUERIES[id]
  const { binding } = check
  if (query.format === 'dc+sd-jwt') {
    // Appendix B.3.6: `aud` is the client id, except over the DC API, where it is `origin:` + the origin,
    // "even for signed requests" (A.4): a presentation made for the client id is not one for this page.
    const audience = 'origin' in binding ? `origin:${binding.origin}` : binding.clientId
    return verifySdJwtAgePresentation(presentation, {
      trustList: check.trustList,
      nonce: check.nonce,
      audience,
      threshold: check.threshold,
      now,
      vctValues: query.vctValues,
      revocation: check.revocation,
    })
  }
  const bytes = /^[A-Za-z0-9_-]+$/.test(presentation) ? Buffer.from(presentation, 'base64url') : undefined
  if (!bytes) return { valid: false, failure: 'malformed' }
  // @auth0/mdl loads at the first mdoc presented: a server that never sees one does not hold it.
  const [{ verifyMdocAgePresentation }, sessionTranscript] = await Promise.all([import('../iso-mdoc/verify.ts'), transcriptOf(binding, check.nonce)])
  return verifyMdocAgePresentation(bytes, { trustList: check.trustList, sessionTranscript, threshold: check.threshold, now, docType: query.docType, revocation: check.revocation })
}

/**
 * The SessionTranscript the device must have signed (Appendix B.2.6): for an encrypted response it names
 * the RFC 7638 thumbprint of our encryption key, so an answer re-encrypted to another key is detected.
 */
async function transcriptOf(binding: AnswerBinding, nonce: string): Promise<Uint8Array> {
  const { dcApiSessionTranscript, openId4VpSessionTranscript } = await import('./session-transcript.ts')
  const encrypted = binding.responseMode === 'direct_post.jwt' || binding.responseMode === 'dc_api.jwt'
  const jwkThumbprint = encrypted ? await responseKeyThumbprint(binding.encryptionKey) : undefined
  return 'origin' in binding
    ? dcApiSessionTranscript({ origin: binding.origin, nonce, jwkThumbprint })
    : openId4VpSessionTranscript({ clientId: binding.clientId, nonce, responseUri: binding.responseUri, jwkThumbprint })
}
