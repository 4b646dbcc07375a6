/**
 * The wallet's own SessionTranscripts (OpenID4VP 1.0 Appendix B.2.6), with a CBOR encoder of its own
 * (RFC 8949 §3, the preferred serialization of §4.2.1: shortest heads, definite lengths), not the
 * verifier's session-transcript.ts. What the device signs is built here; the verifier builds what it expects.
 */

type Cbor = null | string | Uint8Array | Cbor[]

/** A data item's head: major type and argument, the argument in the fewest bytes (RFC 8949 §3, §4.2.1). */
function head(major: number, argument: number): number[] {
  const type = major << 5
  if (argument < 24) return [type | argument]
  if (argument < 0x100) return [type | 24, argument]
  if (argument < 0x10000) return [type | 25, argument >> 8, argument & 0xff]
  return [type | 26, (argument >>> 24) & 0xff, (argument >> 16) & 0xff, (argument >> 8) & 0xff, argument & 0xff]
}

/** CBOR of null, text strings, byte strings and arrays: all a SessionTranscript holds. */
export function encodeCbor(value: Cbor): Uint8Array<ArrayBuffer> {
  if (value === null) return Uint8Array.of(0xf6)
  if (typeof value === 'string') {
    const text = new TextEncoder().encode(value)
    return Uint8Array.from([...head(3, text.length), ...text])
  }
  if (value instanceof Uint8Array) return Uint8Array.from([...head(2, value.length), ...value])
  return Uint8Array.from([...head(4, value.length), ...value.flatMap((item) => [...encodeCbor(item)])])
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
}

/**
 * Where the answer goes, as the wallet read it from the request: the client id and response URI of a
 * cross-device request, or the origin the browser reported. `jwkThumbprint` is that of the key the answer
 * is encrypted to, null when it is not encrypted.
 */
export type HandoverBinding = ({ clientId: string; responseUri: string } | { origin: string }) & { jwkThumbprint: Uint8Array | null }

/**
 * `[null, null, Handover]`: `["OpenID4VPHandover", sha256(cbor([client_id, nonce, jwkThumbprint, response_uri]))]`
 * for a request by link or QR code (B.2.6.1), `["OpenID4VPDCAPIHandover", sha256(cbor([origin, nonce, jwkThumbprint]))]`
 * through the Digital Credentials API (B.2.6.2).
 */
export async function walletSessionTranscript(binding: HandoverBinding, nonce: string): Promise<Uint8Array> {
  const handover =
    'origin' in binding
      ? ['OpenID4VPDCAPIHandover', await sha256(encodeCbor([binding.origin, nonce, binding.jwkThumbprint]))]
      : ['OpenID4VPHandover', await sha256(encodeCbor([binding.clientId, nonce, binding.jwkThumbprint, binding.responseUri]))]
  return encodeCbor([null, null, handover])
}
