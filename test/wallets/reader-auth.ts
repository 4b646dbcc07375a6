import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import { decode, encode, Tag } from 'cbor2'

/**
 * A wallet's check of mdoc reader authentication (ISO 18013-5 §9.1.4), written apart from the verifier:
 * cbor2 for CBOR, WebCrypto for ECDSA, @peculiar/x509 for certificates. The signed structures are rebuilt
 * from the wallet's own SessionTranscript, so a signature the reader made for another origin or
 * EncryptionInfo does not verify here.
 */

/** A DeviceRequest's parts as signed: the tag-24 bytes exactly as received. */
export type SignedRequestParts = {
  docRequests: { itemsRequestBytes: Uint8Array; readerAuth?: unknown }[]
  deviceRequestInfoBytes?: Uint8Array
  readerAuthAll: unknown[]
}

/** Reader roots (DER) the wallet trusts; without them, any reader whose signature holds is taken. */
export type ReaderTrust = { roots?: Uint8Array<ArrayBuffer>[] }

/** RFC 9053 ES256 (-7), and RFC 9864 ESP256 (-9), the same ECDSA P-256 SHA-256 (Multipaz signed with -9 in 2025). */
const P256_ALGORITHMS = new Set([-7, -9])

/**
 * Whether every readerAuth and readerAuthAll of a request verifies over `sessionTranscript` (the wallet's
 * own): `'none'` when the request is unsigned, `'verified'` when all signatures hold (and chain to a trusted
 * root where roots are given), `'failed'` otherwise.
 */
export async function checkReaderAuth(parts: SignedRequestParts, sessionTranscript: Uint8Array, trust: ReaderTrust = {}): Promise<'none' | 'verified' | 'failed'> {
  const transcript = decode(sessionTranscript)
  const items = parts.docRequests.map((request) => new Tag(24, request.itemsRequestBytes))
  const signed: { signature: unknown; payload: Uint8Array }[] = parts.docRequests.flatMap((request, index) =>
    request.readerAuth === undefined ? [] : [{ signature: request.readerAuth, payload: tagged(['ReaderAuthentication', transcript, items[index]]) }],
  )
  const info = parts.deviceRequestInfoBytes ? new Tag(24, parts.deviceRequestInfoBytes) : null
  for (const signature of parts.readerAuthAll) signed.push({ signature, payload: tagged(['ReaderAuthenticationAll', transcript, items, info]) })
  if (signed.length === 0) return 'none'
  for (const { signature, payload } of signed) {
    if (!(await verifyDetached(signature, payload, trust).catch(() => false))) return 'failed'
  }
  return 'verified'
}

/** `#6.24(bstr .cbor value)`. */
function tagged(value: unknown): Uint8Array {
  return encode(new Tag(24, encode(value)))
}

/** A detached COSE_Sign1 (RFC 9052 §4.2, §4.4) over `payload` by the first certificate of its x5chain. */
async function verifyDetached(sign1: unknown, payload: Uint8Array, trust: ReaderTrust): Promise<boolean> {
  if (!Array.isArray(sign1) || sign1.length !== 4) return false
  const [protectedBytes, unprotected, detached, signature] = sign1 as [unknown, unknown, unknown, unknown]
  if (!(protectedBytes instanceof Uint8Array) || !(signature instanceof Uint8Array) || detached !== null) return false
  const headers = decode(protectedBytes, { preferMap: true })
  const x5chain = (headers instanceof Map ? headers.get(33) : undefined) ?? (unprotected instanceof Map ? unprotected.get(33) : undefined)
  const ders = x5chain instanceof Uint8Array ? [x5chain] : Array.isArray(x5chain) ? x5chain : []
  if (!(headers instanceof Map) || !P256_ALGORITHMS.has(headers.get(1)) || ders.length === 0 || !ders.every((der) => der instanceof Uint8Array)) return false
  const chain = (ders as Uint8Array[]).map((der) => new x509.X509Certificate(new Uint8Array(der)))
  const key = await crypto.subtle.importKey('spki', chain[0]!.publicKey.rawData, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify'])
  const toBeSigned = new Uint8Array(encode(['Signature1', protectedBytes, new Uint8Array(), payload]))
  if (!(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, new Uint8Array(signature), toBeSigned))) return false
  return trust.roots ? chainsToRoot(chain, trust.roots) : true
}

/** Each certificate issued by the next, the last by one of `roots`. Validity dates are not checked here. */
async function chainsToRoot(chain: x509.X509Certificate[], roots: Uint8Array<ArrayBuffer>[]): Promise<boolean> {
  for (let index = 0; index + 1 < chain.length; index++) {
    if (!(await chain[index]!.verify({ publicKey: chain[index + 1]!.publicKey, signatureOnly: true }))) return false
  }
  const last = chain.at(-1)!
  for (const root of roots.map((der) => new x509.X509Certificate(der))) {
    const isRoot = Buffer.from(last.rawData).equals(Buffer.from(root.rawData))
    if (isRoot || (await last.verify({ publicKey: root.publicKey, signatureOnly: true }))) return true
  }
  return false
}
