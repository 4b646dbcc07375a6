import { Elysia, t } from 'elysia'
import { Type } from '@sinclair/typebox'
import type { AppDeps } from '../deps.ts'
import { rejectDuplicateQuery } from '../lib/strict-request.ts'
import { authenticateClient } from '../oauth/client-auth.ts'
import { peerAddress } from '../ratelimit/peer.ts'
import { ErrorBody } from '../oauth/model.ts'
import { countUsage, periods, resolveInterval } from './report.ts'
import { security } from '../lib/openapi-security.ts'

const UsageQuery = t.Object({
  // Literals, not t.UnionEnum: that one adds a default, and the default period is month (DESIGN.md).
  period: t.Optional(t.Union(periods.map((period) => t.Literal(period)))),
  start_date: t.Optional(t.String({ maxLength: 64 })),
  end_date: t.Optional(t.String({ maxLength: 64 })),
})

const UsageReport = t.Object({
  client_id: t.String(),
  period: t.Object({ start: t.String(), end: t.String({ description: 'Exclusive end of the period' }) }),
  usage: t.Object({
    total_verifications: Type.Integer(),
    age_only_count: Type.Integer(),
    biometric_count: Type.Integer(),
    reverification_count: Type.Integer(),
  }),
})

/** GET /api/oauth/usage (SPEC.md §4.6, DESIGN.md "Usage"). */
export function usageRoutes(deps: AppDeps) {
  return new Elysia({ name: 'usage-routes' }).get(
    '/api/oauth/usage',
    async ({ query, headers, request, set }) => {
      set.headers['cache-control'] = 'no-store'
      rejectDuplicateQuery(request)
      const client = await authenticateClient(deps, headers.authorization, { address: peerAddress(request, deps.config.trustProxy), authFailures: deps.config.limits.authFailures })
      const interval = resolveInterval(query, { now: deps.clock.now(), clientCreatedAt: client.createdAt })
      return {
        client_id: client.id,
        period: { start: interval.start.toISOString(), end: interval.end.toISOString() },
        usage: await countUsage(deps.db, client.id, interval),
      }
    },
    {
      query: UsageQuery,
      response: { 200: UsageReport, 400: ErrorBody, 401: ErrorBody },
      detail: {
        summary: 'Approved verifications of the authenticated client in a period',
        security: security.client,
        description: 'period: day | month (default) | all; start_date/end_date (YYYY-MM-DD or ISO 8601) override it.',
        tags: ['Usage'],
      },
    },
  )
}
