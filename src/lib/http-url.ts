import { OAuthError } from '../errors.ts'

/**
 * An absolute http(s) URL without credentials or fragment, parsed: the rules for any address the service
 * sends someone or something to (a site's home page, a webhook endpoint). `label` names it in the error.
 */
export function readHttpUrl(label: string, url: string): URL {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new OAuthError('invalid_request', `${label} must be an absolute http(s) URL: ${url}`)
  }
  // The parser drops tabs and newlines and trims spaces; a stored address is compared and shown as given.
  if (/[\u0000-\u0020\u007f]/.test(url)) throw new OAuthError('invalid_request', `${label} must not contain spaces or control characters: ${JSON.stringify(url)}`)
  if (url.includes('#')) throw new OAuthError('invalid_request', `${label} must not contain a fragment: ${url}`)
  if (parsed.username || parsed.password) throw new OAuthError('invalid_request', `${label} must not contain credentials: ${url}`)
  return parsed
}
