/**
 * Who the passkeys belong to (WebAuthn §5.4.2 "rp"): the hosted page's host, so a passkey saved on the page
 * works wherever that page is served, and only there. The browser refuses an RP ID that is not a registrable
 * domain suffix of the page's origin, and refuses every IP address: serve the page under a name.
 */
export type RelyingParty = {
  /** The RP ID: the hostname of APP_URL, no port. */
  id: string
  /** The origin the browser reports in clientDataJSON: scheme, host and port of APP_URL. */
  origin: string
  /** Shown by some authenticators next to the passkey. */
  name: string
}

/** The relying party of a deployment, from APP_URL (validated at start, so this cannot throw). */
export function relyingPartyFor(appUrl: string): RelyingParty {
  const url = new URL(appUrl)
  return { id: url.hostname, origin: url.origin, name: url.hostname }
}

/**
 * COSE algorithms we accept (IANA COSE registry): ES256 (-7), which every platform authenticator offers,
 * and RS256 (-257), for Windows Hello. EdDSA is left out to keep the verifier's surface small.
 */
export const PASSKEY_ALGORITHMS = [-7, -257]

/** A ceremony's answer must come within this; its challenge is then gone (the browser's own timeout too). */
export const PASSKEY_CHALLENGE_LIFETIME_MS = 2 * 60_000
