import { html } from '@elysiajs/html'
import faceCaptureScript from '../../public/face-capture.js' with { type: 'file' }
import stylesheet from '../../public/ofage.css' with { type: 'file' }
import { Value } from '@sinclair/typebox/value'
import { Elysia, t, type Cookie } from 'elysia'
import type { AppDeps } from '../deps.ts'
import type { MethodClass } from '../db/schema.ts'
import { OAuthError } from '../errors.ts'
import { randomToken } from '../lib/crypto.ts'
import { readStrictBody, rejectDuplicateQuery } from '../lib/strict-request.ts'
import { findClient, siteHomeUrl, type Client } from '../oauth/clients.ts'
import { issueCode } from '../oauth/codes.ts'
import { pageHeaders } from '../pages/headers.ts'
import { languages, pickLanguage, type Language } from '../pages/i18n.ts'
import { VerifyPage } from '../pages/verify-page.tsx'
import { AGE_PASS_COOKIE, AGE_PASS_LIFETIME_MS, createAgePass, passCovers, readAgePass, revokeAgePass, type AgePass } from './age-pass.ts'
import { callbackUrl, checkAuthorizationRequest } from './authorize.ts'
import { EstimatorBusyError } from '../estimator/types.ts'
import { closeMethod, consumeFaceChallenge, issueFaceChallenge } from './face-challenge.ts'
import { createMethods, methodsFor } from './methods/index.ts'
import type { Verdict, VerificationMethod } from './methods/method.ts'
import {
  checkCsrfToken,
  claimSession,
  createSession,
  findSession,
  MAX_FAILED_ATTEMPTS,
  recordFailedAttempt,
  releaseSession,
  SESSION_LIFETIME_MS,
  type VerificationSession,
} from './sessions.ts'

const BROWSER_COOKIE = 'ofage_browser'
/** The files under public/ that pages load, embedded in a compiled binary; nothing else is served. */
const assets: Record<string, { path: string; type: string }> = {
  'ofage.css': { path: stylesheet, type: 'text/css; charset=utf-8' },
  'face-capture.js': { path: faceCaptureScript, type: 'text/javascript; charset=utf-8' },
}

const AuthorizationQuery = t.Object({
  client_id: t.String({ minLength: 1, maxLength: 256 }),
  redirect_uri: t.String({ minLength: 1, maxLength: 2048 }),
  state: t.Optional(t.String({ maxLength: 2048 })),
  // DESIGN.md: an integer from 1 to 99, default 18.
  age_required: t.Optional(t.String({ pattern: '^[1-9][0-9]?$' })),
  lang: t.Optional(t.String({ maxLength: 8 })),
})
const LangQuery = t.Object({ lang: t.Optional(t.String({ maxLength: 8 })) })
const FormBody = t.Object({ csrf: t.String({ maxLength: 128 }) }, { additionalProperties: t.String({ maxLength: 1024 }) })
/** A method's form: text fields, and for the face check, files (gathered in arrays by the parser). */
const MethodBody = t.Object(
  { csrf: t.String({ maxLength: 128 }) },
  { additionalProperties: t.Union([t.String({ maxLength: 1024 }), t.Array(t.Unknown(), { maxItems: 16 })]) },
)
const readForm = ({ request }: { request: Request }) => readStrictBody(request, ['form'])
const readMethodForm = ({ request }: { request: Request }) => readStrictBody(request, ['form', 'multipart'])

type Cookies = Record<string, Cookie<unknown>>
type Page = { session: VerificationSession; client: Client; lang: Language; cookie: Cookies }

/**
 * The hosted verification page (SPEC.md §4.1) and the forms it posts. Every post is checked against
 * the server-side session (bound to this browser), its CSRF token and the Origin header; nothing the
 * visitor could edit in the page decides the client, redirect URI, state or threshold.
 */
