import { decode, encode, Tag } from 'cbor2'
import * as HPKE from 'hpke'
import type { JWK } from 'jose'
import { presentMdoc } from './mdoc.ts'
import type { MdocHolder } from './openid4vp-wallet.ts'
import { checkReaderAuth, type ReaderTrust, type SignedRequestParts } from './reader-auth.ts'
import { annexCTranscript } from './transcripts.ts'

/**
 * A test wallet for ISO/IEC 18013-7 Annex C (`org-iso-mdoc` over the Digital Credentials API), built apart
 * from the verifier for everything it checks: cbor2 (not cbor-x) for CBOR, panva's `hpke` (not @hpke/core)
 * to seal, its own SessionTranscript and readerAuth check (reader-auth.ts). It takes what the browser hands
 * a wallet (the request's `data` and the page's origin) and returns the answer's `data`.
 *
 * The mdoc itself comes from an `AnnexCHolder`: `ageMdocHolder` presents with the independent holder of
 * test/wallets/mdoc.ts (or, given `presentDevMdoc`, with src/credentials/dev/mdoc.ts), over this wallet's
 * transcript (test/wallets/transcripts.ts).
 */

/** An ItemsRequest as the wallet read it: doc type, and per namespace element => intentToRetain. */
export type ItemsRequest = { docType: string; nameSpaces: Map<string, Map<string, boolean>> }

/** Who holds the mdocs and signs DeviceResponses with their device keys: the wallet's seam for the mdoc itself. */
export type AnnexCHolder = {
  /** The doc types held. */
  docTypes: readonly string[]
  /** A DeviceResponse answering `request`, device-signed over `sessionTranscript` (CBOR, as the wallet built it). */
  present(request: ItemsRequest, sessionTranscript: Uint8Array): Promise<Uint8Array>
}

export type WalletOptions = ReaderTrust & {
  holder: AnnexCHolder
  /** Refuse unsigned requests (Apple Wallet answers signed requests only). */
  requireReaderAuth?: boolean
}

export type WalletRefusal = 'malformed_request' | 'reader_auth' | 'no_document'

export type WalletAnswer =
  | { ok: true; data: { response: string }; docType: string; readerAuth: 'none' | 'verified' }
  | { ok: false; refusal: WalletRefusal }

type ParsedRequest = SignedRequestParts & { encryptionInfo: string; items: ItemsRequest[]; documentSets?: number[][] }

const suite = new HPKE.CipherSuite(HPKE.KEM_DHKEM_P256_HKDF_SHA256, HPKE.KDF_HKDF_SHA256, HPKE.AEAD_AES_128_GCM)

/**
 * Answers an `org-iso-mdoc` request for `origin`: checks readerAuth where present, picks the first document
 * set of the first use case it can satisfy (without use cases, the first DocRequest, as a 2021 wallet does),
 * and seals the holder's DeviceResponse to the request's key.
 */
export async function answerAnnexCRequest(data: unknown, origin: string, options: WalletOptions): Promise<WalletAnswer> {
  const request = readRequest(data)
  if (!request) return { ok: false, refusal: 'malformed_request' }
  const sessionTranscript = annexCTranscript({ encryptionInfo: request.encryptionInfo, origin })
  const readerAuth = await checkReaderAuth(request, sessionTranscript, options)
  if (readerAuth === 'failed' || (readerAuth === 'none' && options.requireReaderAuth)) return { ok: false, refusal: 'reader_auth' }
  const sets = request.documentSets ?? [[0]]
  // Our holder answers one document; a set of several is left to a fuller wallet.
  const chosen = sets.find((set) => set.length === 1 && options.holder.docTypes.includes(request.items[set[0]!]?.docType ?? ''))
  const items = chosen && request.items[chosen[0]!]
  if (!items) return { ok: false, refusal: 'no_document' }
  const deviceResponse = await options.holder.present(items, sessionTranscript)
  return { ok: true, data: await sealAnnexCResponse(deviceResponse, { encryptionInfo: request.encryptionInfo, origin }), docType: items.docType, readerAuth }
}

/**
 * Seals a DeviceResponse for a request, as a wallet does: HPKE base mode, DHKEM(P-256, HKDF-SHA256),
 * HKDF-SHA256, AES-128-GCM, to EncryptionInfo's recipientPublicKey, `info` the SessionTranscript for
 * `origin`. Tests also use it to seal what a wallet should never send (a replayed DeviceResponse).
 */
