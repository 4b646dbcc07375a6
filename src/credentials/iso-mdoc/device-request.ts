import { AGE_DOC_TYPES, ageOverElement } from '../queries.ts'
import { encodeCbor, mdl, taggedCbor } from './cbor-env.ts'
import { type ReaderKey, signDetachedCoseSign1 } from './reader-auth.ts'

/**
 * How the reader signs. `readerAuthAll` (the default) signs all DocRequests and the DeviceRequestInfo at once
 * (ISO 18013-5 second edition): what Apple's published sample request and Multipaz's current verifier
 * send. `readerAuth` signs each DocRequest (§9.1.4, both editions), for wallets of the 2021 edition.
 */
export type ReaderSigning = ReaderKey & { signs?: 'readerAuthAll' | 'readerAuth' }

export type AgeDeviceRequestParams = {
  threshold: number
  /** The CBOR SessionTranscript of this request (session-transcript.ts): what readerAuth signs. */
  sessionTranscript: Uint8Array
  /** Our reader key and certificates; without it the request is unsigned. */
  reader?: ReaderSigning
}

/**
 * The ISO 18013-5 DeviceRequest (§8.3.2.1.2.1) for our one question: a DocRequest for each mdoc query of
 * queries.ts (the EU age attestation, the mDL), each asking only `age_over_NN` with intentToRetain false.
 *
 * Version "1.1" (second edition), for DeviceRequestInfo's use cases: `documentSets: [[0], [1]]` says either
 * document answers, as DCQL's `credential_sets` does for OpenID4VP. Without use cases several DocRequests
 * have no agreed meaning (Multipaz then reads only the first, so an mDL holder could not answer), and iOS 26
 * expects them in a 1.1 request (Multipaz's verifier sets them for that reason). Apple's published sample
 * request has this shape.
 */
export async function ageDeviceRequest(params: AgeDeviceRequestParams): Promise<Uint8Array> {
  const element = ageOverElement(params.threshold)
  const itemsRequests = Object.entries(AGE_DOC_TYPES).map(([docType, namespace]) =>
    taggedCbor({ docType, nameSpaces: { [namespace]: { [element]: false } } }),
  )
  const deviceRequestInfo = taggedCbor({ useCases: [{ mandatory: true, documentSets: itemsRequests.map((_, index) => [index]) }] })
  const reader = params.reader
  const transcript = new (mdl().DataItem)({ buffer: params.sessionTranscript }).data

  const docRequests = await Promise.all(
    itemsRequests.map(async (itemsRequest) => {
      if (reader?.signs !== 'readerAuth') return { itemsRequest }
      // §9.1.4: ReaderAuthenticationBytes = #6.24(bstr .cbor ["ReaderAuthentication", SessionTranscript, ItemsRequestBytes]).
      const signed = encodeCbor(taggedCbor(['ReaderAuthentication', transcript, itemsRequest]))
      return { itemsRequest, readerAuth: await signDetachedCoseSign1(reader, signed) }
    }),
  )
  const request: Record<string, unknown> = { version: '1.1', docRequests, deviceRequestInfo }
  if (reader && reader.signs !== 'readerAuth') {
    // Second edition: ["ReaderAuthenticationAll", SessionTranscript, [+ ItemsRequestBytes], DeviceRequestInfoBytes / null].
    const signed = encodeCbor(taggedCbor(['ReaderAuthenticationAll', transcript, itemsRequests, deviceRequestInfo]))
    request.readerAuthAll = [await signDetachedCoseSign1(reader, signed)]
  }
  return encodeCbor(request)
}
