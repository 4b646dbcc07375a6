import { Elysia } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { findClient } from '../clients/registry.ts'
import { countUsageByDay } from '../usage/daily.ts'
import { countUsage, resolveInterval } from '../usage/report.ts'
import { LangQuery } from '../web/forms.ts'
import type { DashboardContext } from './context.ts'
import { UsagePage } from './usage-page.tsx'

const DAY_MS = 86_400_000

/**
 * This UTC month's usage of the signed-in user's client, counted by the same code as GET /api/oauth/usage
 * with period=month, so the page and the API never disagree. Bound to the session's client id.
 */
export function usageRoutes(deps: AppDeps, context: DashboardContext) {
  const { openPage, accountOf, page, redirect } = context
  return new Elysia({ name: 'dashboard-usage-routes' }).get(
    '/dashboard/usage',
    async ({ query, request, cookie, set }) => {
      const { view, session } = await openPage(cookie, request, query.lang)
      if (!session) return redirect(set, view, '/dashboard/sign-in')
      const client = await findClient(deps.db, session.client.id)
      if (!client) throw new OAuthError('not_found', 'No such client')
      const now = deps.clock.now()
      const month = resolveInterval({ period: 'month' }, { now, clientCreatedAt: client.createdAt })
      // The days so far: the month's first day up to and including today.
      const soFar = { start: month.start, end: new Date(Math.min(month.end.getTime(), (Math.floor(now.getTime() / DAY_MS) + 1) * DAY_MS)) }
      const [usage, days] = await Promise.all([countUsage(deps.db, client.id, month), countUsageByDay(deps.db, client.id, soFar)])
      page(set)
      return <UsagePage view={view} account={accountOf(session)} monthStart={month.start} usage={usage} limit={client.verificationLimit} days={days} />
    },
    { query: LangQuery, detail: { hide: true } },
  )
}
