/**
 * Structured logs: one JSON object per line on stderr. Callers pass event names and plain fields;
 * never a secret, token, code or personal value.
 */
export type Logger = {
  info(event: string, fields?: Record<string, unknown>): void
  error(event: string, fields?: Record<string, unknown>): void
}

export function jsonLogger(write: (line: string) => void = (stderrLines ??= batchedStderr())): Logger {
  // Composed as text around the fields' own JSON: no merged copy of the fields per line (a request's log
  // line was 18% of a JWKS request's CPU with one, measured with `bun run bench --profile`).
  const emit = (level: string, event: string, fields: Record<string, unknown> = {}) => {
    const rest = JSON.stringify(fields)
    write(`{"time":"${isoNow()}","level":"${level}","event":${JSON.stringify(event)}${rest === '{}' ? '}' : `,${rest.slice(1)}`}`)
  }
  return {
    info: (event, fields) => emit('info', event, fields),
    error: (event, fields) => emit('error', event, fields),
  }
}

let isoMs = 0
let iso = ''

/** The time as ISO 8601, formatted once per millisecond however many lines share it. */
function isoNow(): string {
  const ms = Date.now()
  if (ms !== isoMs) {
    isoMs = ms
    iso = new Date(ms).toISOString()
  }
  return iso
}

export const silentLogger: Logger = { info() {}, error() {} }

/** The process's one stderr writer, shared by every logger it makes. */
let stderrLines: ((line: string) => void) | undefined

/**
 * Lines to stderr, gathered until the event loop turns and written together: one write per turn instead of
 * one per request (a write per line was 14% of a token validation, measured with `bun run bench
 * --profile`). Pending lines are written on exit; a process killed with SIGKILL loses at most one turn's.
 */
function batchedStderr(): (line: string) => void {
  let pending: string[] = []
  const flush = () => {
    if (pending.length === 0) return
    const chunk = pending.join('')
    pending = []
    process.stderr.write(chunk)
  }
  process.on('exit', flush)
  return (line) => {
    pending.push(`${line}\n`)
    if (pending.length === 1) setImmediate(flush)
    else if (pending.length >= 512) flush()
  }
}

/**
 * What of an unexpected error may be logged: its class, message, stack and the messages of its causes
 * (Drizzle wraps the driver's error, which says what actually failed), nothing from the request.
 */
export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { error: redact(String(error)) }
  const causes: string[] = []
  for (let cause = error.cause; cause instanceof Error && causes.length < 5; cause = cause.cause) causes.push(`${cause.name}: ${redact(cause.message)}`)
  const stack = error.stack?.replace(error.message, redact(error.message))
  return { error: error.name, message: redact(error.message), ...(causes.length > 0 && { causes }), stack: stack && redact(stack) }
}

/**
 * What an error message may carry into the log. A failed query's message lists its parameters (session id
 * hashes, a client's state, a CSRF token), and a URL its query string (codes, states): both are cut.
 */
export function redact(message: string): string {
  return message
    .replace(/(params|parameters):[\s\S]*?(?=\n\s+at |$)/gi, '$1: [redacted]')
    .replace(/(https?:\/\/[^\s?"']*)\?[^\s"']*/g, '$1?[redacted]')
}
