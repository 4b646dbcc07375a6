/** Seconds in each unit a duration may be written in: `90`, `90s`, `15m`, `12h`, `30d`. */
const UNITS = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 } as const

/** Reads a duration such as `3600`, `90m`, `24h` or `30d` as seconds; undefined when it is not one. */
export function readDuration(text: string): number | undefined {
  const match = /^(\d{1,9})([smhd]?)$/.exec(text.trim())
  return match ? Number(match[1]) * UNITS[match[2] as keyof typeof UNITS] : undefined
}

/** Writes seconds in the largest unit that divides them: 2592000 → `30d`. */
export function writeDuration(seconds: number): string {
  for (const [unit, size] of [['d', 86_400], ['h', 3600], ['m', 60]] as const) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`
  }
  return `${seconds}s`
}
