/**
 * The one DCQL registry (OpenID4VP 1.0 §6): which credentials we ask for, and what an answer under each
 * query id must be. The request (`ageQuery`) and the verifier (`openid4vp/answer.ts`) both read it, so what
 * we ask for and what we accept cannot drift apart.
 */

/** SD-JWT VC types of national PIDs that carry `age_equal_or_over` (EUDI PID rulebook, German PID). */
export const PID_VCT_VALUES = ['urn:eudi:pid:1', 'urn:eudi:pid:de:1', 'urn:eu.europa.ec.eudi:pid:1'] as const

/** The credential query ids of our DCQL query: each answer must be of the format and type its query names. */
export const CREDENTIAL_QUERIES = {
  pid_sd_jwt: { format: 'dc+sd-jwt', vctValues: PID_VCT_VALUES },
  /** The EU age verification blueprint's Proof of Age attestation. */
  age_verification_mdoc: { format: 'mso_mdoc', docType: 'eu.europa.ec.av.1', namespace: 'eu.europa.ec.av.1' },
  /** ISO 18013-5 mobile driving licence. */
  mdl: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL', namespace: 'org.iso.18013.5.1' },
  /**
   * The same attestation, asked for by the EU age verification app's own profile (`av://`, Annex A §A.5),
   * under the query id of its example (§A.10): an app built on that example finds what it expects.
   */
  proof_of_age: { format: 'mso_mdoc', docType: 'eu.europa.ec.av.1', namespace: 'eu.europa.ec.av.1' },
} as const

export type CredentialQueryId = keyof typeof CREDENTIAL_QUERIES
export type CredentialQuery = (typeof CREDENTIAL_QUERIES)[CredentialQueryId]
export type MdocQuery = Extract<CredentialQuery, { format: 'mso_mdoc' }>
/** A doc type whose age statements we accept. */
export type AgeDocType = MdocQuery['docType']

/** The mdoc doc types we ask for, and the namespace each keeps its age statements in. */
export const AGE_DOC_TYPES: Record<AgeDocType, string> = Object.fromEntries(
  Object.values(CREDENTIAL_QUERIES).flatMap((query) => (query.format === 'mso_mdoc' ? [[query.docType, query.namespace]] : [])),
) as Record<AgeDocType, string>

export function isCredentialQueryId(id: string): id is CredentialQueryId {
  return Object.hasOwn(CREDENTIAL_QUERIES, id)
}

/** ISO 18013-5 §7.2.5 names age statements with two digits: age_over_18, age_over_09. */
export function ageOverElement(threshold: number): string {
  return `age_over_${String(threshold).padStart(2, '0')}`
}

/** The query ids `ageQuery` asks under: an answer to one of our HAIP requests must use one of these. */
export const AGE_QUERY_IDS = ['pid_sd_jwt', 'age_verification_mdoc', 'mdl'] as const satisfies readonly CredentialQueryId[]

/** The query id of the `av://` request (`avAppQuery`): the only one its answer may use. */
export const AV_APP_QUERY_IDS = ['proof_of_age'] as const satisfies readonly CredentialQueryId[]

/**
 * The DCQL query (OpenID4VP 1.0 §6): one of three credentials, each asked for its single age claim only,
 * so a wallet discloses nothing else. `credential_sets` makes them alternatives, not a conjunction.
 */
export function ageQuery(threshold: number) {
  const element = ageOverElement(threshold)
  return {
    credentials: [
      { id: 'pid_sd_jwt', format: 'dc+sd-jwt', meta: { vct_values: [...PID_VCT_VALUES] }, claims: [{ path: ['age_equal_or_over', String(threshold)] }] },
      mdocQuery('age_verification_mdoc', element),
      mdocQuery('mdl', element),
    ],
    credential_sets: [{ options: [['pid_sd_jwt'], ['age_verification_mdoc'], ['mdl']] }],
  }
}

/**
 * The DCQL query of the EU age verification app's profile (Annex A §A.5, example in §A.10): the Proof of
 * Age attestation (`mso_mdoc`, doc type `eu.europa.ec.av.1`) and its one `age_over_NN` claim. The app holds
 * nothing else, so there is nothing to offer instead.
 */
export function avAppQuery(threshold: number) {
  const { docType, namespace } = CREDENTIAL_QUERIES.proof_of_age
  // As §A.10 writes it: the claim's path alone (no `intent_to_retain`), since every character counts in a QR code.
  return { credentials: [{ id: 'proof_of_age', format: 'mso_mdoc', meta: { doctype_value: docType }, claims: [{ path: [namespace, ageOverElement(threshold)] }] }] }
}

function mdocQuery(id: 'age_verification_mdoc' | 'mdl', element: string) {
  return {
    id,
    format: 'mso_mdoc',
    meta: { doctype_value: CREDENTIAL_QUERIES[id].docType },
    claims: [{ path: [CREDENTIAL_QUERIES[id].namespace, element], intent_to_retain: false }],
  }
}
