import type { CredentialFailure } from '../presentation.ts'
import { encodeCbor, mdl } from './cbor-env.ts'

/**
 * ISO/IEC 18013-5 §8.3.2.1.2.2, the DeviceResponse as wallets send it:
 *
 *     DeviceResponse = { "version": tstr, ? "documents": [+Document], ? "documentErrors": [+DocumentError], "status": uint }
 *     DocumentError = { DocType => ErrorCode }
 *
 * A well-formed answer can hold no document we can use: the wallet reports an error (a status other than 0,
 * Table 8: "No data is returned"), or says it does not return the document (a DocumentError, error code 0
 * "Data not returned"), or returns other documents. Those are answers, and each ends in a failure of the closed
 * list, never `malformed`; only a response that is not this structure is.
 */

type ReadFailure = Extract<CredentialFailure, 'malformed' | 'wrong_credential' | 'declined'>

/** The one document that answers, alone in a DeviceResponse @auth0/mdl can verify; or why there is none. */
export type DeviceResponseRead = { ok: true; deviceResponse: Uint8Array } | { ok: false; failure: ReadFailure }

const refuse = (failure: ReadFailure): DeviceResponseRead => ({ ok: false, failure })

/**
 * Reads the DeviceResponse and picks the document to verify: the first whose doc type is one of `docTypes` (the
 * answered query's, or those an Annex C request offered as alternatives). We ask for one credential; any other
 * document answers nothing we asked and is left unread and unverified.
 *
 * - a status other than 0 (10 general error, 11 CBOR decoding, 12 CBOR validation, or any other): `declined`,
 *   documents or not, as an OpenID4VP error response is: the wallet answered with an error, not a credential;
 * - no document of an accepted doc type, and a DocumentError naming one: `declined`, the wallet did not return it;
 * - no document of an accepted doc type, and documents of others: `wrong_credential`;
 * - no document at all (absent, or an empty array): `declined`, nothing was shared.
 *
 * The response goes on unchanged when it holds just that document with its IssuerSigned `nameSpaces`. Otherwise
 * it is written again with that document alone, and an empty `nameSpaces` where the holder had nothing to
 * disclose: §8.3.2.1.2.2 makes them optional, and @auth0/mdl reads them unconditionally (the answer is then a
 * missing claim). Writing it again cannot change what is verified: the MSO, the protected headers and both
 * signatures are byte strings, IssuerSignedItemBytes and DeviceNameSpacesBytes #6.24 data items, all carried
 * over as they are.
 */
export function readDeviceResponse(bytes: Uint8Array, docTypes: readonly string[]): DeviceResponseRead {
  let response: unknown
  try {
    response = new (mdl().DataItem)({ buffer: bytes }).data
  } catch {
    return refuse('malformed')
  }
  if (!(response instanceof Map)) return refuse('malformed')
  const version: unknown = response.get('version')
  const status: unknown = response.get('status')
  const documents: unknown = response.has('documents') ? response.get('documents') : []
  const documentErrors: unknown = response.has('documentErrors') ? response.get('documentErrors') : []
  if (typeof version !== 'string' || !isUint(status) || !isListOf(documents, isDocument) || !isListOf(documentErrors, isDocumentError)) return refuse('malformed')
  // Table 8: 10, 11 and 12 say "No data is returned"; a code we do not know cannot say more.
  if (status !== 0) return refuse('declined')
  const chosen = documents.find((document) => docTypes.includes(document.get('docType') as string))
  if (!chosen) {
    if (documentErrors.some((error) => docTypes.some((docType) => error.has(docType)))) return refuse('declined')
    return refuse(documents.length > 0 ? 'wrong_credential' : 'declined')
  }
  const issuerSigned: unknown = chosen.get('issuerSigned')
  const complete = issuerSigned instanceof Map && issuerSigned.has('nameSpaces')
  if (documents.length === 1 && complete) return { ok: true, deviceResponse: bytes }
  if (issuerSigned instanceof Map && !complete) issuerSigned.set('nameSpaces', new Map())
  return { ok: true, deviceResponse: encodeCbor(new Map<string, unknown>([['version', version], ['documents', [chosen]], ['status', 0]])) }
}

const isUint = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0

function isListOf<T>(value: unknown, isItem: (item: unknown) => item is T): value is T[] {
  return Array.isArray(value) && value.every(isItem)
}

/** A Document names its doc type; the rest of it is @auth0/mdl's to read once it is the one chosen. */
const isDocument = (value: unknown): value is Map<unknown, unknown> => value instanceof Map && typeof value.get('docType') === 'string'

/** DocumentError = { DocType => ErrorCode }, ErrorCode = int. */
const isDocumentError = (value: unknown): value is Map<unknown, unknown> =>
  value instanceof Map && value.size > 0 && [...value].every(([docType, code]) => typeof docType === 'string' && typeof code === 'number' && Number.isSafeInteger(code))