export function pageRoutes(deps: AppDeps) {
  const methods = createMethods(deps)
  const appOrigin = new URL(deps.config.appUrl).origin
  const cookieOptions = {
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: deps.config.appUrl.startsWith('https:'),
    path: '/',
  }

  /** Loads the session a form or link refers to, for this browser only. */
  async function openPage(id: string, cookie: Cookies, request: Request, lang: string | undefined): Promise<Page> {
    const session = await findSession(deps, id, stringCookie(cookie[BROWSER_COOKIE]))
    const client = session && (await findClient(deps.db, session.clientId))
    if (!session || !client || session.completedAt) {
      throw new OAuthError('session_expired', 'The verification session is unknown, expired, completed or bound to another browser')
    }
    return { session, client, cookie, lang: pickLanguage(request.headers.get('accept-language'), lang) }
  }

  /**
   * A form post: not from another site (when the browser says), a live session, the right CSRF token.
   * Under `Referrer-Policy: no-referrer` browsers send `Origin: null` even for our own forms (Fetch
   * standard, "serializing a request origin"), so "null" says nothing and only a foreign origin, or
   * `Sec-Fetch-Site: cross-site`, is refused outright.
   */
  async function openForm(id: string, cookie: Cookies, request: Request, lang: string | undefined, csrf: string): Promise<Page> {
    const origin = request.headers.get('origin')
    const foreignOrigin = origin !== null && origin !== 'null' && origin !== appOrigin
    if (foreignOrigin || request.headers.get('sec-fetch-site') === 'cross-site') throw new OAuthError('forbidden', 'Cross-site form post')
    const page = await openPage(id, cookie, request, lang)
    if (!checkCsrfToken(page.session, csrf)) throw new OAuthError('forbidden', 'CSRF token mismatch')
    return page
  }

  /** `failed`: the alert follows a method post that did not pass, a dead end that offers the way back. */
  async function render(
    page: Page,
    set: { headers: Record<string, unknown>; status?: unknown },
    extra: { alert?: string; failed?: boolean; notice?: string; pass?: AgePass | null } = {},
  ) {
    const { session, client, lang } = page
    const t = languages[lang]
    const pass = extra.pass === null ? undefined : (extra.pass ?? (await readAgePass(deps, stringCookie(page.cookie[AGE_PASS_COOKIE]))))
    const locked = session.failedAttempts >= MAX_FAILED_ATTEMPTS
    const offered = offeredMethods(page)
    Object.assign(set.headers, pageHeaders({ formTargets: [session.redirectUri] }))
    return (
      <VerifyPage
        lang={lang}
        client={client}
        ageRequired={session.ageRequired}
        sessionPath={`/s/${session.id}`}
        csrfToken={session.csrfToken}
        methods={offered}
        passAge={passCovers(pass, client, session.ageRequired) ? pass.ageOver : undefined}
        alert={locked ? t.tooManyAttempts(client.name) : extra.alert}
        notice={extra.notice}
        locked={locked}
        homeUrl={locked || extra.failed || offered.length === 0 ? siteHomeUrl(client, session.redirectUri) : undefined}
        methodsClosed={session.closedMethods.length > 0}
      />
    )
  }

  /**
   * Turns an approved check into a code and sends the visitor back with it (303). The session is claimed
   * first, so a double submission issues one code; if issuing fails, the claim is released.
   */
  async function complete(
    page: Page,
    set: { headers: Record<string, unknown>; status?: unknown },
    approval: { method: string; methodClass: MethodClass; provenAge: number; ageBuffer?: number; reverifiedWith?: AgePass },
  ) {
    const { session, client, cookie } = page
    if (!(await claimSession(deps, session))) throw new OAuthError('session_expired', 'The verification session was already completed')
    try {
      let personKey = approval.reverifiedWith?.personKey
      if (!approval.reverifiedWith) {
        const earlier = await readAgePass(deps, stringCookie(cookie[AGE_PASS_COOKIE]))
        const issued = await createAgePass(deps, {
          ageOver: approval.provenAge,
          methodClass: approval.methodClass,
          sandbox: client.sandbox,
          personKey: earlier?.personKey,
        })
        personKey = issued.pass.personKey
        cookie[AGE_PASS_COOKIE]!.set({ value: issued.cookie, ...cookieOptions, maxAge: AGE_PASS_LIFETIME_MS / 1000 })
      }
      const { code } = await issueCode(deps, {
        clientId: client.id,
        redirectUri: session.redirectUri,
        state: session.state,
        ageOver: session.ageRequired,
        methodClass: approval.methodClass,
        reverification: approval.reverifiedWith !== undefined,
        personKey,
        method: approval.method,
        ageBuffer: approval.ageBuffer,
      })
      deps.metrics.codes.inc({ event: 'issued' })
      Object.assign(set.headers, pageHeaders({ formTargets: [session.redirectUri] }), { location: callbackUrl(session.redirectUri, code, session.state) })
      set.status = 303
      return ''
    } catch (cause) {
      await releaseSession(deps.db, session)
      throw cause
    }
  }

  /** The methods this page offers: those the client may use, less those this session has closed. */
  function offeredMethods(page: Page): VerificationMethod[] {
    return methodsFor(methods, page.client).filter((method) => !page.session.closedMethods.includes(method.id))
  }

  /**
   * How a method post is answered: the page again (a plain form post), or, for the page's script,
   * JSON that says what the page would have shown, so the script can keep the camera running.
   */
  function answerer(page: Page, set: { headers: Record<string, unknown>; status?: unknown }, methodId: string, json: boolean) {
    const t = languages[page.lang]
    return {
      async refused(status: number, alert: string | undefined, session: VerificationSession = page.session) {
        set.status = status
        if (!json) return render({ ...page, session }, set, { alert, failed: alert !== undefined })
        const locked = session.failedAttempts >= MAX_FAILED_ATTEMPTS
        set.headers['content-type'] = 'application/json'
        set.headers['cache-control'] = 'no-store'
        return {
          outcome: 'refused',
          message: locked ? t.tooManyAttempts(page.client.name) : (alert ?? ''),
          retry: !locked && !session.closedMethods.includes(methodId),
          home_url: siteHomeUrl(page.client, session.redirectUri),
          back_label: t.backToSite(page.client.name),
        }
      },
      approved(html: string) {
        if (!json) return html
        const redirect = set.headers.location
        set.status = 200
        delete set.headers.location
        set.headers['content-type'] = 'application/json'
        return { outcome: 'approved', redirect }
      },
    }
  }

  return new Elysia({ name: 'page-routes' })
    .use(html({ autoDoctype: true }))
    .get(
      '/assets/:file',
      ({ params }) => {
        const asset = assets[params.file]
        if (!asset) throw new OAuthError('not_found', 'No such asset')
        const headers = { 'content-type': asset.type, 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' }
        return new Response(Bun.file(asset.path), { headers })
      },
      { detail: { hide: true } },
    )
    .get(
      '/',
      async ({ query, request, cookie, set }) => {
        rejectDuplicateQuery(request)
        const authorization = await checkAuthorizationRequest(deps.db, query, deps.clock.now())
        let browserId = stringCookie(cookie[BROWSER_COOKIE])
        if (!browserId || browserId.length > 64) browserId = randomToken(24)
        // Sent again on every new request, so the cookie always outlives the session it binds.
        cookie[BROWSER_COOKIE]!.set({ value: browserId, ...cookieOptions, maxAge: (2 * SESSION_LIFETIME_MS) / 1000 })
        const session = await createSession(deps, authorization, browserId)
        return render({ session, client: authorization.client, cookie, lang: pickLanguage(request.headers.get('accept-language'), query.lang) }, set)
      },
      { query: AuthorizationQuery, detail: { hide: true } },
    )
    .get('/s/:id', async ({ params, query, request, cookie, set }) => render(await openPage(params.id, cookie, request, query.lang), set), {
      query: LangQuery,
      detail: { hide: true },
    })
    .post(
      '/s/:id/methods/:method/challenge',
      async ({ params, query, body, request, cookie, set }) => {
        const page = await openForm(params.id, cookie, request, query.lang, body.csrf)
        const method = offeredMethods(page).find((m) => m.id === params.method)
        if (method?.id !== 'face' || page.session.failedAttempts >= MAX_FAILED_ATTEMPTS) {
          throw new OAuthError('not_found', 'No live challenge for this method in this session')
        }
        const challenge = await issueFaceChallenge(deps, page.session)
        set.headers['cache-control'] = 'no-store'
        return { challenge: challenge.id, turns: challenge.turns, expires_in: Math.round((challenge.expiresAt.getTime() - deps.clock.now().getTime()) / 1000) }
      },
      { parse: [readForm, 'urlencoded'], body: FormBody, query: LangQuery, detail: { hide: true } },
    )
    .post(
      '/s/:id/methods/:method',
      async ({ params, query, body, request, cookie, set }) => {
        const page = await openForm(params.id, cookie, request, query.lang, body.csrf)
        const t = languages[page.lang]
        const method = offeredMethods(page).find((m) => m.id === params.method)
        if (!method) throw new OAuthError('not_found', 'No such verification method for this client')
        // The page's script asks for JSON so that the camera can stay on between tries.
        const reply = answerer(page, set, method.id, (request.headers.get('accept') ?? '').includes('application/json'))
        if (page.session.failedAttempts >= MAX_FAILED_ATTEMPTS) return reply.refused(200, undefined)
        const fields: Record<string, string> = {}
        const files: File[] = []
        for (const [name, value] of Object.entries(body)) {
          if (typeof value === 'string') {
            if (name !== 'csrf') fields[name] = value
          } else if (Array.isArray(value)) {
            files.push(...(value as unknown[]).filter((item): item is File => item instanceof File))
          }
        }
        if (!Value.Check(method.evidence, fields)) return reply.refused(400, t.invalidEvidence)
        let verdict: Verdict
        try {
          verdict = await method.check({
            fields,
            files,
            ageRequired: page.session.ageRequired,
            client: page.client,
            consumeChallenge: (id) => consumeFaceChallenge(deps, page.session, id),
          })
        } catch (cause) {
          if (!(cause instanceof EstimatorBusyError)) throw cause
          // Busy is not the visitor's failure: no attempt counted, and a hint when to come back.
          deps.metrics.verifications.inc({ method: method.id, outcome: 'busy' })
          set.headers['retry-after'] = '5'
          return reply.refused(503, t.face.busy)
        }
        const outcome = verdict.approved ? 'approved' : verdict.countsAsAttempt === false ? 'unreadable' : 'failed'
        deps.metrics.verifications.inc({ method: method.id, outcome })
        if (verdict.approved) return reply.approved(await complete(page, set, { ...verdict, method: method.id }))
        if (verdict.countsAsAttempt === false) return reply.refused(400, verdict.reason(t))
        const failed = await recordFailedAttempt(deps.db, page.session)
        if (verdict.closesMethod) await closeMethod(deps.db, page.session, method.id)
        const left = MAX_FAILED_ATTEMPTS - failed
        const session = { ...page.session, failedAttempts: failed, closedMethods: verdict.closesMethod ? [...page.session.closedMethods, method.id] : page.session.closedMethods }
        // An answer the same face would get again says so, and points to the other ways, not to a retry.
        const retry = left > 0 && !verdict.closesMethod ? `${t.tryAgain} ${t.attemptsLeft(left)}` : ''
        return reply.refused(200, `${verdict.reason(t)} ${retry}`.trim(), session)
      },
      { parse: [readMethodForm, 'urlencoded', 'formdata'], body: MethodBody, query: LangQuery, detail: { hide: true } },
    )
    .post(
      '/s/:id/continue',
      async ({ params, query, body, request, cookie, set }) => {
        const page = await openForm(params.id, cookie, request, query.lang, body.csrf)
        const pass = await readAgePass(deps, stringCookie(cookie[AGE_PASS_COOKIE]))
        if (!passCovers(pass, page.client, page.session.ageRequired)) return render(page, set, { pass: null })
        return complete(page, set, { method: 'age_pass', methodClass: pass.methodClass, provenAge: pass.ageOver, reverifiedWith: pass })
      },
      { parse: [readForm, 'urlencoded'], body: FormBody, query: LangQuery, detail: { hide: true } },
    )
    .post(
      '/s/:id/forget',
      async ({ params, query, body, request, cookie, set }) => {
        const page = await openForm(params.id, cookie, request, query.lang, body.csrf)
        const pass = await readAgePass(deps, stringCookie(cookie[AGE_PASS_COOKIE]))
        if (pass) await revokeAgePass(deps, pass.id)
        cookie[AGE_PASS_COOKIE]!.set({ value: '', ...cookieOptions, maxAge: 0 })
        return render(page, set, { notice: languages[page.lang].passForgotten, pass: null })
      },
      { parse: [readForm, 'urlencoded'], body: FormBody, query: LangQuery, detail: { hide: true } },
    )
}

function stringCookie(cookie: Cookie<unknown> | undefined): string | undefined {
  const value = cookie?.value
  return typeof value === 'string' && value !== '' ? value : undefined
}
