import type { X509Certificate } from 'node:crypto'
import { encodeCbor } from '../iso-mdoc/cbor-env.ts'
import { decodeBoundedCbor, isBytes } from './bounded-cbor.ts'
import { checkCertificateChain } from './trust-list.ts'
import { readVicalPayload, type Vical } from './vical-payload.ts'

export type { Vical, VicalEntry } from './vical-payload.ts'

/**
 * A VICAL (Verified Issuer Certificate Authority List, ISO/IEC 18013-5:2021 Annex C.1.7), such as the one
 * AAMVA's Digital Trust Service publishes for US and Canadian mDL issuers: the IACA roots it vouches for, or
 * why it is refused.
 */
export type VicalResult = { ok: true; vical: Vical } | { ok: false; reason: VicalFailure }

/**
 * - `malformed`: not a COSE_Sign1 VICAL as Annex C.1.7.1 describes it (including an algorithm other than
 *   ES256/ES384/ES512, no x5chain, a detached payload, bytes over {@link MAX_VICAL_BYTES});
 * - `untrusted_signer`: the x5chain leads to none of the signer roots, or its leaf is no VICAL signer;
 * - `invalid_signature`: the signature does not verify with the leaf's key;
 * - `expired`: a certificate on the chain is not valid now, or the list is past its `nextUpdate`.
 */
export type VicalFailure = 'malformed' | 'untrusted_signer' | 'invalid_signature' | 'expired'

/** AAMVA's list is about 20 KB for 13 issuers; 16 MiB leaves room for thousands and refuses a flood. */
export const MAX_VICAL_BYTES = 16 * 1024 * 1024

/**
 * id-mdl-kp-mdlVICAL (ISO/IEC 18013-5 Annex C.1.7.2), the extended key usage of a VICAL signer certificate.
 * AAMVA's "AAMVA Prod Vical-Signer-01" and Austroads' signer both carry it; without it, any certificate a
 * provider's root issued (a TLS server's, say) could sign a list of roots.
 */
export const VICAL_SIGNER_KEY_USAGE = '1.0.18013.5.1.8'

const COSE_SIGN1_TAG = 18
const HEADER_ALG = 1
const HEADER_CRIT = 2
/** RFC 9360 §2: x5chain, one certificate as a bstr or several as an array, leaf first. */
const HEADER_X5CHAIN = 33

/** RFC 9053 §2.1: ECDSA with the hash and, as RFC 9053 recommends, the curve of the same strength. */
const ECDSA_ALGORITHMS = new Map([
  [-7, { hash: 'SHA-256', namedCurve: 'P-256', nodeCurve: 'prime256v1' }],
  [-35, { hash: 'SHA-384', namedCurve: 'P-384', nodeCurve: 'secp384r1' }],
  [-36, { hash: 'SHA-512', namedCurve: 'P-521', nodeCurve: 'secp521r1' }],
])

const ENVELOPE_LIMITS = { maxDepth: 4, tags: new Set([COSE_SIGN1_TAG]) }
const HEADER_LIMITS = { maxDepth: 4, tags: new Set<number>() }

/**
 * Reads a signed VICAL: a COSE_Sign1 (RFC 9052 §4.2, tagged 18 or not) whose protected header names an ECDSA
 * algorithm and whose x5chain leads, certificate by certificate, to one of `signerRoots` (the VICAL
 * provider's roots, as AAMVA publishes them), every certificate valid at `now`. The payload is read only
 * once the signature over `["Signature1", protected, h'', payload]` holds with the leaf's key.
 *
 * Field names and layout follow ISO/IEC 18013-5:2021 Annex C.1.7.1 (`VICAL`, `CertificateInfo`), as
 * Multipaz's `SignedVical` (openwallet-foundation-labs/identity-credential) and spruceid's isomdl transcribe
 * them; checked against AAMVA's and Austroads' published lists, which are untagged COSE_Sign1 with ES256, an
 * unprotected x5chain (AAMVA: an array of signer, issuing CA and root; Austroads: the signer alone, as a bstr).
 */
