import { createHash } from 'node:crypto'
import { encodeCbor } from '../iso-mdoc/cbor-env.ts'

/**
 * The SessionTranscript of a request sent by redirect or QR code, OpenID4VP 1.0 Appendix B.2.6.1:
 * `[null, null, ["OpenID4VPHandover", sha256(cbor([clientId, nonce, jwkThumbprint, responseUri]))]]`.
 * `jwkThumbprint` is the RFC 7638 thumbprint (32 bytes) of our response encryption key, when the response is
 * encrypted (`direct_post.jwt`); null otherwise.
 */
export function openId4VpSessionTranscript(request: { clientId: string; nonce: string; responseUri: string; jwkThumbprint?: Uint8Array }): Uint8Array {
  const info = [request.clientId, request.nonce, request.jwkThumbprint ?? null, request.responseUri]
  return encodeCbor([null, null, ['OpenID4VPHandover', sha256(encodeCbor(info))]])
}

/**
 * The SessionTranscript of a request through the Digital Credentials API, OpenID4VP 1.0 Appendix B.2.6.2:
 * `[null, null, ["OpenID4VPDCAPIHandover", sha256(cbor([origin, nonce, jwkThumbprint]))]]`. `origin` is the
 * page's origin as the browser asserts it, without an `origin:` prefix; `jwkThumbprint` as above, for
 * `dc_api.jwt`.
 */
export function dcApiSessionTranscript(request: { origin: string; nonce: string; jwkThumbprint?: Uint8Array }): Uint8Array {
  const info = [request.origin, request.nonce, request.jwkThumbprint ?? null]
  return encodeCbor([null, null, ['OpenID4VPDCAPIHandover', sha256(encodeCbor(info))]])
}

function sha256(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(bytes).digest())
}
