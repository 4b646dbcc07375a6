/**
 * Numbers and dates in a page's language, through `Intl` (CLDR): "10,000" in English, "10.000" in German,
 * "10 000" in French. Every dashboard page and catalog formats through here, so one instant reads the same
 * on the audit list, a verification, the settings and the usage page.
 */
const numberFormats = new Map<string, Intl.NumberFormat>()
const dateFormats = new Map<string, Intl.DateTimeFormat>()

/** A whole count, grouped as the language groups digits. */
export function formatNumber(lang: string, value: number): string {
  let format = numberFormats.get(lang)
  if (!format) numberFormats.set(lang, (format = new Intl.NumberFormat(lang, { maximumFractionDigits: 0 })))
  return format.format(value)
}

function dateFormat(lang: string, withTime: boolean): Intl.DateTimeFormat {
  const key = `${lang}:${withTime}`
  let format = dateFormats.get(key)
  if (!format) {
    // A month's name, never its number: 11/03 and 03/11 are the same day read in two countries.
    const day = { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' } as const
    // 24 hours and the zone's name: what integrators compare with their servers' UTC logs.
    const time = { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' } as const
    dateFormats.set(key, (format = new Intl.DateTimeFormat(lang, withTime ? { ...day, ...time } : day)))
  }
  return format
}

/** An instant to the second, in UTC and saying so: "Nov 22, 2026, 09:05:07 UTC", "22. Nov. 2026, 09:05:07 UTC". */
export function formatInstant(lang: string, instant: Date): string {
  return dateFormat(lang, true).format(instant)
}

/** A UTC calendar day (`YYYY-MM-DD`, or the instant it starts): "Nov 22, 2026", "22. Nov. 2026". */
export function formatDay(lang: string, day: string | Date): string {
  return dateFormat(lang, false).format(typeof day === 'string' ? new Date(`${day}T00:00:00Z`) : day)
}

/** Two UTC days as the language writes a span of days: "Nov 1 – 22, 2026", "1.–22. Nov. 2026". */
export function formatDayRange(lang: string, first: string, last: string): string {
  return dateFormat(lang, false).formatRange(new Date(`${first}T00:00:00Z`), new Date(`${last}T00:00:00Z`))
}
