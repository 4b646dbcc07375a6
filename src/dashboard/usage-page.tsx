import type { DayUsage } from '../usage/daily.ts'
import type { UsageCounts } from '../usage/report.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import { DashboardLayout, type Account, type View } from './layout.tsx'
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
  return (
    <DashboardLayout view={view} title={t.usage} account={account} switchPath="/dashboard/usage">
      <h1 safe>{t.usage}</h1>
      <p safe>{t.usageIntro(month)}</p>
      <h2 safe>{t.usageCounts}</h2>
      <dl class="record usage-counts">
        <dt safe>{t.counts.total}</dt>
        <dd data-count="total_verifications">{used}</dd>
        <dt safe>{t.counts.ageOnly}</dt>
        <dd data-count="age_only_count">{usage.age_only_count}</dd>
        <dt safe>{t.counts.biometric}</dt>
        <dd data-count="biometric_count">{usage.biometric_count}</dd>
        <dt safe>{t.counts.reverification}</dt>
        <dd data-count="reverification_count">{usage.reverification_count}</dd>
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
      <div class="chart-wrap">
        <UsageChart view={view} month={month} days={days} />
      </div>
      <details>
        <summary safe>{t.showTable}</summary>
        <div class="table-wrap" role="region" aria-labelledby="usage-caption" tabindex="0">
          <table class="audit usage-days">
            <caption id="usage-caption" safe>
              {t.dayTableCaption}
            </caption>
            <thead>
              <tr>
                <th scope="col" safe>{t.day}</th>
                <th scope="col" safe>{t.counts.total}</th>
                <th scope="col" safe>{t.counts.ageOnly}</th>
                <th scope="col" safe>{t.counts.biometric}</th>
                <th scope="col" safe>{t.counts.reverification}</th>
              </tr>
            </thead>
            <tbody>
              {days.map((entry) => (
                <tr data-day={entry.day}>
                  <th scope="row">
                    <time datetime={entry.day} safe>
                      {entry.day}
                    </time>
                  </th>
                  <td>{entry.usage.total_verifications}</td>
                  <td>{entry.usage.age_only_count}</td>
                  <td>{entry.usage.biometric_count}</td>
                  <td>{entry.usage.reverification_count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </DashboardLayout>
  )
}
