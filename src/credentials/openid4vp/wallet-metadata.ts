import { RESPONSE_ENC_VALUES, VP_FORMATS_SUPPORTED } from './client-metadata.ts'

/**
 * What a wallet says of itself when it fetches our request by POST (OpenID4VP 1.0 §5.10, `wallet_metadata`:
 * the parameters of §10.1 and RFC 8414), weighed against the one request we make. We do not tailor the
 * request: where the wallet's metadata rules it out the wallet is told so (an HTTP error, which ends its
 * attempt, §5.10.2), and anything else in it is ignored, as §10.1 asks of parameters it does not define. What it
 * leaves unsaid is taken as supported: the request is the one a wallet that GETs it receives.
 */
export type WalletMetadataCheck = { ok: true } | { ok: false; problem: WalletMetadataProblem; detail: string }

/** Why a wallet's metadata rules our request out; each is refused as `invalid_request`. */
export type WalletMetadataProblem =
  | 'malformed'
  | 'vp_formats'
  | 'client_id_prefix'
  | 'signing_alg'
  | 'response_type'
  | 'response_mode'
  | 'response_encryption'
  | 'request_encryption'

/** What our request is: the response mode it asks for; the rest (ES256, `x509_hash`, `vp_token`) is fixed. */
export type RequestTraits = { responseMode: 'direct_post' | 'direct_post.jwt' }

/** §5.9.3: our client id; RFC 9101: our request objects are signed ES256 (signRequest). */
const CLIENT_ID_PREFIX = 'x509_hash'
const SIGNING_ALG = 'ES256'
/** §8.3: the key of an encrypted answer is ECDH-ES on P-256 (client-metadata.ts, response-encryption-key.ts). */
const RESPONSE_ENCRYPTION_ALG = 'ECDH-ES'

type Metadata = Record<string, unknown>

export function checkWalletMetadata(metadata: Metadata, request: RequestTraits): WalletMetadataCheck {
  try {
    return firstUnmet(metadata, request) ?? { ok: true }
  } catch (cause) {
    if (cause instanceof MalformedMetadata) return { ok: false, problem: 'malformed', detail: cause.message }
    throw cause
  }
}

function firstUnmet(metadata: Metadata, request: RequestTraits): WalletMetadataCheck | undefined {
  const unmet = (problem: WalletMetadataProblem, detail: string) => ({ ok: false, problem, detail }) as const
  // §5.10: "If the Wallet requires the Verifier to encrypt the Request Object, it SHOULD use the jwks parameter".
  if (own(metadata, 'jwks') !== undefined || own(metadata, 'jwks_uri') !== undefined) {
    return unmet('request_encryption', 'it asks for an encrypted request object (jwks), and ours are signed, not encrypted')
  }
  if (!usableFormat(own(metadata, 'vp_formats_supported'))) {
    return unmet('vp_formats', `it supports none of the credential formats asked for (${Object.keys(VP_FORMATS_SUPPORTED).join(', ')}, ES256)`)
  }
  if (!allows(metadata, 'client_id_prefixes_supported', CLIENT_ID_PREFIX)) return unmet('client_id_prefix', `it does not accept the client id prefix ${CLIENT_ID_PREFIX}`)
  if (!allows(metadata, 'request_object_signing_alg_values_supported', SIGNING_ALG)) return unmet('signing_alg', `it does not accept request objects signed ${SIGNING_ALG}`)
  if (!allows(metadata, 'response_types_supported', 'vp_token')) return unmet('response_type', 'it does not answer response type vp_token')
  if (!allows(metadata, 'response_modes_supported', request.responseMode)) return unmet('response_mode', `it does not answer with response mode ${request.responseMode}`)
  if (request.responseMode === 'direct_post.jwt') {
    if (!allows(metadata, 'authorization_encryption_alg_values_supported', RESPONSE_ENCRYPTION_ALG)) {
      return unmet('response_encryption', `it cannot encrypt its answer with ${RESPONSE_ENCRYPTION_ALG}`)
    }
    const enc = strings(metadata, 'authorization_encryption_enc_values_supported')
    if (enc && !RESPONSE_ENC_VALUES.some((value) => enc.includes(value))) {
      return unmet('response_encryption', `it cannot encrypt its answer with ${RESPONSE_ENC_VALUES.join(' or ')}`)
    }
  }
  return undefined
}

class MalformedMetadata extends Error {}

/** `metadata[name]` if the object itself has it: a `__proto__` member or an inherited name says nothing. */
function own(metadata: Metadata, name: string): unknown {
  return Object.hasOwn(metadata, name) ? metadata[name] : undefined
}

/** A list parameter, undefined when absent; anything but an array of strings is malformed metadata. */
function strings(metadata: Metadata, name: string): string[] | undefined {
  const value = own(metadata, name)
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw new MalformedMetadata(`${name} is not an array of strings`)
  return value
}

function allows(metadata: Metadata, name: string, value: string): boolean {
  return strings(metadata, name)?.includes(value) ?? true
}

/**
 * §10.1 `vp_formats_supported`: whether one of the formats our query offers is there, with ES256 (COSE -7)
 * among its algorithms where it lists them. A format whose value is `null` is one the wallet does not
 * support: the EUDI wallet sends `"dc+sd-jwt": null` when it holds only mdocs.
 */
function usableFormat(value: unknown): boolean {
  if (value === undefined) return true
  if (!isObject(value)) throw new MalformedMetadata('vp_formats_supported is not an object')
  const sdJwt = Object.hasOwn(value, 'dc+sd-jwt') ? value['dc+sd-jwt'] : undefined
  const mdoc = Object.hasOwn(value, 'mso_mdoc') ? value.mso_mdoc : undefined
  return (
    (isPresent(sdJwt, 'dc+sd-jwt') && lists(sdJwt, 'sd-jwt_alg_values', SIGNING_ALG) && lists(sdJwt, 'kb-jwt_alg_values', SIGNING_ALG)) ||
    (isPresent(mdoc, 'mso_mdoc') && lists(mdoc, 'issuerauth_alg_values', -7) && lists(mdoc, 'deviceauth_alg_values', -7))
  )
}

function isPresent(format: unknown, name: string): format is Record<string, unknown> {
  if (format === undefined || format === null) return false
  if (!isObject(format)) throw new MalformedMetadata(`vp_formats_supported.${name} is not an object`)
  return true
}

/** An algorithm list of a format allows `alg`, or is not given (then any is). */
function lists(format: Record<string, unknown>, name: string, alg: string | number): boolean {
  const values = Object.hasOwn(format, name) ? format[name] : undefined
  if (values === undefined) return true
  if (!Array.isArray(values)) throw new MalformedMetadata(`${name} is not an array`)
  return values.includes(alg)
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
