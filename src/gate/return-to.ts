/** A return address longer than this is not one a visitor clicked. */
const MAX_LENGTH = 2048

/**
 * Where the gate may send a visitor back to on `origin`: a path there (or a URL of that very origin), as
 * the path, query and fragment to put in `Location`; undefined for anything that could lead elsewhere. The
 * parsed result is checked, not the input: browsers read `\` as `/` and drop tabs and newlines, and a path
 * such as `/.//evil.example` normalises to `//evil.example`, which a browser reads as another host. Paths
 * under `/.ofage/` are refused too: the gate's own pages are never a destination.
 */
export function readReturnTo(target: string, origin: string): string | undefined {
  if (target.length === 0 || target.length > MAX_LENGTH || /[\\\u0000-\u001f\u007f\s]/.test(target)) return undefined
  if (!target.startsWith('/') && !target.startsWith(`${origin}/`) && target !== origin) return undefined
  let url: URL
  try {
    url = new URL(target, `${origin}/`)
  } catch {
    return undefined
  }
  if (url.origin !== origin || url.username || url.password) return undefined
  const path = `${url.pathname}${url.search}${url.hash}`
  if (!path.startsWith('/') || path.startsWith('//') || path.startsWith('/.ofage/')) return undefined
  return path
}
