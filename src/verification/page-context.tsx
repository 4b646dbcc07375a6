import type { AppDeps } from '../deps.ts'
import type { MethodClass } from '../db/schema.ts'
import { OAuthError } from '../errors.ts'
import { createClientCache } from '../clients/client-cache.ts'
import { siteHomeUrl, type Client } from '../clients/model.ts'
import { issueCode } from '../oauth/issue-code.ts'
import { randomToken } from '../lib/crypto.ts'
import { languages } from '../i18n/languages.ts'
import type { Language } from '../i18n/language-codes.ts'
import { createCookieJar, type Cookies } from '../web/cookies.ts'
import { pageHeaders, type ResponseSet } from '../web/headers.ts'
import { requestLanguage } from '../web/language.ts'
import { ownOrigins, refuseForeignPost } from '../web/origin.ts'
import { VerifyPage } from './verify-page.tsx'
import type { LogoVersion } from '../branding/branding.ts'
import { pageBranding, siteName } from '../branding/page-branding.ts'
import { acceptsMethod } from '../clients/methods.ts'
import { canSavePasskey } from '../passkeys/registration.ts'
import { PASSKEY_LIFETIME_MS } from '../passkeys/store.ts'
import { AGE_PASS_COOKIE, AGE_PASS_LIFETIME_MS, passCovers, prepareAgePass, readAgePass, type AgePass } from './age-pass.ts'
import { callbackUrl } from './authorize.ts'
import { createMethods, methodsFor } from './methods/index.ts'
import type { VerificationMethod } from './methods/method.ts'
import { checkCsrfToken, claimSession, findSession, MAX_FAILED_ATTEMPTS, type FoundSession, type HitGuard } from './sessions.ts'
import type { VerificationSession } from './sessions.ts'

/** Binds a verification session to the browser that opened it. */
export const BROWSER_COOKIE = 'ofage_browser'
/**
 * "This browser saved or used a passkey here" (the value `1`, nothing about which one or whose): the page
 * then offers to delete it. A passkey lives in the device; without this hint the server cannot tell.
 */
export const PASSKEY_HINT_COOKIE = 'ofage_passkey'
/** As long as a passkey re-verifies (a year after its check). */
export const PASSKEY_HINT_SECONDS = PASSKEY_LIFETIME_MS / 1000

/** A session of this browser and its client; `logo`, the version of the client's logo, as the page shows it. */
export type Page = { session: VerificationSession; client: Client; logo: LogoVersion | undefined; lang: Language; cookie: Cookies }
export type PageContext = ReturnType<typeof createPageContext>

/**
 * What every route of the hosted page shares: opening the session a request refers to (for this
 * browser only), checking a form post, rendering the page, and completing an approved check.
 */
