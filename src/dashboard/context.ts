import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { randomToken } from '../lib/crypto.ts'
import { rejectDuplicateQuery } from '../lib/strict-request.ts'
import { isDashboardLanguage } from '../i18n/negotiate.ts'
import { createCookieJar, type Cookies } from '../web/cookies.ts'
import { pageHeaders, type ResponseSet } from '../web/headers.ts'
import { requestDashboardLanguage } from '../web/language.ts'
import { ownOrigins, refuseForeignPost } from '../web/origin.ts'
import { csrfMatches, preSessionCsrfToken, sessionCsrfToken } from './csrf.ts'
import { href, type Account, type View } from './layout.tsx'
import { findDashboardSession, SESSION_LIFETIME_MS, type SignedIn } from './sessions.ts'

const SESSION_COOKIE = 'ofage_dashboard'
const FORM_COOKIE = 'ofage_dashboard_form'
/** The pre-session cookie lives a day: the sign-in form it protects may stay open that long. */
const FORM_COOKIE_SECONDS = 24 * 60 * 60

export type DashboardContext = ReturnType<typeof createDashboardContext>

/**
 * What the dashboard's routes share: its cookies (src/web/cookies.ts), who is signed in, the CSRF and
 * Origin checks of its forms, and how a page is framed and answered.
 */
export function createDashboardContext(deps: AppDeps) {
  const cookies = createCookieJar(deps.config.appUrl)
  const own = ownOrigins(deps.config)
  const key = deps.keys.dashboardKey

  function viewOf(request: Request, lang: string | undefined): View {
    return { lang: requestDashboardLanguage(request, lang), explicit: isDashboardLanguage(lang) }
  }

  /** The session the request's cookie names, if it is live. */
  function currentSession(cookie: Cookies): Promise<SignedIn | undefined> {
    return findDashboardSession(deps, cookies.read(cookie, SESSION_COOKIE))
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
    cookies.write(cookie, SESSION_COOKIE, token, SESSION_LIFETIME_MS / 1000)
  }

  function clearSession(cookie: Cookies): void {
    cookies.clear(cookie, SESSION_COOKIE)
  }

  /**
   * A signed-in form post: not from another site, from a live session, with that session's CSRF token.
   * Undefined when no session is live (the caller sends the browser to sign in); a wrong token is 403.
   */
  async function openPost(cookie: Cookies, request: Request, csrf: string): Promise<SignedIn | undefined> {
    refuseForeignPost(request, own)
    const session = await currentSession(cookie)
    if (session && !csrfMatches(sessionCsrfToken(key, session.token), csrf)) throw new OAuthError('forbidden', 'CSRF token mismatch')
    return session
  }

  /** The CSRF token of a form shown before sign-in, from this browser's pre-session cookie (set here if absent). */
  function formToken(cookie: Cookies): string {
    const existing = cookies.read(cookie, FORM_COOKIE)
    const value = existing && existing.length <= 64 ? existing : randomToken(24)
    cookies.write(cookie, FORM_COOKIE, value, FORM_COOKIE_SECONDS)
    return preSessionCsrfToken(key, value)
  }

  /** This browser's pre-session cookie, once {@link checkFormPost} has accepted a post with its token. */
  function formCookieValue(cookie: Cookies): string | undefined {
    return cookies.read(cookie, FORM_COOKIE)
  }

  /** A pre-session form post: not from another site, with the token of this browser's pre-session cookie. */
  function checkFormPost(cookie: Cookies, request: Request, csrf: string): void {
    refuseForeignPost(request, own)
    const value = cookies.read(cookie, FORM_COOKIE)
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
