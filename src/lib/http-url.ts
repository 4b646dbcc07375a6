import { RuleError } from '../errors.ts'

/**
 * An absolute http(s) URL without credentials or fragment, parsed: the rules for any address the service
 * sends someone or something to (a site's home page, a webhook endpoint). `label` names it in the error.
 */
export function readHttpUrl(label: string, url: string): URL {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new RuleError('url_invalid', `${label} must be an absolute http(s) URL: ${url}`)
  }
  // The parser drops tabs and newlines and trims spaces; a stored address is compared and shown as given.
  if (/[\u0000-\u0020\u007f]/.test(url)) throw new RuleError('url_invalid', `${label} must not contain spaces or control characters: ${JSON.stringify(url)}`)
  if (url.includes('#')) throw new RuleError('url_invalid', `${label} must not contain a fragment: ${url}`)
  if (parsed.username || parsed.password) throw new RuleError('url_invalid', `${label} must not contain credentials: ${url}`)
  return parsed
}

/**
 * The hosts on which plain http never leaves the machine: RFC 9700 §2.6 allows http redirect URIs only
 * for loopback (RFC 8252 §7.3 names `127.0.0.1` and `[::1]`; `localhost` is taken too, for a developer's
 * own site), on any port.
 */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost'])

/** Whether an address would carry codes or visitors over plain http across a network. */
export function isCleartextUrl(url: string | URL): boolean {
  const parsed = typeof url === 'string' ? (URL.canParse(url) ? new URL(url) : undefined) : url
  return parsed?.protocol === 'http:' && !LOOPBACK_HOSTS.has(parsed.hostname)
}

/**
 * Refuses an http address (other than loopback) for a live client. Sandbox clients may keep http: their
 * tokens say `sandbox: true` and prove nothing, so a test setup on a plain-http host loses nothing.
 */
export function refuseCleartextUrl(label: string, url: URL, sandbox: boolean): void {
  if (sandbox || !isCleartextUrl(url)) return
  throw new RuleError(
    'url_cleartext',
    `${label} must use https for a live client: over plain http the authorization code and the visitor could be read or changed on the way (RFC 9700 §2.6). ` +
      `Only loopback addresses (http://127.0.0.1, http://[::1], http://localhost, any port) and sandbox clients may use http: ${url.href}`,
  )
}
