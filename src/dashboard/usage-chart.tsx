import type { DayUsage } from '../usage/daily.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import type { View } from './layout.tsx'

const BAR = 16
const GAP = 6
const PLOT_HEIGHT = 140
const TOP = 20
const AXIS = 24

/**
 * The month's verifications per day as an inline SVG bar chart, drawn on the server: no script, and no
 * `style` attribute (the pages' CSP allows only the stylesheet), so colours come from ofage.css classes.
 * One `role="img"` with a title and a description; the same numbers follow as a table for screen readers.
 */
export function UsageChart({ view, month, days }: { view: View; month: string; days: DayUsage[] }) {
  const t = dashboardLanguages[view.lang]
  const max = Math.max(0, ...days.map((entry) => entry.usage.total_verifications))
  const scale = max === 0 ? 0 : PLOT_HEIGHT / max
  const width = days.length * (BAR + GAP) + GAP
  const baseline = TOP + PLOT_HEIGHT
  return (
    <svg
      class="usage-chart"
      role="img"
      aria-labelledby="usage-chart-title usage-chart-desc"
      viewBox={`0 0 ${width} ${baseline + AXIS}`}
      width={String(width)}
      height={String(baseline + AXIS)}
      xmlns="http://www.w3.org/2000/svg"
    >
      <title id="usage-chart-title" safe>
        {t.perDay}
      </title>
      <desc id="usage-chart-desc" safe>
        {t.chartLabel(month, days.length, max)}
      </desc>
      <line class="axis" x1="0" y1={String(baseline)} x2={String(width)} y2={String(baseline)} />
      <text class="label" x={String(GAP)} y="12" safe>
        {t.chartMax(max)}
      </text>
      {days.map((entry, index) => {
        const total = entry.usage.total_verifications
        const height = Math.round(total * scale * 10) / 10
        const x = GAP + index * (BAR + GAP)
        return (
          <g>
            <rect class="bar" x={String(x)} y={String(baseline - height)} width={String(BAR)} height={String(height)} data-day={entry.day} data-total={String(total)}>
              <title safe>{t.chartBar(entry.day, total)}</title>
            </rect>
            <text class="label" x={String(x + BAR / 2)} y={String(baseline + 16)} text-anchor="middle" safe>
              {String(Number(entry.day.slice(8)))}
            </text>
          </g>
        )
      })}
    </svg>
  )
}
