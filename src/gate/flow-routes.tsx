import { Elysia, t } from 'elysia'
import stylesheet from '../../public/ofage.css' with { type: 'file' }
import type { AppDeps } from '../deps.ts'
import { OAuthError, type ErrorCode } from '../errors.ts'
import { describeError } from '../lib/log.ts'
import { requestIdOf } from '../ops/instrument.ts'
import type { Language } from '../i18n/language-codes.ts'
import { languages } from '../i18n/languages.ts'
import { Layout } from '../pages/layout.tsx'
import { RateLimitedError, takeHit } from '../ratelimit/limits.ts'
import { peerAddress } from '../ratelimit/peer.ts'
import { htmlDocument, pageHeaders } from '../web/headers.ts'
import { requestLanguage } from '../web/language.ts'
import { cookieValues, gateCookieHeader, gateCookieName, GATE_COOKIE, GATE_FLOW_COOKIE } from './gate-cookie.ts'
import { findGateTarget, finishGateCheck, GATE_FLOW_LIFETIME_SECONDS, startGateCheck, type GateTarget } from './gate-flow.ts'
import { configurationNotices } from './configuration-notices.ts'
import { readGateRequest } from './gate-match.ts'
import { readReturnTo } from './return-to.ts'

/**
 * The gate's pages on a gated host, which its proxy passes to us under `/.ofage/` (docs/gate.md): `start`
 * sends the visitor to the check, `callback` takes them back and sets the gate cookie, `forget` clears it,
 * `unavailable` is nginx's page for a gate that could not answer. Errors stay here as pages, as on the
 * hosted page; none redirects anywhere but to a path on the gated host itself.
 */
