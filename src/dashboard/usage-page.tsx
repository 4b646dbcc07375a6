import type { DayUsage } from '../usage/daily.ts'
import type { UsageCounts } from '../usage/report.ts'
import { formatDay, formatNumber } from '../i18n/format.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import { DashboardLayout, type Account, type View } from './layout.tsx'
import { DataTable } from './data-table.tsx'
import { UsageChart } from './usage-chart.tsx'

type UsagePageProps = {
  view: View
  account: Account
  /** The first instant of the UTC month shown. */
  monthStart: Date
  usage: UsageCounts
  /** The plan's monthly limit; null is unlimited. */
  limit: number | null
  days: DayUsage[]
}

/** This UTC month's usage: the counts, the plan limit, and a chart and table of the days so far. */
export function UsagePage({ view, account, monthStart, usage, limit, days }: UsagePageProps) {
  const t = dashboardLanguages[view.lang]
  const month = new Intl.DateTimeFormat(view.lang, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(monthStart)
  const used = usage.total_verifications
  const reached = limit !== null && used >= limit
  const ratio = limit === null ? 0 : limit === 0 ? 1 : used / limit
  const percent = new Intl.NumberFormat(view.lang, { style: 'percent', maximumFractionDigits: 0 }).format(ratio)
  const count = (value: number) => formatNumber(view.lang, value)
  // The month's days: from its first instant to the next month's (Date.UTC carries month 12 into January).
  const daysInMonth = new Date(Date.UTC(monthStart.getUTCFullYear(), monthStart.getUTCMonth() + 1, 0)).getUTCDate()
  const empty = days.every((entry) => entry.usage.total_verifications === 0)
  // The four counts, in the order of the summary and of the table's columns.
  const columns = [
    ['total_verifications', t.counts.total],
    ['age_only_count', t.counts.ageOnly],
    ['biometric_count', t.counts.biometric],
    ['reverification_count', t.counts.reverification],
  ] as const satisfies readonly (readonly [keyof UsageCounts, string])[]
  return (
    <DashboardLayout view={view} title={t.usage} account={account} switchPath="/dashboard/usage">
      <h1 safe>{t.usage}</h1>
      <p safe>{t.usageIntro(month)}</p>
      <h2 safe>{t.usageCounts}</h2>
      <dl class="record usage-counts">
        {columns.map(([key, label]) => (
          <>
            <dt safe>{label}</dt>
            <dd data-count={key} safe>
              {count(usage[key])}
            </dd>
          </>
        ))}
      </dl>
      <h2 safe>{t.plan}</h2>
      {limit === null ? (
        <p safe>{t.unlimited(used)}</p>
      ) : (
        <>
          <p>
            <span safe>{t.usedOfLimit(used, limit)}</span>
            {' · '}
            <span safe>{t.percentOfLimit(percent)}</span>
          </p>
          <meter class="usage-meter" min="0" max={String(limit)} value={String(Math.min(used, limit))} aria-label={t.plan} safe>
            {percent}
          </meter>
          {reached && (
            <p class="notice limit-reached" safe>
              {t.limitReached}
            </p>
          )}
        </>
      )}
      <h2 safe>{t.perDay}</h2>
      {empty ? (
        <p class="empty-state" data-empty-chart safe>
          {t.layout.chartEmpty}
        </p>
      ) : (
        <div class="chart-wrap">
          <UsageChart view={view} month={month} days={days} daysInMonth={daysInMonth} />
        </div>
      )}
      <details class="table-toggle">
        <summary safe>{t.showTable}</summary>
        <DataTable id="usage" caption={t.dayTableCaption} kind="usage-days">
          <thead>
            <tr>
              <th scope="col" safe>
                {t.day}
              </th>
              {columns.map(([, label]) => (
                <th scope="col" safe>
                  {label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {days.map((entry) => (
              <tr data-day={entry.day}>
                <th scope="row" data-label={t.day}>
                  <time datetime={entry.day} safe>
                    {formatDay(view.lang, entry.day)}
                  </time>
                </th>
                {columns.map(([key, label]) => (
                  <td class="number" data-label={label} safe>
                    {count(entry.usage[key])}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </DataTable>
      </details>
    </DashboardLayout>
  )
}
