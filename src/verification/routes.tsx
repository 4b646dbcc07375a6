import { html } from '@elysiajs/html'
import credentialScript from '../../public/credential.js' with { type: 'file' }
import faceCaptureScript from '../../public/face-capture.js' with { type: 'file' }
import passkeyScript from '../../public/passkey.js' with { type: 'file' }
import stylesheet from '../../public/ofage.css' with { type: 'file' }
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { randomToken } from '../lib/crypto.ts'
import { security } from '../lib/openapi-security.ts'
import { rejectDuplicateQuery } from '../lib/strict-request.ts'
import { languages } from '../i18n/languages.ts'
import { AGE_PASS_COOKIE, passCovers, readAgePass, revokeAgePass } from './age-pass.ts'
import { AuthorizationParameters } from '../oauth/model.ts'
import { checkAuthorizationRequest } from './authorize.ts'
import { credentialRoutes } from './credential-routes.tsx'
import { methodRoutes } from './method-routes.tsx'
import { BROWSER_COOKIE, createPageContext } from './page-context.tsx'
import { CsrfForm, LangQuery, readForm } from '../web/forms.ts'
import { requestLanguage } from '../web/language.ts'
import { passkeyRoutes } from './passkey-routes.tsx'
import { openSession, SESSION_LIFETIME_MS } from './sessions.ts'
import { peerAddress } from '../ratelimit/peer.ts'

/** The files under public/ that pages load, embedded in a compiled binary; nothing else is served. */
const assets: Record<string, { path: string; type: string }> = {
  'ofage.css': { path: stylesheet, type: 'text/css; charset=utf-8' },
  'face-capture.js': { path: faceCaptureScript, type: 'text/javascript; charset=utf-8' },
  'passkey.js': { path: passkeyScript, type: 'text/javascript; charset=utf-8' },
  'credential.js': { path: credentialScript, type: 'text/javascript; charset=utf-8' },
}

const AuthorizationQuery = t.Object({
  ...AuthorizationParameters.properties,
  client_id: t.String({ minLength: 1, maxLength: 256 }),
  // RFC 9126: a pushed request names the other parameters; the URL's own are then ignored.
  request_uri: t.Optional(t.String({ maxLength: 256 })),
  lang: t.Optional(t.String({ maxLength: 8 })),
})

/**
 * The hosted verification page (SPEC.md §4.1) and the forms it posts. Every post is checked against
 * the server-side session (bound to this browser), its CSRF token and the Origin header; nothing the
 * visitor could edit in the page decides the client, redirect URI, state or threshold.
 */
export function pageRoutes(deps: AppDeps) {
  const context = createPageContext(deps)
  const { cookies, clients, openPage, openForm, render, complete } = context
  return new Elysia({ name: 'page-routes' })
    .use(html({ autoDoctype: true }))
    .use(methodRoutes(deps, context))
    .use(passkeyRoutes(deps, context))
    .use(credentialRoutes(deps, context))
    .get(
      '/assets/:file',
      ({ params }) => {
        const asset = Object.hasOwn(assets, params.file) ? assets[params.file] : undefined
        if (!asset) throw new OAuthError('not_found', 'No such asset')
        const headers = { 'content-type': asset.type, 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' }
        return new Response(Bun.file(asset.path), { headers })
      },
      { detail: { hide: true } },
    )
    // Browsers ask every origin for /favicon.ico after each page. We have no icon; "none" is an answer worth
    // caching (a day), where a 404 would be an error page and a log line per page view (issue 32, item 5).
    .get('/favicon.ico', () => new Response(null, { status: 204, headers: { 'cache-control': 'public, max-age=86400' } }), { detail: { hide: true } })
    .get(
      '/',
      async ({ query, request, cookie, set }) => {
        rejectDuplicateQuery(request)
        let browserId = cookies.read(cookie, BROWSER_COOKIE)
        if (!browserId || browserId.length > 64) browserId = randomToken(24)
        // Each session is a row and a CSRF token: one address may open only so many a minute.
        const hit = { key: `session:${peerAddress(request, deps.config.trustProxy)}`, limit: deps.config.limits.sessions }
        // Checked against this instance's copy of the client, and opened only if the copy is still the row;
        // else checked again with the row as it is now (src/clients/client-cache.ts).
        for (let tries = 0; tries < 3; tries++) {
          const authorization = await checkAuthorizationRequest(deps, query, clients, tries > 0)
          // Sent again on every new request, so the cookie always outlives the session it binds.
          cookies.write(cookie, BROWSER_COOKIE, browserId, (2 * SESSION_LIFETIME_MS) / 1000)
          const opened = await openSession(deps, authorization, browserId, { clientVersion: authorization.clientVersion, hit })
          if (opened.outcome === 'client_changed') continue
          if (opened.outcome === 'plan_limit') throw new OAuthError('payment_required', "This site's plan has reached its verification limit for the month.")
          const page = { session: opened.session, client: authorization.client, logo: opened.logo, cookie, lang: requestLanguage(request, query.lang) }
          return render(page, set)
        }
        throw new Error("the client's row kept changing while the page was opened")
      },
      {
        query: AuthorizationQuery,
        detail: {
          summary: 'The hosted verification page (SPEC.md §4.1): where the site sends the visitor',
          description:
            'An HTML page, not an API call: the visitor proves their age here and returns to redirect_uri with code, state and iss. Either the parameters in the URL, or client_id with the request_uri of a pushed request (POST /api/oauth/par). Errors are shown on the page, never redirected (docs/errors.md).',
          tags: ['Page'],
          security: security.none,
          responses: { 200: { description: 'The page (text/html)' }, 400: { description: 'The error page (text/html)' } },
        },
      },
    )
    .get('/s/:id', async ({ params, query, request, cookie, set }) => render(await openPage(params.id, cookie, request, query.lang), set), {
      query: LangQuery,
      detail: { hide: true },
    })
    .post(
      '/s/:id/continue',
      async ({ params, query, body, request, cookie, set }) => {
        const page = await openForm(params.id, cookie, request, query.lang, body.csrf)
        const pass = await readAgePass(deps, cookies.read(cookie, AGE_PASS_COOKIE))
        if (!passCovers(pass, page.client, page.session.ageRequired)) return render(page, set, { pass: null })
        return complete(page, set, { method: 'age_pass', methodClass: pass.methodClass, provenAge: pass.ageOver, reverifiedWith: pass })
      },
      { parse: [readForm, 'urlencoded'], body: CsrfForm, query: LangQuery, detail: { hide: true } },
    )
    .post(
      '/s/:id/forget',
      async ({ params, query, body, request, cookie, set }) => {
        const page = await openForm(params.id, cookie, request, query.lang, body.csrf)
        const pass = await readAgePass(deps, cookies.read(cookie, AGE_PASS_COOKIE))
        if (pass) await revokeAgePass(deps, pass.id)
        cookies.clear(cookie, AGE_PASS_COOKIE)
        return render(page, set, { notice: languages[page.lang].passForgotten, pass: null })
      },
      { parse: [readForm, 'urlencoded'], body: CsrfForm, query: LangQuery, detail: { hide: true } },
    )
}

