import type { PresentationResult } from '../presentation.ts'
import { CREDENTIAL_QUERIES, isCredentialQueryId } from '../queries.ts'
import { verifySdJwtAgePresentation } from '../sd-jwt-vc/verify.ts'
import type { TrustList } from '../trust/trust-list.ts'

/**
 * OpenID for Verifiable Presentations 1.0, the verifier's side, for one question: is the holder at least
 * `threshold` years old? The answer to our DCQL query (queries.ts) is verified by its format's module,
 * against the query it answers. No routes here: the page, the CLI's test wallet and the tests share it.
 */

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
 * presentations). Exactly one presentation for one of our queries is read; anything else is malformed. The
 * presentation must be the credential its query asked for (§6.1: `vct_values`, `doctype_value`): an mDL
 * answered under the age attestation's id, or a credential of another `vct`, is refused.
 */
export async function verifyAgeAnswer(vpToken: unknown, check: AnswerCheck): Promise<PresentationResult> {
  const entries = vpToken && typeof vpToken === 'object' && !Array.isArray(vpToken) ? Object.entries(vpToken) : []
  if (entries.length !== 1) return { valid: false, failure: 'malformed' }
  const [id, presentations] = entries[0]!
  const presentation = Array.isArray(presentations) && presentations.length === 1 ? presentations[0] : undefined
  if (!isCredentialQueryId(id) || typeof presentation !== 'string') return { valid: false, failure: 'malformed' }
  const now = Math.floor(check.now.getTime() / 1000)
  const query = CREDENTIAL_QUERIES[id]
  if (query.format === 'dc+sd-jwt') {
    const audience = 'origin' in check.binding ? `origin:${check.binding.origin}` : check.binding.clientId
    return verifySdJwtAgePresentation(presentation, { trustList: check.trustList, nonce: check.nonce, audience, threshold: check.threshold, now, vctValues: query.vctValues })
  }
  // @auth0/mdl loads at the first mdoc presented: a server that never sees one does not hold it.
  const [{ verifyMdocAgePresentation }, { dcApiSessionTranscript, openId4VpSessionTranscript }] = await Promise.all([
    import('../iso-mdoc/verify.ts'),
    import('./session-transcript.ts'),
  ])
  const sessionTranscript =
    'origin' in check.binding
      ? dcApiSessionTranscript({ origin: check.binding.origin, nonce: check.nonce })
      : openId4VpSessionTranscript({ clientId: check.binding.clientId, nonce: check.nonce, responseUri: check.binding.responseUri })
  const bytes = /^[A-Za-z0-9_-]+$/.test(presentation) ? Buffer.from(presentation, 'base64url') : undefined
  if (!bytes) return { valid: false, failure: 'malformed' }
  return verifyMdocAgePresentation(bytes, { trustList: check.trustList, sessionTranscript, threshold: check.threshold, now, docType: query.docType })
}
