/**
 * Where a passkey was added, as coarsely as lets its owner tell "my laptop at the office" from "someone
 * else": a browser and system name from a fixed list, and the network, never the user agent string or the
 * address itself (docs/decisions.md). Kept beside the passkey for as long as it lives.
 */
export type AddedFrom = { device: string | null; network: string | null }

export function describeAddedFrom(userAgent: string | null, address: string): AddedFrom {
  return { device: deviceLabel(userAgent), network: coarseNetwork(address) }
}

// Order matters: Edge and Opera say "Chrome" too, Chrome says "Safari", iOS says "Mac OS X", Android "Linux".
const BROWSERS: [RegExp, string][] = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\b(OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(Firefox|FxiOS)\//, 'Firefox'],
  [/(Chrome|CriOS|Chromium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
]
const SYSTEMS: [RegExp, string][] = [
  [/\b(iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\b(Macintosh|Mac OS X)\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
]

/** "Firefox, Linux"; only names from the lists above, so nothing a user agent makes up is ever stored or shown. */
export function deviceLabel(userAgent: string | null): string | null {
  if (!userAgent) return null
  const parts = [BROWSERS, SYSTEMS].map((list) => list.find(([pattern]) => pattern.test(userAgent))?.[1]).filter((name) => name !== undefined)
  return parts.length ? parts.join(', ') : null
}

/** The network an address is in: IPv4 /24 ("203.0.113.0/24"), IPv6 /48 ("2001:db8:85a3::/48"); null when not an address. */
export function coarseNetwork(address: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  const v4 = ipv4Octets(mapped ?? address)
  if (v4) return `${v4.slice(0, 3).join('.')}.0/24`
  const v6 = ipv6Groups(address)
  if (v6) return `${v6.slice(0, 3).map((group) => group.toString(16)).join(':')}::/48`
  return null
}

function ipv4Octets(address: string): number[] | undefined {
  const parts = address.split('.')
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)) return undefined
  return parts.map(Number)
}

function ipv6Groups(address: string): number[] | undefined {
  const halves = address.split('::')
  if (halves.length > 2) return undefined
  const groups = halves.map((half) => (half === '' ? [] : half.split(':')))
  if (!groups.flat().every((group) => /^[0-9a-f]{1,4}$/i.test(group))) return undefined
  const [head = [], tail = []] = groups
  const missing = 8 - head.length - tail.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  return [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill('0'), ...tail].map((group) => parseInt(group, 16))
}