export async function sealAnnexCResponse(deviceResponse: Uint8Array, request: { encryptionInfo: string; origin: string }): Promise<{ response: string }> {
  const recipientKey = readRecipientKey(request.encryptionInfo)
  if (!recipientKey) throw new TypeError('not an EncryptionInfo')
  const publicKey = await suite.DeserializePublicKey(recipientKey)
  const info = annexCTranscript(request)
  const { encapsulatedSecret, ciphertext } = await suite.Seal(publicKey, deviceResponse, { info })
  const sealed = encode(['dcapi', new Map<string, Uint8Array>([['enc', encapsulatedSecret], ['cipherText', ciphertext]])])
  return { response: Buffer.from(sealed).toString('base64url') }
}

/**
 * A holder of issued mdocs (by doc type) that answers an age request with `present`: by default the holder
 * of test/wallets/mdoc.ts, written apart from the verifier; `presentDevMdoc` (@auth0/mdl) for an mdoc issued
 * by src/credentials/dev/mdoc.ts.
 */
export function ageMdocHolder(issued: Record<string, Uint8Array>, holderPrivateKey: JWK, present: MdocHolder = presentMdoc): AnnexCHolder {
  return {
    docTypes: Object.keys(issued),
    present(request, sessionTranscript) {
      const elements = [...request.nameSpaces.values()].flatMap((elements) => [...elements.keys()])
      const age = elements.map((element) => /^age_over_(\d{2})$/.exec(element)?.[1]).find((match) => match !== undefined)
      if (!issued[request.docType] || age === undefined) throw new TypeError('this holder answers age requests for the mdocs it holds')
      return present(issued[request.docType]!, { holderPrivateKey, sessionTranscript, threshold: Number(age) })
    },
  }
}

/** The request's `data`: `{ deviceRequest, encryptionInfo }`, each base64url CBOR; undefined if not that. */
function readRequest(data: unknown): ParsedRequest | undefined {
  const { deviceRequest, encryptionInfo } = (data ?? {}) as { deviceRequest?: unknown; encryptionInfo?: unknown }
  if (typeof deviceRequest !== 'string' || typeof encryptionInfo !== 'string' || !readRecipientKey(encryptionInfo)) return undefined
  try {
    const request = decode(fromBase64url(deviceRequest), { preferMap: true })
    const version = request instanceof Map ? request.get('version') : undefined
    if (!(request instanceof Map) || typeof version !== 'string' || !/^1\.\d+$/.test(version)) return undefined
    const docRequests = (request.get('docRequests') as Map<string, unknown>[]).map((docRequest) => ({
      itemsRequestBytes: (docRequest.get('itemsRequest') as Tag).contents as Uint8Array,
      readerAuth: docRequest.get('readerAuth'),
    }))
    const items = docRequests.map(({ itemsRequestBytes }) => decode(itemsRequestBytes, { preferMap: true }) as Map<string, unknown>)
    const info = request.get('deviceRequestInfo') as Tag | undefined
    const useCases = info && (decode(info.contents as Uint8Array, { preferMap: true }) as Map<string, unknown>).get('useCases')
    return {
      encryptionInfo,
      docRequests,
      deviceRequestInfoBytes: info?.contents as Uint8Array | undefined,
      readerAuthAll: (request.get('readerAuthAll') as unknown[] | undefined) ?? [],
      items: items.map((item) => ({ docType: item.get('docType') as string, nameSpaces: item.get('nameSpaces') as ItemsRequest['nameSpaces'] })),
      documentSets: Array.isArray(useCases) ? ((useCases[0] as Map<string, unknown>).get('documentSets') as number[][]) : undefined,
    }
  } catch {
    return undefined
  }
}

/** EncryptionInfo's recipientPublicKey as an uncompressed P-256 point (0x04 || x || y). */
function readRecipientKey(encryptionInfo: string): Uint8Array | undefined {
  try {
    const [type, parameters] = decode(fromBase64url(encryptionInfo), { preferMap: true }) as [unknown, Map<string, unknown>]
    const key = parameters.get('recipientPublicKey') as Map<number, unknown>
    const [x, y] = [key.get(-2), key.get(-3)]
    const nonce = parameters.get('nonce')
    if (type !== 'dcapi' || key.get(1) !== 2 || key.get(-1) !== 1 || !(nonce instanceof Uint8Array)) return undefined
    if (!(x instanceof Uint8Array) || !(y instanceof Uint8Array) || x.length !== 32 || y.length !== 32) return undefined
    return Uint8Array.from([0x04, ...x, ...y])
  } catch {
    return undefined
  }
}

/** Bytes as a plain Uint8Array: cbor2 would encode a Node Buffer (and what it decodes from one) as its JSON. */
function fromBase64url(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text, 'base64url'))
}
