import type { Config } from '../config.ts'

/** What a route's `set` lets a helper add to its answer. */
export type ResponseSet = { headers: Record<string, unknown>; status?: unknown }

/** A year, the least HSTS max-age that preload lists and scanners accept. */
export const HSTS_MAX_AGE_SECONDS = 365 * 24 * 60 * 60

/**
 * Strict-Transport-Security for every answer when the service's address is https (RFC 6797): a browser
 * that has seen it never again sends a code, a session cookie or a password over plain http to this host,
 * even when a link or a typed address says http. Browsers ignore it on plain http (§8.1), so it is not sent
 * there. `includeSubDomains` only when the operator says so (HSTS_INCLUDE_SUBDOMAINS): it binds every
 * sibling host under the name too.
 */
export function transportSecurityHeader(config: Pick<Config, 'appUrl' | 'publicUrl' | 'hstsIncludeSubDomains'>): string | undefined {
  if (!config.appUrl.startsWith('https:') && !config.publicUrl.startsWith('https:')) return undefined
  return `max-age=${HSTS_MAX_AGE_SECONDS}${config.hstsIncludeSubDomains ? '; includeSubDomains' : ''}`
}

/**
 * Headers on every HTML page. The CSP allows our own stylesheet and script files and nothing else to load
 * (no inline script at all); the camera may be used by our own pages only (the face check). Forms may post
 * only to us, plus the origin we then redirect to: browsers apply `form-action` to the redirect after a
 * form post, so without it the 303 back to the client would be blocked. No page may be framed, and no page
 * sends a Referer, so a code in a URL cannot leak.
 */
export function pageHeaders(options: { formTargets?: string[] } = {}): Record<string, string> {
  const formAction = ["'self'", ...new Set((options.formTargets ?? []).map((url) => new URL(url).origin))].join(' ')
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': [
      "default-src 'none'",
      "style-src 'self'",
      "script-src 'self'",
      "img-src 'self'",
      // The face check's script asks for its challenge and posts its frames to us, and nowhere else.
      "connect-src 'self'",
      `form-action ${formAction}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join('; '),
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'cross-origin-opener-policy': 'same-origin',
    // Passkeys (WebAuthn) may be created and used by our own pages only, never from a frame.
    'permissions-policy': 'camera=(self), microphone=(), geolocation=(), publickey-credentials-create=(self), publickey-credentials-get=(self)',
    // Pages carry CSRF tokens and per-visitor state.
    'cache-control': 'no-store',
  }
}

export function htmlDocument(body: string): string {
  return `<!doctype html>${body}`
}
