import { describeAuditLog } from '../audit/audit-logs.ts'
import type { Database } from '../db/client.ts'
import { describeError, type Logger } from '../lib/log.ts'
import { searchAuditLogs, type AuditCursor, type AuditFilter } from './audit-search.ts'

/** The export's columns: every column of an audit row, with the names the CLI and the API use. */
export const CSV_COLUMNS = ['transaction_id', 'created_at', 'client_id', 'sub', 'method_class', 'verification_level', 'age_over', 'method', 'age_buffer', 'revoked_at'] as const

/** Rows fetched per query while streaming: each page is one short indexed query, not a long transaction. */
const CSV_PAGE_ROWS = 1000

/**
 * One CSV field (RFC 4180): quoted when it holds a quote, comma or line break, quotes doubled. A field that
 * a spreadsheet would run as a formula (starting with = + - @, a tab or a carriage return) gets a leading
 * apostrophe (OWASP, "CSV injection"); none of ours start so, but `method` is text.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return ''
  let text = String(value)
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export function csvLine(values: (string | number | null)[]): string {
  return `${values.map(csvField).join(',')}\r\n`
}

/**
 * The filtered audit rows of one client as CSV, newest first, header row first. A stream that fetches the
 * next keyset page only when the reader wants more: an export of millions of rows holds one page in memory
 * and no connection between pages. A failure part-way ends the download with an error (the browser shows it
 * as failed) and is logged, never written into the file.
 */
export function auditCsvStream(db: Database, clientId: string, filter: AuditFilter, log: Logger, pageRows = CSV_PAGE_ROWS): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let before: AuditCursor | undefined
  let started = false
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true
        controller.enqueue(encoder.encode(csvLine([...CSV_COLUMNS])))
        return
      }
      try {
        const page = await searchAuditLogs(db, clientId, { filter, before, limit: pageRows })
        const text = page.rows
          .map((row) => {
            const described = describeAuditLog(row)
            return csvLine(CSV_COLUMNS.map((column) => described[column]))
          })
          .join('')
        if (text) controller.enqueue(encoder.encode(text))
        before = page.next
        if (!before) controller.close()
      } catch (cause) {
        log.error('audit_export_failed', describeError(cause))
        controller.error(cause)
      }
    },
  })
}