export function createPageContext(deps: AppDeps) {
  const methods = createMethods(deps)
  const cookies = createCookieJar(deps.config.appUrl)
  const own = ownOrigins(deps.config)
  const clients = createClientCache(deps.db, deps.clock)

  /**
   * Loads the session a form or link refers to, for this browser only, in one statement; its client from
   * this instance's copy when the statement found the copy's version, else from the row.
   */
  async function openPage(id: string, cookie: Cookies, request: Request, lang: string | undefined): Promise<Page> {
    return (await openSessionPage(id, cookie, request, lang)).page
  }

  /** {@link openPage}; with `check` (a method's post), the same statement counts the check and takes an attempt (sessions.ts `findSession`). */
  async function openSessionPage(id: string, cookie: Cookies, request: Request, lang: string | undefined, check?: { hit: HitGuard }) {
    const found = await findSession(deps, id, cookies.read(cookie, BROWSER_COOKIE), check)
    const client = found && (await clientOf(found))
    if (!found || !client || found.session.completedAt) {
      throw new OAuthError('session_expired', 'The verification session is unknown, expired, completed or bound to another browser')
    }
    const page: Page = { session: found.session, client, logo: found.logo, cookie, lang: requestLanguage(request, lang) }
    return { page, hits: found.hits, attempt: found.attempt }
  }

  async function clientOf(found: FoundSession): Promise<Client | undefined> {
    if (found.clientVersion === null) return undefined
    const kept = await clients.find(found.session.clientId)
    if (!kept || kept.fresh || kept.version === found.clientVersion) return kept?.client
    return (await clients.read(found.session.clientId))?.client
  }

  /** A form post: not from another site (src/web/origin.ts), for a live session of this browser. */
  async function openPost(id: string, cookie: Cookies, request: Request, lang: string | undefined): Promise<Page> {
    refuseForeignPost(request, own)
    return openPage(id, cookie, request, lang)
  }

  /** A method's post: {@link openPost}, counting the address's check and taking one of the session's attempts. */
  async function openCheck(id: string, cookie: Cookies, request: Request, lang: string | undefined, hit: HitGuard) {
    refuseForeignPost(request, own)
    return openSessionPage(id, cookie, request, lang, { hit })
  }

  /** Refuses a post whose CSRF token (a form field, or the page script's `x-csrf-token` header) is not the session's. */
  function checkPostToken(page: Page, csrf: unknown): void {
    if (!checkCsrfToken(page.session, csrf)) throw new OAuthError('forbidden', 'CSRF token mismatch')
  }

  /** A form post: {@link openPost}, then the right CSRF token in the form. */
  async function openForm(id: string, cookie: Cookies, request: Request, lang: string | undefined, csrf: string): Promise<Page> {
    const page = await openPost(id, cookie, request, lang)
    checkPostToken(page, csrf)
    return page
  }

  /** `failed`: the alert follows a method post that did not pass, a dead end that offers the way back. */
  async function render(
    page: Page,
    set: ResponseSet,
    extra: { alert?: string; failed?: boolean; notice?: string; pass?: AgePass | null } = {},
  ) {
    const { session, client, lang } = page
    const t = languages[lang]
    const pass = extra.pass === null ? undefined : (extra.pass ?? (await readAgePass(deps, cookies.read(page.cookie, AGE_PASS_COOKIE))))
    const locked = session.failedAttempts >= MAX_FAILED_ATTEMPTS
    const offered = offeredMethods(page)
    const branding = pageBranding(client, page.logo)
    Object.assign(set.headers, pageHeaders({ formTargets: [session.redirectUri] }))
    return (
      <VerifyPage
        lang={lang}
        client={client}
        ageRequired={session.ageRequired}
        sessionPath={`/s/${session.id}`}
        csrfToken={session.csrfToken}
        methods={offered}
        passAge={passCovers(pass, client, session.ageRequired) ? session.ageRequired : undefined}
        canSavePasskey={pass !== undefined && canSavePasskey({ provenAt: pass.createdAt }, deps.clock.now())}
        passkeys={acceptsMethod(client, 'passkey')}
        passkeySaved={cookies.read(page.cookie, PASSKEY_HINT_COOKIE) === '1'}
        alert={locked ? t.tooManyAttempts(siteName(client)) : extra.alert}
        notice={extra.notice}
        locked={locked}
        homeUrl={locked || extra.failed || offered.length === 0 ? siteHomeUrl(client, session.redirectUri) : undefined}
        siteHome={siteHomeUrl(client, session.redirectUri)}
        methodsClosed={session.closedMethods.length > 0}
        branding={branding}
      />
    )
  }

  /**
   * Turns an approved check into a code and sends the visitor back with it (303). The session is claimed
   * in the code's transaction, so a double submission issues one code and a failure leaves it open. A re-verification
   * (an age pass, a passkey) carries the person key of the check it stands for and leaves no new pass.
   */
  async function complete(
    page: Page,
    set: ResponseSet,
    approval: { method: string; methodClass: MethodClass; provenAge: number; ageBuffer?: number; reverifiedWith?: Pick<AgePass, 'personKey'> },
  ) {
    const { session, client, cookie } = page
    // One person keeps one `sub` per client across checks: the key of an earlier pass, if any.
    const earlier = approval.reverifiedWith ? undefined : await readAgePass(deps, cookies.read(cookie, AGE_PASS_COOKIE))
    const personKey = approval.reverifiedWith?.personKey ?? earlier?.personKey ?? randomToken(32)
    // The pass is written with the code, in its statement: a refused code (a plan at its limit) leaves none.
    const pass = approval.reverifiedWith
      ? undefined
      : await prepareAgePass(deps, { ageOver: approval.provenAge, methodClass: approval.methodClass, sandbox: client.sandbox, personKey })
    // The claim is part of the code's statement: a refused code, or a process killed half-way, leaves the
    // session open for another try instead of completed with no code.
    const { code } = await issueCode(
      deps,
      {
        clientId: client.id,
        redirectUri: session.redirectUri,
        state: session.state,
        codeChallenge: session.codeChallenge,
        ageOver: session.ageRequired,
        methodClass: approval.methodClass,
        reverification: approval.reverifiedWith !== undefined,
        personKey,
        method: approval.method,
        ageBuffer: approval.ageBuffer,
      },
      { claim: claimSession(session, deps.clock.now()), alongside: pass?.alongside, limited: client.verificationLimit !== null },
    )
    if (pass) cookies.write(cookie, AGE_PASS_COOKIE, pass.cookie, AGE_PASS_LIFETIME_MS / 1000)
    deps.metrics.codes.inc({ event: 'issued' })
    Object.assign(set.headers, pageHeaders({ formTargets: [session.redirectUri] }), { location: callbackUrl(session.redirectUri, code, session.state, deps.config.issuerUrl) })
    set.status = 303
    return ''
  }

  /** The methods this page offers: those the client may use, less those this session has closed. */
  function offeredMethods(page: Page): VerificationMethod[] {
    return methodsFor(methods, page.client).filter((method) => !page.session.closedMethods.includes(method.id))
  }

  return { cookies, clients, openPage, openPost, openCheck, checkPostToken, openForm, render, complete, offeredMethods }
}
