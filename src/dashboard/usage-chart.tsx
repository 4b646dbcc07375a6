import type { DayUsage } from '../usage/daily.ts'
import { formatDay, formatNumber } from '../i18n/format.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import type { View } from './layout.tsx'

/**
 * The drawing's own units: 360 wide, about a phone's width, so that its text is read at about its size
 * there; `digit` is roughly one digit of the axis labels (font-size 11 in ofage.css), to leave them room.
 */
const [WIDTH, TOP, PLOT_HEIGHT, BOTTOM, RIGHT, DIGIT] = [360, 10, 150, 22, 4, 6.5]

/**
 * The y-axis' ticks for a busiest day of `max`: from 0 in steps of 1, 2 or 5 times a power of ten, at most
 * six of them, the last at or above `max`. Whole numbers only: there is no half a verification.
 */
export function axisTicks(max: number): number[] {
  const rough = Math.max(1, max / 5)
  const power = 10 ** Math.floor(Math.log10(rough))
  const step = [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough)!
  const top = Math.max(step, Math.ceil(max / step) * step)
  return Array.from({ length: top / step + 1 }, (_, index) => index * step)
}

type UsageChartProps = { view: View; month: string; days: DayUsage[]; daysInMonth: number }

/**
 * The month's verifications per day as an inline SVG bar chart, drawn on the server: no script, and no
 * `style` attribute (the pages' CSP allows only the stylesheet), so colours come from ofage.css classes.
 * One slot per day of the month, a bar for each day so far, a y-axis with grid lines, numbers in the page's
 * language. One `role="img"` with a title and a description; the same numbers follow as a table.
 * A month without verifications gets no chart (see UsagePage): an empty axis says less than a sentence.
 */
export function UsageChart({ view, month, days, daysInMonth }: UsageChartProps) {
  const t = dashboardLanguages[view.lang]
  const max = Math.max(0, ...days.map((entry) => entry.usage.total_verifications))
  const ticks = axisTicks(max)
  const top = ticks.at(-1)!
  const labels = ticks.map((tick) => formatNumber(view.lang, tick))
  const left = Math.ceil(Math.max(...labels.map((label) => label.length)) * DIGIT + 8)
  const slot = (WIDTH - left - RIGHT) / daysInMonth
  const bar = Math.max(1, Math.round(slot * 0.7 * 10) / 10)
  const baseline = TOP + PLOT_HEIGHT
  const y = (value: number) => Math.round((baseline - (value / top) * PLOT_HEIGHT) * 10) / 10
  const dayLabels = new Set([1, 5, 10, 15, 20, 25, 30].filter((day) => day <= daysInMonth))
  return (
    <svg class="usage-chart" role="img" aria-labelledby="usage-chart-title usage-chart-desc" viewBox={`0 0 ${WIDTH} ${baseline + BOTTOM}`} xmlns="http://www.w3.org/2000/svg">
      <title id="usage-chart-title" safe>
        {t.perDay}
      </title>
      <desc id="usage-chart-desc" safe>
        {t.chartLabel(month, days.length, formatNumber(view.lang, max))}
      </desc>
      {ticks.map((tick, index) => (
        <g class="y-tick" data-tick={String(tick)}>
          <line class={tick === 0 ? 'axis' : 'grid'} x1={String(left)} y1={String(y(tick))} x2={String(WIDTH - RIGHT)} y2={String(y(tick))} />
          <text class="label" x={String(left - 6)} y={String(y(tick) + 4)} text-anchor="end" safe>
            {labels[index]!}
          </text>
        </g>
      ))}
      {days.map((entry, index) => {
        const total = entry.usage.total_verifications
        const x = Math.round((left + index * slot + (slot - bar) / 2) * 10) / 10
        return (
          <rect class="bar" x={String(x)} y={String(y(total))} width={String(bar)} height={String(Math.round((baseline - y(total)) * 10) / 10)} data-day={entry.day} data-total={String(total)}>
            <title safe>{t.chartBar(formatDay(view.lang, entry.day), formatNumber(view.lang, total))}</title>
          </rect>
        )
      })}
      {[...dayLabels].map((day) => (
        <text class="label" x={String(Math.round((left + (day - 0.5) * slot) * 10) / 10)} y={String(baseline + 16)} text-anchor="middle" safe>
          {String(day)}
        </text>
      ))}
    </svg>
  )
}
