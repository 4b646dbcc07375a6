import { avAppQuery } from '../queries.ts'

/**
 * The request of the EU age verification app's profile (technical specification, Annex A §A.5, "OpenID for
 * Verifiable Presentations profile requirements"), the app's fallback when the browser has no Digital
 * Credentials API: invoked by the custom URL scheme `av://`, response type `vp_token`, response mode
 * `direct_post`, the request by value (no JAR), the client id `redirect_uri:` followed by the response URI,
 * a nonce, and a DCQL query (§6 of OpenID4VP 1.0). Request authentication is out of the profile's scope: it
 * relies on TLS and the Web PKI (§A.9), so nothing here is signed, and the answer comes back in the clear.
 */

/** The custom URL scheme that opens the app (§A.5: "at least a custom URL scheme av:// MUST be supported"). */
export const AV_APP_SCHEME = 'av://'

/**
 * OpenID4VP 1.0 §5.9.3, prefix `redirect_uri`: the rest of the client id is the response URI when the
 * response mode is `direct_post`. The mdoc's SessionTranscript (Appendix B.2.6.1) names this value.
 */
export function redirectUriClientId(responseUri: string): string {
  return `redirect_uri:${responseUri}`
}

/**
 * The `av://` link for one request: every parameter in its query, exactly those of the example of §A.10.
 * `responseUri` is the request's own (it carries a random value of the request), so the client id is the
 * request's own too. Left out, since the whole request has to fit a QR code a phone reads off a screen:
 * `state` (§A.5: optional; the response URI already finds the request) and `client_metadata` (OpenID4VP
 * 1.0 §5.1 needs `vp_formats_supported` only where the wallet cannot know it otherwise, and §A.6 fixes the
 * profile's one format and ES256 for every party).
 */
export function avAppLink(request: { responseUri: string; nonce: string; threshold: number }): string {
  const parameters = new URLSearchParams({
    response_type: 'vp_token',
    response_mode: 'direct_post',
    client_id: redirectUriClientId(request.responseUri),
    response_uri: request.responseUri,
    nonce: request.nonce,
    dcql_query: JSON.stringify(avAppQuery(request.threshold)),
  })
  return `${AV_APP_SCHEME}?${parameters}`
}
