import { compactDecrypt, importJWK, type JWK } from 'jose'
import { RESPONSE_ENC_VALUES } from './client-metadata.ts'

/**
 * Encrypted answers (OpenID4VP 1.0 §8.3): `direct_post.jwt` posts `response=<JWE>`, `dc_api.jwt` hands the
 * page `{ response: <JWE> }`. The JWE is compact, ECDH-ES with P-256 (HAIP 1.0 §5), to the key we passed in
 * the request's `client_metadata.jwks`; its payload is the authorization response itself.
 */

/** The authorization response inside the JWE (§8.1, §8.3: its parameters as top-level members). */
export type AuthorizationResponse = { vp_token?: unknown; state?: string; error?: string; error_description?: string }

/**
 * Why an encrypted answer was refused. `malformed`: not a compact JWE of the kind we asked for (its
 * structure, its header, an `alg` other than ECDH-ES, an `enc` we did not advertise, no `kid`, a payload
 * that is no authorization response). `undecryptable`: of that kind, but it does not open with this
 * request's key (encrypted to another key, or changed on the way).
 */
export type ResponseFailure = 'malformed' | 'undecryptable'

export type DecryptedResponse = { ok: true; response: AuthorizationResponse } | { ok: false; failure: ResponseFailure }

/** An honest header (alg, enc, kid and a P-256 `epk`, maybe `apu`/`apv`) is about 300 characters. */
const MAX_HEADER_CHARS = 2048
/** A presentation with its certificate chain is a few kilobytes; the response endpoint's body limit is lower still. */
const MAX_JWE_CHARS = 128 * 1024
const BASE64URL = /^[A-Za-z0-9_-]*$/

type Header = { alg?: unknown; enc?: unknown; kid?: unknown; epk?: unknown }

/** The protected header of a compact JWE, read without decrypting; undefined when it is none. */
function readHeader(jwe: unknown): Header | undefined {
  if (typeof jwe !== 'string' || jwe.length > MAX_JWE_CHARS) return undefined
  const parts = jwe.split('.')
  const [header] = parts
  if (parts.length !== 5 || !header || header.length > MAX_HEADER_CHARS || !parts.every((part) => BASE64URL.test(part))) return undefined
  try {
    const parsed: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'))
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Header) : undefined
  } catch {
    return undefined
  }
}

/**
 * The `kid` of an encrypted answer, read from its protected header without decrypting: the key, and so
 * the request, it was encrypted to (§8.3: the JWE MUST carry the `kid` of the key the wallet chose).
 * Undefined when the input is not a compact JWE within our size bounds or names no string `kid`.
 */
export function readResponseKeyId(jwe: unknown): string | undefined {
  const kid = readHeader(jwe)?.kid
  return typeof kid === 'string' && kid.length > 0 && kid.length <= 256 ? kid : undefined
}

/**
 * Decrypts an encrypted answer with the private key of the request it answers, and returns the
 * authorization response inside. Only `alg` ECDH-ES and the `enc` values we advertise (A128GCM, A256GCM)
 * are accepted; the JWE must name our key's `kid`. Hostile input is a failure, never an exception.
 *
 * The payload is not integrity-protected by anyone but its sender (§14.5 "Encrypting an Unsigned
 * Response": our public key is in the request), so the caller still compares `state` with the request's
 * for `direct_post.jwt`, and verifies the `vp_token` bound to this key (`verifyAgeAnswer`).
 */
export async function decryptResponse(jwe: unknown, privateKey: JWK): Promise<DecryptedResponse> {
  const header = readHeader(jwe)
  if (!header || header.alg !== 'ECDH-ES' || !RESPONSE_ENC_VALUES.some((enc) => enc === header.enc) || !isP256PublicKey(header.epk)) return fail('malformed')
  const kid = readResponseKeyId(jwe)
  if (!kid) return fail('malformed')
  // The JWE names the key it was encrypted to: another request's key is not ours to try.
  if (privateKey.kid !== undefined && kid !== privateKey.kid) return fail('undecryptable')

  let plaintext: Uint8Array
  try {
    const key = await importJWK({ ...privateKey, alg: 'ECDH-ES' }, 'ECDH-ES')
    const decrypted = await compactDecrypt(jwe as string, key, { keyManagementAlgorithms: ['ECDH-ES'], contentEncryptionAlgorithms: [...RESPONSE_ENC_VALUES] })
    plaintext = decrypted.plaintext
  } catch {
    return fail('undecryptable')
  }
  return readAuthorizationResponse(plaintext)
}

/** The decrypted payload: a JSON object with a `vp_token` or an `error`, and strings where strings belong. */
function readAuthorizationResponse(plaintext: Uint8Array): DecryptedResponse {
  let payload: unknown
  try {
    payload = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plaintext))
  } catch {
    return fail('malformed')
  }
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return fail('malformed')
  const response = payload as Record<string, unknown>
  const strings = ['state', 'error', 'error_description'].every((name) => response[name] === undefined || typeof response[name] === 'string')
  if (!strings || (response.vp_token === undefined && response.error === undefined)) return fail('malformed')
  return { ok: true, response: response as AuthorizationResponse }
}

/** RFC 7518 §4.6.1.1: `epk` is the sender's ephemeral public key, on our key's curve (HAIP 1.0 §5: P-256). */
function isP256PublicKey(epk: unknown): boolean {
  const key = epk as JWK | undefined
  return !!key && typeof key === 'object' && key.kty === 'EC' && key.crv === 'P-256' && typeof key.x === 'string' && typeof key.y === 'string' && key.d === undefined
}

const fail = (failure: ResponseFailure): DecryptedResponse => ({ ok: false, failure })
