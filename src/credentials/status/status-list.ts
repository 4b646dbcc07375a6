import { verify as verifySignature, type X509Certificate } from 'node:crypto'
import { inflateSync } from 'node:zlib'
import { decodeProtectedHeader, errors, importJWK, jwtVerify } from 'jose'
import { mdl } from '../iso-mdoc/cbor-env.ts'
import { checkCertificateChain, findIssuerKey, type TrustList } from '../trust/trust-list.ts'

/**
 * Status List Tokens (draft-ietf-oauth-status-list §5), read and verified: JWT (`statuslist+jwt`) for SD-JWT
 * VCs, CWT (`application/statuslist+cwt`, COSE_Sign1) for mdocs. The signer must be trusted by the same trust
 * list as the credentials themselves: a list anyone could sign would let anyone revive a revoked credential.
 */

/** A verified list: its statuses, and how long it may be used. */
export type StatusList = {
  bits: 1 | 2 | 4 | 8
  /** The decompressed byte array (§4.1). */
  bytes: Uint8Array
  /** Seconds since the epoch. */
  iat: number
  exp: number | undefined
  /** Seconds the issuer allows the list to be cached (`ttl`), if it says. */
  ttl: number | undefined
}

/** Why a list token is not used. */
export type ListFailure = 'untrusted_list' | 'expired_list' | 'malformed_list'

export type ListRead = { ok: true; list: StatusList } | { ok: false; failure: ListFailure }

export type ListForm = 'jwt' | 'cwt'

/**
 * The decompressed list may not exceed this: 4 MiB is 33 million entries at one bit, more than any issuer's
 * list, and a zlib stream a few kilobytes long could otherwise inflate to gigabytes (a "zip bomb").
 */
export const MAX_LIST_BYTES = 4 * 1024 * 1024

const CLOCK_SKEW_S = 60

/** Reads and verifies a Status List Token for `uri` at `now`; any doubt is a failure, never an exception. */
export async function readStatusList(token: Uint8Array, form: ListForm, check: { uri: string; trustList: TrustList; now: Date }): Promise<ListRead> {
  try {
    return form === 'jwt' ? await readJwtList(new TextDecoder('utf-8', { fatal: true }).decode(token).trim(), check) : readCwtList(token, check)
  } catch {
    return { ok: false, failure: 'malformed_list' }
  }
}

async function readJwtList(jwt: string, check: { uri: string; trustList: TrustList; now: Date }): Promise<ListRead> {
  const header = decodeProtectedHeader(jwt)
  // §5.1: "typ: REQUIRED. The JWT type MUST be statuslist+jwt."
  if (header.typ !== 'statuslist+jwt') return { ok: false, failure: 'malformed_list' }
  const key = findIssuerKey(check.trustList, header, check.now)
  if (!key) return { ok: false, failure: 'untrusted_list' }
  let payload: Record<string, unknown>
  try {
    ;({ payload } = await jwtVerify(jwt, await importJWK(key.jwk, 'ES256'), {
      algorithms: ['ES256'],
      typ: 'statuslist+jwt',
      currentDate: check.now,
      clockTolerance: CLOCK_SKEW_S,
      requiredClaims: ['sub', 'iat'],
    }))
  } catch (cause) {
    if (cause instanceof errors.JWSSignatureVerificationFailed) return { ok: false, failure: 'untrusted_list' }
    if (cause instanceof errors.JWTExpired) return { ok: false, failure: 'expired_list' }
    if (cause instanceof errors.JWTClaimValidationFailed && cause.claim === 'iat') return { ok: false, failure: 'expired_list' }
    return { ok: false, failure: 'malformed_list' }
  }
  const statusList = payload.status_list as { bits?: unknown; lst?: unknown } | undefined
  if (!statusList || typeof statusList.lst !== 'string' || !/^[A-Za-z0-9_-]*$/.test(statusList.lst)) return { ok: false, failure: 'malformed_list' }
  return finishList({ sub: payload.sub, iat: payload.iat, exp: payload.exp, ttl: payload.ttl, bits: statusList.bits, lst: Buffer.from(statusList.lst, 'base64url') }, check)
}

/** COSE and CWT labels (RFC 9052, RFC 8392, RFC 9360, draft-ietf-oauth-status-list §5.2). */
const COSE_SIGN1_TAG = 18
const ALG = 1
const ES256 = -7
const TYP = 16
const X5CHAIN = 33
const CWT_SUB = 2
const CWT_EXP = 4
const CWT_IAT = 6
const CWT_TTL = 65534
const CWT_STATUS_LIST = 65533

