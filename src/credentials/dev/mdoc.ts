import type { JWK } from 'jose'
import { mdl } from '../iso-mdoc/cbor-env.ts'
import { sessionTranscriptBytes } from '../iso-mdoc/verify.ts'
import { AGE_DOC_TYPES, type AgeDocType } from '../queries.ts'

/**
 * A development issuer and holder of age mdocs, for tests and `ofage dev wallet`: what a national issuer
 * and a wallet would do, with the same library, and keys the caller hands in. Nothing here is trusted by
 * itself: its mdocs verify only where the caller's root is in the trust list.
 */

/** What the development issuer needs: its key and certificate, the wallet's key, and what to state. */
export type DevMdocIssue = {
  /** The document signer's private key, EC P-256 (ES256). */
  signerKey: JWK
  /** The document signer's certificate (PEM), issued by a root the verifier trusts (the IACA). */
  signerCertificate: string
  /** The wallet's public key, EC P-256: the device key the mdoc is bound to. */
  holderPublicKey: JWK
  docType: AgeDocType
  /** Age statements by NN, e.g. `{ '16': true, '18': true, '21': false }`; an empty object issues none. */
  ages: Record<string, boolean>
  validFrom: Date
  validUntil: Date
}

/**
 * Issues an mdoc (ISO 18013-5 IssuerSigned, in a DeviceResponse-shaped MDoc as @auth0/mdl encodes it)
 * carrying only `age_over_NN` elements, signed on `validFrom`.
 */
export async function issueDevMdoc(issue: DevMdocIssue): Promise<Uint8Array> {
  const elements = Object.fromEntries(Object.entries(issue.ages).map(([age, over]) => [ageOverElement(Number(age)), over]))
  const document = await new (mdl().Document)(issue.docType)
    .addIssuerNameSpace(AGE_DOC_TYPES[issue.docType], elements)
    .useDigestAlgorithm('SHA-256')
    .addValidityInfo({ signed: issue.validFrom, validFrom: issue.validFrom, validUntil: issue.validUntil })
    .addDeviceKeyInfo({ deviceKey: issue.holderPublicKey })
    // The library imports a JWK with the algorithm it names, so name it (also for the device key below).
    .sign({ issuerPrivateKey: { ...issue.signerKey, alg: 'ES256' }, issuerCertificate: issue.signerCertificate, alg: 'ES256' })
  return new (mdl().MDoc)([document]).encode()
}

/** What the development wallet needs to answer one request. */
export type DevMdocPresentation = {
  /** The wallet's private key, the pair of the issued `holderPublicKey`. */
  holderPrivateKey: JWK
  /** The verifier's SessionTranscript (`openId4VpSessionTranscript` or `dcApiSessionTranscript`). */
  sessionTranscript: Uint8Array
  threshold: number
}

/**
 * Presents an issued mdoc as a DeviceResponse that discloses a single age statement, the nearest one of
 * ISO 18013-5 §7.2.5 (as @auth0/mdl picks it): asked for age_over_<threshold>, the smallest NN >= threshold
 * whose statement is true; if there is none, the largest NN <= threshold whose statement is false; if
 * neither, nothing. Signed with the device key over the SessionTranscript (deviceSignature, ES256).
 */
export async function presentDevMdoc(issued: Uint8Array, presentation: DevMdocPresentation): Promise<Uint8Array> {
  const mdoc = mdl().parse(issued)
  const document = mdoc.documents[0]
  if (!document || !Object.hasOwn(AGE_DOC_TYPES, document.docType)) throw new TypeError('not an age mdoc issued by issueDevMdoc')
  const namespace = AGE_DOC_TYPES[document.docType as AgeDocType]
  // Asked for an age it cannot answer, the library logs to the console; ask for nothing instead.
  const hasAges = (document.issuerSigned.nameSpaces[namespace] ?? []).some((item) => item.elementIdentifier.startsWith('age_over_'))
  const fields = hasAges ? [{ path: [`$['${namespace}']['${ageOverElement(presentation.threshold)}']`], intent_to_retain: false }] : []
  const response = await mdl().DeviceResponse.from(mdoc)
    .usingPresentationDefinition({
      id: 'age',
      input_descriptors: [{ id: document.docType, format: { mso_mdoc: { alg: ['ES256'] } }, constraints: { limit_disclosure: 'required', fields } }],
    })
    .usingSessionTranscriptBytes(Buffer.from(sessionTranscriptBytes(presentation.sessionTranscript)))
    .authenticateWithSignature({ ...presentation.holderPrivateKey, alg: 'ES256' }, 'ES256')
    .sign()
  return response.encode()
}

/** ISO 18013-5 §7.2.5 names age statements with two digits: age_over_18, age_over_09. */
function ageOverElement(age: number): string {
  return `age_over_${String(age).padStart(2, '0')}`
}
