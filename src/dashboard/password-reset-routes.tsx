import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { rejectDuplicateQuery } from '../lib/strict-request.ts'
import { RateLimitedError } from '../ratelimit/limits.ts'
import { peerAddress } from '../ratelimit/peer.ts'
import { LangQuery, readForm } from '../web/forms.ts'
import type { DashboardContext } from './context.ts'
import { ForgotPasswordPage } from './forgot-password-page.tsx'
import { composePasswordResetEmail, countPasswordResetRequest } from './password-reset.ts'

const hidden = { detail: { hide: true } }
const form = { parse: [readForm, 'urlencoded' as const] }

const ForgotQuery = t.Object({ lang: t.Optional(t.String({ maxLength: 8 })), notice: t.Optional(t.Literal('sent')) })
const ForgotForm = t.Object({ csrf: t.String({ maxLength: 128 }), email: t.String({ maxLength: 254 }) }, { additionalProperties: t.String({ maxLength: 1024 }) })

/**
 * "Forgot password?": with SMTP_URL, a form that emails the account's set-password link; without, a page
 * that says the operator resets passwords. Every request gets the same answer at once, and the email is
 * composed and sent after it (src/mail/outbox.ts): neither the answer nor its timing tells whether an email
 * has an account. The form is a pre-session form like sign-in's: its CSRF token, and no post from another site.
 */
export function passwordResetRoutes(deps: AppDeps, context: DashboardContext) {
  const { viewOf, formToken, checkFormPost, page, redirect } = context
  return new Elysia({ name: 'dashboard-password-reset-routes' })
    .get(
      '/dashboard/forgot-password',
      ({ query, request, cookie, set }) => {
        rejectDuplicateQuery(request)
        const view = viewOf(request, query.lang)
        page(set)
        if (!deps.outbox) return <ForgotPasswordPage view={view} mode={{ kind: 'operator' }} />
        if (query.notice === 'sent') return <ForgotPasswordPage view={view} mode={{ kind: 'sent' }} />
        return <ForgotPasswordPage view={view} mode={{ kind: 'form', csrf: formToken(cookie) }} />
      },
      { query: ForgotQuery, ...hidden },
    )
    .post(
      '/dashboard/forgot-password',
      async ({ query, body, request, cookie, set }) => {
        const view = viewOf(request, query.lang)
        checkFormPost(cookie, request, body.csrf)
        const { outbox } = deps
        // A form from before the operator removed SMTP_URL: nothing is sent, and the page says who resets.
        if (!outbox) {
          page(set)
          return <ForgotPasswordPage view={view} mode={{ kind: 'operator' }} />
        }
        try {
          await countPasswordResetRequest(
            { db: deps.db, clock: deps.clock, limits: deps.config.limits },
            { email: body.email, address: peerAddress(request, deps.config.trustProxy) },
          )
        } catch (error) {
          if (!(error instanceof RateLimitedError)) throw error
          // In this page's words (the error page speaks of sign-in attempts), with the 429's Retry-After.
          deps.metrics.rateLimited.inc({ route: 'page' })
          page(set, 429)
          set.headers['retry-after'] = String(error.retryAfterSeconds)
          return <ForgotPasswordPage view={view} mode={{ kind: 'form', csrf: formToken(cookie), tooMany: true }} />
        }
        const email = body.email
        outbox.post('dashboard_password_reset', () => composePasswordResetEmail(deps, { email, lang: view.lang, appUrl: deps.config.appUrl }))
        // After a redirect, reloading the page asks for no second email.
        return redirect(set, view, '/dashboard/forgot-password?notice=sent')
      },
      { ...form, body: ForgotForm, query: LangQuery, ...hidden },
    )
}
