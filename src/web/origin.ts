import type { Config } from '../config.ts'
import { OAuthError } from '../errors.ts'

/** The origins this process serves its pages under: APP_URL's and PUBLIC_URL's. */
export function ownOrigins(config: Pick<Config, 'appUrl' | 'publicUrl'>): ReadonlySet<string> {
  return new Set([new URL(config.appUrl).origin, new URL(config.publicUrl).origin])
}

/**
 * Refuses a form post from another site before anything else is read: a foreign `Origin`, or a browser's
 * `Sec-Fetch-Site` saying `cross-site` or `same-site` (a sibling subdomain is another site to us: it may
 * be anyone's). `Origin: null` says nothing: under `Referrer-Policy: no-referrer` browsers send it even
 * for our own forms (Fetch standard, "serializing a request origin").
 */
export function refuseForeignPost(request: Request, own: ReadonlySet<string>): void {
  const origin = request.headers.get('origin')
  const fetchSite = request.headers.get('sec-fetch-site')
  if ((origin !== null && origin !== 'null' && !own.has(origin)) || fetchSite === 'cross-site' || fetchSite === 'same-site') {
    throw new OAuthError('forbidden', 'Cross-site form post')
  }
}
