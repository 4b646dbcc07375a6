import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { auditCsvStream } from './audit-csv.ts'
import { AuditDetailPage } from './audit-detail-page.tsx'
import { AuditPage } from './audit-page.tsx'
import { AuditQuery, filterParams, readAuditCursor, readAuditFilter } from './audit-query.ts'
import { encodeCursor, findClientAuditLog, searchAuditLogs } from './audit-search.ts'
import { LangQuery } from '../web/forms.ts'
import type { DashboardContext } from './context.ts'
import { href, type View } from './layout.tsx'

/** Rows per page of the audit list. */
export const AUDIT_PAGE_ROWS = 50

const hidden = { detail: { hide: true } }

/**
 * The audit log of the signed-in user's client: the list with its search, one verification, and the CSV
 * export. Every query is bound to the session's client id; nothing in the request names a client.
 */
export function auditRoutes(deps: AppDeps, context: DashboardContext) {
  const { openPage, accountOf, page, redirect } = context
  const withQuery = (view: View, path: string, params: URLSearchParams) => href(view, params.size > 0 ? `${path}?${params}` : path)
  return new Elysia({ name: 'dashboard-audit-routes' })
    .get(
      '/dashboard/audit',
      async ({ query, request, cookie, set }) => {
        const { view, session } = await openPage(cookie, request, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const filter = readAuditFilter(query)
        const before = readAuditCursor(query)
        const { rows, next } = await searchAuditLogs(deps.db, session.client.id, { filter, before, limit: AUDIT_PAGE_ROWS })
        const params = filterParams(query)
        const olderParams = new URLSearchParams(params)
        if (next) olderParams.set('before', encodeCursor(next))
        const switchParams = new URLSearchParams(params)
        if (query.before) switchParams.set('before', query.before)
        page(set)
        return (
          <AuditPage
            view={view}
            account={accountOf(session)}
            query={query}
            rows={rows}
            olderHref={next ? withQuery(view, '/dashboard/audit', olderParams) : undefined}
            paged={before !== undefined}
            firstPageHref={withQuery(view, '/dashboard/audit', params)}
            csvHref={withQuery(view, '/dashboard/audit.csv', params)}
            switchPath={switchParams.size > 0 ? `/dashboard/audit?${switchParams}` : '/dashboard/audit'}
          />
        )
      },
      { query: AuditQuery, ...hidden },
    )
    .get(
      '/dashboard/audit.csv',
      async ({ query, request, cookie, set }) => {
        const { view, session } = await openPage(cookie, request, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const filter = readAuditFilter(query)
        const day = deps.clock.now().toISOString().slice(0, 10)
        return new Response(auditCsvStream(deps.db, session.client.id, filter, deps.log), {
          headers: {
            'content-type': 'text/csv; charset=utf-8',
            'content-disposition': `attachment; filename="audit-${session.client.id.replace(/[^A-Za-z0-9_-]/g, '')}-${day}.csv"`,
            'cache-control': 'no-store',
            'x-content-type-options': 'nosniff',
          },
        })
      },
      { query: AuditQuery, ...hidden },
    )
    .get(
      '/dashboard/audit/:transaction_id',
      async ({ params, query, request, cookie, set }) => {
        const { view, session } = await openPage(cookie, request, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const row = await findClientAuditLog(deps.db, session.client.id, params.transaction_id)
        // Another client's id is answered exactly as an id that does not exist.
        if (!row) throw new OAuthError('not_found', 'No such verification')
        page(set)
        return <AuditDetailPage view={view} account={accountOf(session)} row={row} />
      },
      { params: t.Object({ transaction_id: t.String({ maxLength: 128 }) }), query: LangQuery, ...hidden },
    )
}
