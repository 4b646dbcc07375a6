import type { Cookie } from 'elysia'

export type Cookies = Record<string, Cookie<unknown>>

/**
 * The service's own cookies, the same on every browser-facing surface (the hosted page, the dashboard):
 * HttpOnly, SameSite=Lax, Path=/; over https also Secure and named with the `__Host-` prefix, which
 * browsers accept only from a secure origin, without a Domain and with Path=/, so no sibling subdomain can
 * set or overwrite them (RFC 6265bis §4.1.3.2).
 */
export function createCookieJar(appUrl: string) {
  const secure = appUrl.startsWith('https:')
  const options = { httpOnly: true, sameSite: 'lax' as const, secure, path: '/' }
  const nameOf = (base: string): string => (secure ? `__Host-${base}` : base)

  function write(cookies: Cookies, base: string, value: string, maxAgeSeconds: number): void {
    cookies[nameOf(base)]!.set({ value, ...options, maxAge: maxAgeSeconds })
  }

  return {
    nameOf,
    /** The cookie's value, or undefined when it is absent or empty. */
    read: (cookies: Cookies, base: string): string | undefined => stringCookie(cookies[nameOf(base)]),
    write,
    clear: (cookies: Cookies, base: string): void => write(cookies, base, '', 0),
  }
}

export type CookieJar = ReturnType<typeof createCookieJar>

function stringCookie(cookie: Cookie<unknown> | undefined): string | undefined {
  const value = cookie?.value
  return typeof value === 'string' && value !== '' ? value : undefined
}
