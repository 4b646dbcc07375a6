import { t } from 'elysia'
import { methodClasses, verificationLevels } from '../db/schema.ts'
import { OAuthError } from '../errors.ts'
import { parseBound } from '../usage/report.ts'
import { decodeCursor, type AuditCursor, type AuditFilter } from './audit-search.ts'

/**
 * The audit list's query string, as its search form sends it: an empty field means "any". Dates are UTC
 * calendar days (`<input type="date">`), `to` included. Anything else is a 400 page, never a 500.
 */
export const AuditQuery = t.Object({
  transaction_id: t.Optional(t.String({ maxLength: 64 })),
  from: t.Optional(t.String({ pattern: '^(\\d{4}-\\d{2}-\\d{2})?$' })),
  to: t.Optional(t.String({ pattern: '^(\\d{4}-\\d{2}-\\d{2})?$' })),
  method_class: t.Optional(t.Union([t.Literal(''), ...methodClasses.map((value) => t.Literal(value))])),
  level: t.Optional(t.Union([t.Literal(''), ...verificationLevels.map((value) => t.Literal(value))])),
  before: t.Optional(t.String({ maxLength: 80 })),
  lang: t.Optional(t.String({ maxLength: 8 })),
})

export type AuditQueryValues = typeof AuditQuery.static

/** The filter a query string asks for; a date that does not exist, or a range that ends before it starts, is `invalid_request`. */
export function readAuditFilter(query: AuditQueryValues): AuditFilter {
  const start = query.from ? parseBound('from', query.from, 'start') : undefined
  const end = query.to ? parseBound('to', query.to, 'end') : undefined
  if (start && end && start >= end) throw new OAuthError('invalid_request', '"from" must not be after "to"')
  return {
    transactionId: query.transaction_id?.trim() ? query.transaction_id : undefined,
    start,
    end,
    methodClass: query.method_class || undefined,
    level: query.level || undefined,
  }
}

/** The page cursor of a query string; a malformed one is `invalid_request`. */
export function readAuditCursor(query: AuditQueryValues): AuditCursor | undefined {
  if (!query.before) return undefined
  const cursor = decodeCursor(query.before)
  if (!cursor) throw new OAuthError('invalid_request', 'before is not a page cursor of this list')
  return cursor
}

/** The filter part of a query string, for links (the next page, the CSV) that keep the same search. */
export function filterParams(query: AuditQueryValues): URLSearchParams {
  const params = new URLSearchParams()
  for (const name of ['transaction_id', 'from', 'to', 'method_class', 'level'] as const) {
    const value = query[name]?.trim()
    if (value) params.set(name, value)
  }
  return params
}