function readCwtList(token: Uint8Array, check: { uri: string; trustList: TrustList; now: Date }): ListRead {
  const malformed: ListRead = { ok: false, failure: 'malformed_list' }
  // §5.2: "The COSE message MUST either be the tagged COSE_Sign1_Tagged (18) or COSE_Mac0_Tagged (17)"; a MAC
  // needs a key shared with the issuer, which we have not.
  const message: unknown = decodeCbor(token)
  if (!isTag(message, COSE_SIGN1_TAG) || !Array.isArray(message.value) || message.value.length !== 4) return malformed
  const [protectedBytes, unprotected, payload, signature] = message.value as unknown[]
  if (!(protectedBytes instanceof Uint8Array) || !(payload instanceof Uint8Array) || !(signature instanceof Uint8Array)) return malformed
  const protectedHeader: unknown = protectedBytes.length === 0 ? new Map() : decodeCbor(protectedBytes)
  if (!(protectedHeader instanceof Map) || !(unprotected instanceof Map || unprotected === undefined)) return malformed
  if (protectedHeader.get(ALG) !== ES256) return { ok: false, failure: 'untrusted_list' }
  // §5.2: "16 (type): REQUIRED. The type of the CWT MUST be application/statuslist+cwt".
  if (protectedHeader.get(TYP) !== 'application/statuslist+cwt') return malformed
  const x5chain: unknown = protectedHeader.get(X5CHAIN) ?? (unprotected as Map<unknown, unknown>).get(X5CHAIN)
  const der = x5chain instanceof Uint8Array ? [x5chain] : Array.isArray(x5chain) && x5chain.every((c) => c instanceof Uint8Array) ? (x5chain as Uint8Array[]) : undefined
  if (!der) return { ok: false, failure: 'untrusted_list' }
  const chain = checkCertificateChain(check.trustList, der, check.now, { format: 'mdoc' })
  if (!chain.trusted) return { ok: false, failure: 'untrusted_list' }
  // RFC 9052 §4.4: Sig_structure = ["Signature1", body_protected, external_aad, payload]; ES256 is r || s.
  const toBeSigned = mdl().DataItem.fromData(['Signature1', protectedBytes, new Uint8Array(), payload]).buffer
  if (!verifyCose(chain.leaf, toBeSigned, signature)) return { ok: false, failure: 'untrusted_list' }
  const claims: unknown = decodeCbor(payload)
  if (!(claims instanceof Map)) return malformed
  const statusList: unknown = claims.get(CWT_STATUS_LIST)
  if (!(statusList instanceof Map) || !(statusList.get('lst') instanceof Uint8Array)) return malformed
  return finishList({ sub: claims.get(CWT_SUB), iat: claims.get(CWT_IAT), exp: claims.get(CWT_EXP), ttl: claims.get(CWT_TTL), bits: statusList.get('bits'), lst: statusList.get('lst') as Uint8Array }, check)
}

/** What both forms share once the signature holds: the subject, the times, the list itself. */
function finishList(claims: { sub: unknown; iat: unknown; exp: unknown; ttl: unknown; bits: unknown; lst: Uint8Array }, check: { uri: string; now: Date }): ListRead {
  const malformed: ListRead = { ok: false, failure: 'malformed_list' }
  // §5.1: sub "MUST be equal to that of the uri claim contained in the status_list claim of the Referenced
  // Token": a list signed for another uri is not an answer about this credential, whoever signed it.
  if (claims.sub !== check.uri) return { ok: false, failure: 'untrusted_list' }
  const { bits, iat, exp, ttl } = claims
  if (bits !== 1 && bits !== 2 && bits !== 4 && bits !== 8) return malformed
  if (typeof iat !== 'number' || !(exp === undefined || typeof exp === 'number')) return malformed
  if (!(ttl === undefined || (typeof ttl === 'number' && ttl > 0))) return malformed
  // RFC 7519 §4.1.4 and RFC 8392 §3.1.4: not to be accepted on or after `exp`. A list issued in the future is a
  // signer's clock gone wrong; neither says anything about now.
  const now = check.now.getTime() / 1000
  if ((exp !== undefined && now >= exp + CLOCK_SKEW_S) || iat > now + CLOCK_SKEW_S) return { ok: false, failure: 'expired_list' }
  let bytes: Uint8Array
  try {
    // §4.1: DEFLATE in the ZLIB format. maxOutputLength stops inflating at the bound instead of after it.
    bytes = new Uint8Array(inflateSync(claims.lst, { maxOutputLength: MAX_LIST_BYTES }))
  } catch {
    return malformed
  }
  return { ok: true, list: { bits, bytes, iat, exp, ttl } }
}

/**
 * The status at `idx` (§4.1: "packed into bytes from the least significant bit ("0") to the most significant
 * bit ("7")"), or undefined when the list has no such index.
 */
export function statusAt(list: Pick<StatusList, 'bits' | 'bytes'>, idx: number): number | undefined {
  const bit = idx * list.bits
  const byte = list.bytes[Math.floor(bit / 8)]
  if (!Number.isSafeInteger(bit) || byte === undefined) return undefined
  return (byte >> bit % 8) & ((1 << list.bits) - 1)
}

function decodeCbor(bytes: Uint8Array): unknown {
  return new (mdl().DataItem)({ buffer: bytes }).data
}

function isTag(value: unknown, tag: number): value is { tag: number; value: unknown } {
  return typeof value === 'object' && value !== null && (value as { tag?: unknown }).tag === tag && 'value' in value
}

function verifyCose(certificate: X509Certificate, data: Uint8Array, signature: Uint8Array): boolean {
  const key = certificate.publicKey
  const jwk = key.export({ format: 'jwk' })
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || signature.length !== 64) return false
  return verifySignature('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature)
}