export async function readVical(bytes: Uint8Array, options: { signerRoots: X509Certificate[]; now: Date }): Promise<VicalResult> {
  if (bytes.byteLength > MAX_VICAL_BYTES) return { ok: false, reason: 'malformed' }
  const sign1 = readCoseSign1(bytes)
  if (!sign1) return { ok: false, reason: 'malformed' }
  const chain = checkCertificateChain({ keys: [], roots: options.signerRoots }, sign1.x5chain, options.now)
  if (!chain.trusted) return { ok: false, reason: chain.failure === 'expired' ? 'expired' : 'untrusted_signer' }
  if (!chain.leaf.keyUsage?.includes(VICAL_SIGNER_KEY_USAGE)) return { ok: false, reason: 'untrusted_signer' }
  if (!(await verifySignature(sign1, chain.leaf))) return { ok: false, reason: 'invalid_signature' }
  const vical = readVicalPayload(sign1.payload)
  if (!vical) return { ok: false, reason: 'malformed' }
  // A list past its nextUpdate has been replaced, and an issuer withdrawn since may still be in it: refused at
  // import, so the operator fetches the current one. AAMVA's issue 89782 set nextUpdate a day after its date.
  if (vical.nextUpdate && vical.nextUpdate < options.now) return { ok: false, reason: 'expired' }
  return { ok: true, vical }
}

type CoseSign1 = { protectedBytes: Uint8Array; alg: number; x5chain: Uint8Array[]; payload: Uint8Array; signature: Uint8Array }

function readCoseSign1(bytes: Uint8Array): CoseSign1 | undefined {
  const decoded = decodeBoundedCbor(bytes, ENVELOPE_LIMITS)
  if (!decoded) return undefined
  const value = untag(decoded.value)
  if (!Array.isArray(value) || value.length !== 4) return undefined
  const [protectedBytes, unprotected, payload, signature] = value as unknown[]
  // A nil payload is detached (RFC 9052 §4.1): a VICAL travels with its list, so there is nothing to check.
  if (!isBytes(protectedBytes) || !(unprotected instanceof Map) || !isBytes(payload) || !isBytes(signature)) return undefined
  const header = protectedBytes.byteLength === 0 ? undefined : decodeBoundedCbor(protectedBytes, HEADER_LIMITS)?.value
  if (!(header instanceof Map)) return undefined
  // RFC 9052 §3.1: the algorithm belongs in the protected header, where the signature covers it; `crit` names
  // headers a reader must understand, and we understand none beyond these.
  const alg = header.get(HEADER_ALG)
  if (typeof alg !== 'number' || !ECDSA_ALGORITHMS.has(alg) || header.has(HEADER_CRIT) || unprotected.has(HEADER_ALG)) return undefined
  if (header.has(HEADER_X5CHAIN) && unprotected.has(HEADER_X5CHAIN)) return undefined
  const x5chain = readX5chain(header.get(HEADER_X5CHAIN) ?? unprotected.get(HEADER_X5CHAIN))
  if (!x5chain) return undefined
  return { protectedBytes, alg, x5chain, payload, signature }
}

function readX5chain(value: unknown): Uint8Array[] | undefined {
  if (isBytes(value)) return [value]
  if (Array.isArray(value) && value.length > 0 && value.every(isBytes)) return value
  return undefined
}

async function verifySignature(sign1: CoseSign1, leaf: X509Certificate): Promise<boolean> {
  const algorithm = ECDSA_ALGORITHMS.get(sign1.alg)!
  if (leaf.publicKey.asymmetricKeyType !== 'ec' || leaf.publicKey.asymmetricKeyDetails?.namedCurve !== algorithm.nodeCurve) return false
  // RFC 9052 §4.4: Sig_structure = ["Signature1", body_protected, external_aad, payload], with no external data.
  const toBeSigned = encodeCbor(['Signature1', sign1.protectedBytes, new Uint8Array(0), sign1.payload])
  try {
    const spki = leaf.publicKey.export({ format: 'der', type: 'spki' })
    const key = await crypto.subtle.importKey('spki', spki, { name: 'ECDSA', namedCurve: algorithm.namedCurve }, false, ['verify'])
    // RFC 9053 §2.1: the signature is r || s, each the size of the curve's order: WebCrypto's own format.
    return await crypto.subtle.verify({ name: 'ECDSA', hash: algorithm.hash }, key, new Uint8Array(sign1.signature), new Uint8Array(toBeSigned))
  } catch {
    return false
  }
}

/** RFC 9052 §4.2: COSE_Sign1 may come tagged (18) or not; cbor-x leaves a tag as `{ tag, value }`. */
function untag(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && 'tag' in value && 'value' in value) {
    return value.tag === COSE_SIGN1_TAG ? value.value : undefined
  }
  return value
}
