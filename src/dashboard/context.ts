import { t, type Cookie } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { randomToken } from '../lib/crypto.ts'
import { readStrictBody, rejectDuplicateQuery } from '../lib/strict-request.ts'
import { pageHeaders } from '../pages/headers.ts'
import { isLanguage, pickLanguage } from '../pages/i18n.ts'
import { csrfMatches, preSessionCsrfToken, refuseForeignPost, sessionCsrfToken } from './csrf.ts'
import { href, type Account, type View } from './layout.tsx'
import { findDashboardSession, SESSION_LIFETIME_MS, type SignedIn } from './sessions.ts'

export type Cookies = Record<string, Cookie<unknown>>
export type ResponseSet = { headers: Record<string, unknown>; status?: unknown }

export const LangQuery = t.Object({ lang: t.Optional(t.String({ maxLength: 8 })) })
export const CsrfForm = t.Object({ csrf: t.String({ maxLength: 128 }) }, { additionalProperties: t.String({ maxLength: 1024 }) })
/** Form posts are read strictly (one content type, a size bound, no field twice), as the hosted page's are. */
export const readForm = ({ request }: { request: Request }) => readStrictBody(request, ['form'])

/** The pre-session cookie lives a day: the sign-in form it protects may stay open that long. */
const FORM_COOKIE_SECONDS = 24 * 60 * 60

export type DashboardContext = ReturnType<typeof createDashboardContext>

/**
 * What the dashboard's routes share: its cookies, who is signed in, the CSRF and Origin checks of its
 * forms, and how a page is framed and answered.
 *
 * Cookies: HttpOnly, SameSite=Lax, Path=/, Secure when APP_URL is https, and then named with the `__Host-`
 * prefix, which browsers accept only from a secure origin without a Domain: no sibling subdomain can set
 * or overwrite them (RFC 6265bis §4.1.3.2).
 */
export function createDashboardContext(deps: AppDeps) {
  const secure = deps.config.appUrl.startsWith('https:')
  const prefix = secure ? '__Host-' : ''
  const sessionCookie = `${prefix}ofage_dashboard`
  const formCookie = `${prefix}ofage_dashboard_form`
  const cookieOptions = { httpOnly: true, sameSite: 'lax' as const, secure, path: '/' }
  // The process serves its pages under APP_URL and PUBLIC_URL alike.
  const ownOrigins = new Set([new URL(deps.config.appUrl).origin, new URL(deps.config.publicUrl).origin])
  const key = deps.keys.dashboardKey

  function viewOf(request: Request, lang: string | undefined): View {
    return { lang: pickLanguage(request.headers.get('accept-language'), lang), explicit: isLanguage(lang) }
  }

  /** The session the request's cookie names, if it is live. */
  function currentSession(cookie: Cookies): Promise<SignedIn | undefined> {
    return findDashboardSession(deps, stringCookie(cookie[sessionCookie]))
  }

  /** A page's request: one value per query parameter (else 400), its language, and who is signed in, if anyone. */
  async function openPage(cookie: Cookies, request: Request, lang: string | undefined): Promise<{ view: View; session: SignedIn | undefined }> {
    rejectDuplicateQuery(request)
    return { view: viewOf(request, lang), session: await currentSession(cookie) }
  }

  function accountOf(session: SignedIn): Account {
    const { user, client } = session
    return { email: user.email, clientId: client.id, clientName: client.name, sandbox: client.sandbox, csrf: sessionCsrfToken(key, session.token) }
  }

  function startSession(cookie: Cookies, token: string): void {
    cookie[sessionCookie]!.set({ value: token, ...cookieOptions, maxAge: SESSION_LIFETIME_MS / 1000 })
  }

  function clearSession(cookie: Cookies): void {
    cookie[sessionCookie]!.set({ value: '', ...cookieOptions, maxAge: 0 })
  }

  /**
   * A signed-in form post: not from another site, from a live session, with that session's CSRF token.
   * Undefined when no session is live (the caller sends the browser to sign in); a wrong token is 403.
   */
  async function openPost(cookie: Cookies, request: Request, csrf: string): Promise<SignedIn | undefined> {
    refuseForeignPost(request, ownOrigins)
    const session = await currentSession(cookie)
    if (session && !csrfMatches(sessionCsrfToken(key, session.token), csrf)) throw new OAuthError('forbidden', 'CSRF token mismatch')
    return session
  }

  /** The CSRF token of a form shown before sign-in, from this browser's pre-session cookie (set here if absent). */
  function formToken(cookie: Cookies): string {
    const existing = stringCookie(cookie[formCookie])
    const value = existing && existing.length <= 64 ? existing : randomToken(24)
    cookie[formCookie]!.set({ value, ...cookieOptions, maxAge: FORM_COOKIE_SECONDS })
    return preSessionCsrfToken(key, value)
  }

  /** This browser's pre-session cookie, once {@link checkFormPost} has accepted a post with its token. */
  function formCookieValue(cookie: Cookies): string | undefined {
    return stringCookie(cookie[formCookie])
  }

  /** A pre-session form post: not from another site, with the token of this browser's pre-session cookie. */
  function checkFormPost(cookie: Cookies, request: Request, csrf: string): void {
    refuseForeignPost(request, ownOrigins)
    const value = stringCookie(cookie[formCookie])
    if (!value || !csrfMatches(preSessionCsrfToken(key, value), csrf)) throw new OAuthError('forbidden', 'CSRF token mismatch')
  }

  /** Frames a page's answer: the strict headers of every page, and its status. */
  function page(set: ResponseSet, status = 200): void {
    Object.assign(set.headers, pageHeaders())
    set.status = status
  }

  /** A 303 to another dashboard page, keeping the chosen language. */
  function redirect(set: ResponseSet, view: View, path: string): string {
    Object.assign(set.headers, pageHeaders(), { location: href(view, path) })
    set.status = 303
    return ''
  }

  return { currentSession, openPage, accountOf, startSession, clearSession, openPost, formToken, formCookieValue, checkFormPost, viewOf, page, redirect }
}

function stringCookie(cookie: Cookie<unknown> | undefined): string | undefined {
  const value = cookie?.value
  return typeof value === 'string' && value !== '' ? value : undefined
}