export function gateFlowRoutes(deps: AppDeps) {
  const answer = pageAnswer(deps)
  return new Elysia({ name: 'gate-flow-routes' })
    .get('/.ofage/ofage.css', () => new Response(Bun.file(stylesheet), { headers: { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' } }), {
      detail: { hide: true },
    })
    .all(
      '/.ofage/start',
      ({ request, query }) =>
        answer(request, async (target) => {
          // nginx's `error_page 401 = /.ofage/start` keeps the visitor's own URI in X-Original-URI.
          const original = request.headers.get('x-original-uri')
          const wanted = original !== null && !original.startsWith('/.ofage/') ? original : (query.rd ?? '/')
          const returnTo = readReturnTo(wanted, target.host.origin)
          if (!returnTo) throw new OAuthError('invalid_request', 'The address to return to is not on this site.')
          await takeHit(deps, `session:${peerAddress(request, deps.config.trustProxy)}`, deps.config.limits.sessions)
          const { location, flowCookie } = await startGateCheck(deps, target, returnTo)
          return redirect(location, [gateCookieHeader(target.host.origin, GATE_FLOW_COOKIE, flowCookie, GATE_FLOW_LIFETIME_SECONDS)])
        }),
      { query: t.Object({ rd: t.Optional(t.String({ maxLength: 4096 })), lang: t.Optional(t.String({ maxLength: 8 })) }), detail: { hide: true } },
    )
    .get(
      '/.ofage/callback',
      ({ request, query }) =>
        answer(
          request,
          async (target) => {
            const origin = target.host.origin
            const flows = cookieValues(request.headers.get('cookie'), gateCookieName(origin, GATE_FLOW_COOKIE))
            const { passCookie, returnTo } = await finishGateCheck(deps, target, flows, query)
            deps.metrics.codes.inc({ event: 'redeemed' })
            return redirect(returnTo, [clearedFlow(origin), gateCookieHeader(origin, GATE_COOKIE, passCookie, target.host.ttlSeconds)])
          },
          // A flow cookie is spent by its callback, whatever the outcome.
          (target) => [clearedFlow(target.host.origin)],
        ),
      {
        query: t.Object({
          code: t.Optional(t.String({ maxLength: 512 })),
          state: t.Optional(t.String({ maxLength: 512 })),
          iss: t.Optional(t.String({ maxLength: 2048 })),
          lang: t.Optional(t.String({ maxLength: 8 })),
        }),
        detail: { hide: true },
      },
    )
    .all(
      '/.ofage/forget',
      ({ request, query }) =>
        answer(request, async (target) => {
          const returnTo = readReturnTo(query.rd ?? '/', target.host.origin)
          if (!returnTo) throw new OAuthError('invalid_request', 'The address to return to is not on this site.')
          return redirect(returnTo, [gateCookieHeader(target.host.origin, GATE_COOKIE, '', 0)])
        }),
      { query: t.Object({ rd: t.Optional(t.String({ maxLength: 4096 })), lang: t.Optional(t.String({ maxLength: 8 })) }), detail: { hide: true } },
    )
    .all('/.ofage/unavailable', ({ request, query }) => problemPage(requestLanguage(request, query.lang), 'temporarily_unavailable'), {
      query: t.Object({ lang: t.Optional(t.String({ maxLength: 8 })) }),
      detail: { hide: true },
    })
}

function clearedFlow(origin: string): string {
  return gateCookieHeader(origin, GATE_FLOW_COOKIE, '', 0)
}

/**
 * The header in which the site's proxy names its client on the requests it passes to `/.ofage/` (docs/gate.md):
 * the proxy sets it, replacing any a visitor sent. `/gate/auth` reads the client from its address instead.
 */
export const GATE_CLIENT_HEADER = 'x-ofage-client'

/**
 * Runs a gate page against the host the request names, read from the database: an unknown or ambiguous host is a 404, a
 * refusal (OAuthError) a page with its status and a way back to the site, and anything else, a database out
 * of reach above all, a 503 that says to try again: never a pass.
 */
function pageAnswer(deps: AppDeps) {
  const notice = configurationNotices(deps)
  return async (request: Request, run: (target: GateTarget) => Promise<Response>, cookiesOnError?: (target: GateTarget) => string[]): Promise<Response> => {
    const lang = requestLanguage(request, new URL(request.url).searchParams.get('lang'))
    let target: GateTarget | undefined
    try {
      const gateRequest = readGateRequest(request.headers, request.headers.get(GATE_CLIENT_HEADER) ?? undefined)
      const match = await findGateTarget(deps.db, gateRequest)
      notice(gateRequest, match.outcome === 'found' ? { outcome: 'found', host: match.target.host } : match)
      if (match.outcome !== 'found') return problemPage(lang, 'not_found')
      target = match.target
      return await run(target)
    } catch (cause) {
      const back = target && { site: new URL(target.host.origin).host, href: `${target.host.origin}/` }
      const cookies = target && cookiesOnError ? cookiesOnError(target) : []
      if (cause instanceof OAuthError) return problemPage(lang, cause.code, { back, error: cause, cookies })
      deps.log.error('gate_page_failed', { request_id: requestIdOf(request), ...describeError(cause) })
      return problemPage(lang, 'temporarily_unavailable', { back, cookies })
    }
  }
}

function redirect(location: string, cookies: string[]): Response {
  const headers = new Headers({ location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
  for (const cookie of cookies) headers.append('set-cookie', cookie)
  return new Response(null, { status: 303, headers })
}

function problemPage(
  lang: Language,
  code: ErrorCode,
  { back, error, cookies = [] }: { back?: { site: string; href: string } | undefined; error?: OAuthError; cookies?: string[] } = {},
): Response {
  const t = languages[lang]
  const body = (
    <Layout lang={lang} title={t.errorTitle} stylesheet="/.ofage/ofage.css">
      <h1 safe>{t.errorTitle}</h1>
      <div role="alert" class="alert">
        <p safe>{t.errors[code]}</p>
      </div>
      <p class="code">
        <span safe>{t.errorCode}</span>: <code safe>{code}</code>
      </p>
      {back && (
        <p>
          <a class="button" href={back.href} safe>
            {t.backToSite(back.site)}
          </a>
        </p>
      )}
    </Layout>
  ) as string
  const headers = new Headers(pageHeaders())
  if (code === 'temporarily_unavailable') headers.set('retry-after', '5')
  if (error instanceof RateLimitedError) headers.set('retry-after', String(error.retryAfterSeconds))
  for (const cookie of cookies) headers.append('set-cookie', cookie)
  return new Response(htmlDocument(body), { status: code === 'temporarily_unavailable' ? 503 : (error?.status ?? 404), headers })
}
