import type { AuditLog } from '../audit/audit-logs.ts'
import { methodClasses, verificationLevels } from '../db/schema.ts'
import type { AuditQueryValues } from './audit-query.ts'
import { formatDay, formatDayRange, formatInstant } from '../i18n/format.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import type { DashboardMessages } from '../i18n/dashboard-messages.ts'
import { DashboardLayout, href, type Account, type View } from './layout.tsx'
import { DataTable } from './data-table.tsx'

type AuditPageProps = {
  view: View
  account: Account
  query: AuditQueryValues
  rows: AuditLog[]
  /** The next (older) page's address, when there is one; whether this page is past the first. */
  olderHref: string | undefined
  paged: boolean
  firstPageHref: string
  csvHref: string
  switchPath: string
}

/** The audit log: the search form, one page of rows newest first, the way to older rows, the CSV. */
export function AuditPage({ view, account, query, rows, olderHref, paged, firstPageHref, csvHref, switchPath }: AuditPageProps) {
  const t = dashboardLanguages[view.lang]
  return (
    <DashboardLayout view={view} title={t.auditLog} account={account} switchPath={switchPath}>
      <h1 safe>{t.auditLog}</h1>
      <p safe>{t.auditIntro}</p>
      <form method="get" action="/dashboard/audit" class="filters" aria-labelledby="filters-heading">
        <h2 id="filters-heading" safe>
          {t.filters}
        </h2>
        {view.explicit && <input type="hidden" name="lang" value={view.lang} />}
        <div class="field wide">
          <label for="transaction_id" safe>
            {t.transactionId}
          </label>
          <input id="transaction_id" name="transaction_id" type="search" maxlength="64" spellcheck="false" autocomplete="off" value={query.transaction_id ?? ''} />
        </div>
        <div class="field">
          <label for="from" safe>
            {t.from}
          </label>
          <input id="from" name="from" type="date" value={query.from ?? ''} aria-describedby="dates-help" />
        </div>
        <div class="field">
          <label for="to" safe>
            {t.to}
          </label>
          <input id="to" name="to" type="date" value={query.to ?? ''} aria-describedby="dates-help" />
        </div>
        <AnySelect name="method_class" label={t.methodClass} any={t.any} value={query.method_class} options={methodClasses.map((value) => [value, t.classes[value]])} />
        <AnySelect name="level" label={t.level} any={t.any} value={query.level} options={verificationLevels.map((value) => [value, t.levels[value]])} />
        <p id="dates-help" class="small" safe>
          {t.layout.datesHelp}
        </p>
        <div class="actions">
          <button type="submit" safe>
            {t.search}
          </button>
          <a href={href(view, '/dashboard/audit')} safe>
            {t.clearFilters}
          </a>
        </div>
      </form>
      {(query.from || query.to) && (
        <p class="results" role="status" safe>
          {showingDays(view.lang, t, query.from, query.to)}
        </p>
      )}
      <DataTable id="audit" caption={t.caption}>
        <thead>
          <tr>
            <th scope="col" safe>{t.columns.time}</th>
            <th scope="col" safe>{t.columns.transactionId}</th>
            <th scope="col" safe>{t.columns.methodClass}</th>
            <th scope="col" safe>{t.columns.level}</th>
            <th scope="col" safe>{t.columns.ageOver}</th>
            <th scope="col" safe>{t.columns.method}</th>
            <th scope="col" safe>{t.columns.revoked}</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colspan="7" safe>
                {t.noRows}
              </td>
            </tr>
          ) : (
            rows.map((row) => (
              <tr>
                <td data-label={t.columns.time}>
                  <time datetime={row.createdAt.toISOString()} safe>
                    {formatInstant(view.lang, row.createdAt)}
                  </time>
                </td>
                <td class="mono" data-label={t.columns.transactionId}>
                  <a href={href(view, `/dashboard/audit/${row.transactionId}`)} safe>
                    {row.transactionId}
                  </a>
                </td>
                <td class="mono" data-label={t.columns.methodClass} safe>
                  {row.methodClass}
                </td>
                <td class="mono" data-label={t.columns.level} safe>
                  {row.verificationLevel}
                </td>
                <td data-label={t.columns.ageOver}>{row.ageOver}</td>
                <td class="mono" data-label={t.columns.method} safe>
                  {row.method ?? '–'}
                </td>
                <td data-label={t.columns.revoked} safe>
                  {row.revokedAt ? t.yes : t.no}
                </td>
              </tr>
            ))
          )}
        </tbody>
      </DataTable>
      <nav class="pager" aria-label={t.caption}>
        {paged && (
          <a href={firstPageHref} safe>
            {t.newest}
          </a>
        )}
        {olderHref && (
          <a href={olderHref} rel="next" safe>
            {t.older}
          </a>
        )}
      </nav>
      <p>
        <a href={csvHref} download="" safe>
          {t.downloadCsv}
        </a>
      </p>
    </DashboardLayout>
  )
}

/** The days a search covers, in the page's date format: the date fields show the browser's own. */
function showingDays(lang: string, t: DashboardMessages, from: string | undefined, to: string | undefined): string {
  if (from && to) return t.layout.showingDays(formatDayRange(lang, from, to))
  return from ? t.layout.showingFrom(formatDay(lang, from)) : t.layout.showingUntil(formatDay(lang, to!))
}

/** A filter's select: "any" first (the empty value), then the options; the current value selected. */
function AnySelect({ name, label, any, value, options }: { name: string; label: string; any: string; value: string | undefined; options: [string, string][] }) {
  return (
    <div class="field">
      <label for={name} safe>
        {label}
      </label>
      <select id={name} name={name}>
        {[['', any] as [string, string], ...options].map(([option, text]) => (
          <option value={option} selected={(value ?? '') === option} safe>
            {text}
          </option>
        ))}
      </select>
    </div>
  )
}
