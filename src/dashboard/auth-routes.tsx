import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { rejectDuplicateQuery } from '../lib/strict-request.ts'
import { peerAddress } from '../ratelimit/peer.ts'
import { LinkInvalidPage, SetPasswordPage, SignInPage, SignOutEverywherePage } from './account-pages.tsx'
import { CsrfForm, LangQuery, readForm } from '../web/forms.ts'
import type { DashboardContext } from './context.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import { deleteAllDashboardPasskeys, listDashboardPasskeys } from './passkeys.ts'
import { checkNewPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.ts'
import { endAllDashboardSessions, endDashboardSession } from './sessions.ts'
import { signIn } from './sign-in.ts'
import { findUserByPasswordToken, setPasswordWithToken } from './users.ts'

const hidden = { detail: { hide: true } }
const form = { parse: [readForm, 'urlencoded' as const] }

const SignInQuery = t.Object({
  lang: t.Optional(t.String({ maxLength: 8 })),
  notice: t.Optional(t.Union([t.Literal('signed_out'), t.Literal('signed_out_everywhere'), t.Literal('password_set')])),
})
const SignInForm = t.Object(
  { csrf: t.String({ maxLength: 128 }), email: t.String({ maxLength: 254 }), password: t.String({ maxLength: 4 * MAX_PASSWORD_LENGTH }) },
  { additionalProperties: t.String({ maxLength: 1024 }) },
)
const TokenQuery = t.Object({ token: t.String({ maxLength: 128 }), lang: t.Optional(t.String({ maxLength: 8 })) })
/** A ticked box sends its value; an unticked one sends nothing. */
const RemovePasskeysBox = t.Optional(t.String({ maxLength: 8 }))
const SetPasswordForm = t.Object(
  {
    csrf: t.String({ maxLength: 128 }),
    token: t.String({ maxLength: 128 }),
    password: t.String({ maxLength: 4 * MAX_PASSWORD_LENGTH }),
    confirm: t.String({ maxLength: 4 * MAX_PASSWORD_LENGTH }),
    remove_passkeys: RemovePasskeysBox,
  },
  { additionalProperties: t.String({ maxLength: 1024 }) },
)
const SignOutEverywhereForm = t.Object({ csrf: t.String({ maxLength: 128 }), remove_passkeys: RemovePasskeysBox }, { additionalProperties: t.String({ maxLength: 1024 }) })

/**
 * Signing in and out, and setting a password through a one-time link. Every form carries a CSRF token and
 * is refused from another origin; a failed sign-in says only that the email or password is not right.
 * Signing out everywhere and setting a password offer to remove the account's passkeys as well.
 */
export function authRoutes(deps: AppDeps, context: DashboardContext) {
  const { currentSession, openPage, accountOf, startSession, clearSession, openPost, formToken, checkFormPost, viewOf, page, redirect } = context
  return new Elysia({ name: 'dashboard-auth-routes' })
    .get(
      '/dashboard',
      async ({ query, request, cookie, set }) => {
        rejectDuplicateQuery(request)
        const view = viewOf(request, query.lang)
        return redirect(set, view, (await currentSession(cookie)) ? '/dashboard/audit' : '/dashboard/sign-in')
      },
      { query: LangQuery, ...hidden },
    )
    .get(
      '/dashboard/sign-in',
      async ({ query, request, cookie, set }) => {
        rejectDuplicateQuery(request)
        const view = viewOf(request, query.lang)
        if (!query.notice && (await currentSession(cookie))) return redirect(set, view, '/dashboard/audit')
        page(set)
        return <SignInPage view={view} csrf={formToken(cookie)} notice={query.notice} />
      },
      { query: SignInQuery, ...hidden },
    )
    .post(
      '/dashboard/sign-in',
      async ({ query, body, request, cookie, set }) => {
        const view = viewOf(request, query.lang)
        checkFormPost(cookie, request, body.csrf)
        const result = await signIn(
          { db: deps.db, clock: deps.clock, limits: deps.config.limits, passwordHash: deps.config.passwordHash },
          { email: body.email, password: body.password, address: peerAddress(request, deps.config.trustProxy) },
        )
        if (!result.ok) {
          page(set, 400)
          return <SignInPage view={view} csrf={formToken(cookie)} email={body.email} failed />
        }
        startSession(cookie, result.token)
        return redirect(set, view, '/dashboard/audit')
      },
      { ...form, body: SignInForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/sign-out',
      async ({ query, body, request, cookie, set }) => {
        const session = await openPost(cookie, request, body.csrf)
        if (session) await endDashboardSession(deps.db, session.tokenHash)
        clearSession(cookie)
        return redirect(set, viewOf(request, query.lang), '/dashboard/sign-in?notice=signed_out')
      },
      { ...form, body: CsrfForm, query: LangQuery, ...hidden },
    )
    .get(
      '/dashboard/sign-out-everywhere',
      async ({ query, request, cookie, set }) => {
        const { view, session } = await openPage(cookie, request, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        page(set)
        return <SignOutEverywherePage view={view} account={accountOf(session)} passkeys={await listDashboardPasskeys(deps.db, session.user.id)} />
      },
      { query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/sign-out-everywhere',
      async ({ query, body, request, cookie, set }) => {
        const session = await openPost(cookie, request, body.csrf)
        if (session) {
          await endAllDashboardSessions(deps.db, session.user.id)
          if (body.remove_passkeys === '1') await removeAllPasskeys(session.user.id)
        }
        clearSession(cookie)
        return redirect(set, viewOf(request, query.lang), `/dashboard/sign-in?notice=${session ? 'signed_out_everywhere' : 'signed_out'}`)
      },
      { ...form, body: SignOutEverywhereForm, query: LangQuery, ...hidden },
    )
    .get(
      '/dashboard/set-password',
      async ({ query, request, cookie, set }) => {
        rejectDuplicateQuery(request)
        const view = viewOf(request, query.lang)
        const user = await findUserByPasswordToken(deps, query.token)
        const switchPath = `/dashboard/set-password?${new URLSearchParams({ token: query.token })}`
        if (!user) {
          page(set, 400)
          return <LinkInvalidPage view={view} switchPath={switchPath} />
        }
        page(set)
        const passkeys = await listDashboardPasskeys(deps.db, user.id)
        return <SetPasswordPage view={view} csrf={formToken(cookie)} token={query.token} email={user.email} passkeys={passkeys} removePasskeys />
      },
      { query: TokenQuery, ...hidden },
    )
    .post(
      '/dashboard/set-password',
      async ({ query, body, request, cookie, set }) => {
        const view = viewOf(request, query.lang)
        checkFormPost(cookie, request, body.csrf)
        const switchPath = `/dashboard/set-password?${new URLSearchParams({ token: body.token })}`
        const user = await findUserByPasswordToken(deps, body.token)
        if (!user) {
          page(set, 400)
          return <LinkInvalidPage view={view} switchPath={switchPath} />
        }
        const t = dashboardLanguages[view.lang]
        const problem = checkNewPassword(body.password)
        const refusal =
          problem === 'too_short' ? t.passwordTooShort(MIN_PASSWORD_LENGTH) : problem === 'too_long' ? t.passwordTooLong : body.password !== body.confirm ? t.passwordsDiffer : undefined
        const removePasskeys = body.remove_passkeys === '1'
        if (refusal) {
          page(set, 400)
          const passkeys = await listDashboardPasskeys(deps.db, user.id)
          return <SetPasswordPage view={view} csrf={formToken(cookie)} token={body.token} email={user.email} passkeys={passkeys} removePasskeys={removePasskeys} problem={refusal} />
        }
        const updated = await setPasswordWithToken(deps, { token: body.token, password: body.password, removePasskeys })
        if (!updated) {
          page(set, 400)
          return <LinkInvalidPage view={view} switchPath={switchPath} />
        }
        if (removePasskeys) deps.log.info('dashboard_passkeys_removed', { user_id: updated.id, reason: 'password_set' })
        return redirect(set, view, '/dashboard/sign-in?notice=password_set')
      },
      { ...form, body: SetPasswordForm, query: LangQuery, ...hidden },
    )

  async function removeAllPasskeys(userId: string): Promise<void> {
    const removed = await deleteAllDashboardPasskeys(deps.db, userId)
    if (removed > 0) deps.log.info('dashboard_passkeys_removed', { user_id: userId, reason: 'signed_out_everywhere', count: removed })
  }
}
