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
      { id: 'pid_sd_jwt', format: 'dc+sd-jwt', meta: { vct_values: [...PID_VCT_VALUES] }, claims: [{ path: ['age_equal_or_over', String(threshold)] }] },
      mdoc('age_verification_mdoc'),
      mdoc('mdl'),
    ],
    credential_sets: [{ options: [['pid_sd_jwt'], ['age_verification_mdoc'], ['mdl']] }],
  }
}
