import { iterator, parse as parseJsonAst, type ObjectNode } from '@humanwhocodes/momoa'
import { OAuthError } from '../errors.ts'

/** Request bodies of the API are a few hundred bytes; anything far larger is refused unread. */
export const MAX_BODY_BYTES = 16 * 1024

/** Bound for multipart bodies: a few camera frames. */
export const MAX_MULTIPART_BYTES = 24 * 1024 * 1024

/**
 * Bound for a request's URL; our longest are a page link with its `state` or a token to validate, well
 * under 2 KiB. Longer ones are `invalid_request`, answered by the app up to the HTTP parser's own header
 * bound (`--max-http-header-size`, 64 KiB in the package scripts and the binary); past that, Bun answers
 * 431 with no body before any of our code runs.
 */
export const MAX_URL_LENGTH = 8 * 1024

/** Where a path carries a token: any token too long is an invalid one, answered as the spec says (401, SPEC.md §4.3). */
const TOKEN_PATH = '/api/verify/token/'

/**
 * Refuses, for every route at once, a URL over {@link MAX_URL_LENGTH} (except a token's, which the token
 * route bounds itself) and a query string that decodes to a NUL byte: Postgres refuses NUL in text, so a
 * `?state=a%00b` that reached a query was a 500 (issue 19). Path segments are each route's own (a session
 * id is hashed, an audit id must be a UUID), so an unknown one stays that route's 404.
 */
export function checkRequestUrl(request: Request): void {
  const { url } = request
  const queryAt = url.indexOf('?')
  if (queryAt !== -1 && /%00/.test(url.slice(queryAt))) throw new OAuthError('invalid_request', 'The query string contains a NUL byte (%00)')
  if (url.length <= MAX_URL_LENGTH) return
  if (new URL(url).pathname.startsWith(TOKEN_PATH)) return
  throw new OAuthError('invalid_request', `The request URL is longer than ${MAX_URL_LENGTH} characters`)
}

type BodyType = 'json' | 'form' | 'multipart'

const mimeTypes: Record<BodyType, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
}

/**
 * Reads a request body as a flat object, strictly: only the allowed content types, a size bound,
 * well-formed JSON, and no member given twice (SPEC.md §7: duplicate parameters are `invalid_request`;
 * `JSON.parse` would silently keep the last one). Failures are `invalid_request`.
 *
 * A body over the bound is refused unread when it says its length, and cut off at the bound when it does
 * not (chunked). A multipart body, the only large kind, must say its length: an upload over the bound is
 * refused before a byte of it is read, and the server's HTTP parser ends the body at that length.
 */
export async function readStrictBody(request: Request, allowed: BodyType[], maxBytes?: number): Promise<Record<string, unknown>> {
  const type = allowed.find((candidate) => mimeTypes[candidate] === mimeOf(request))
  if (!type) throw new OAuthError('invalid_request', `Content-Type must be ${allowed.map((t) => mimeTypes[t]).join(' or ')}`)
  const limit = maxBytes ?? (type === 'multipart' ? MAX_MULTIPART_BYTES : MAX_BODY_BYTES)
  const length = request.headers.get('content-length')
  if (type === 'multipart' && length === null) throw new OAuthError('invalid_request', 'A multipart body needs a Content-Length')
  const declared = length === null ? undefined : Number(length)
  if (declared !== undefined && !(Number.isSafeInteger(declared) && declared >= 0)) throw new OAuthError('invalid_request', 'The Content-Length is not a number of bytes')
  if (declared !== undefined && declared > limit) throw tooLarge(limit)
  // Left to the runtime's parser, which reads the body once: a copy of our own would cost the upload's size again.
  if (type === 'multipart') return checkStrings(await parseMultipart(request))
  const bytes = declared === undefined ? await readBytes(request, limit, () => tooLarge(limit)) : await readDeclared(request, declared)
  const text = new TextDecoder().decode(bytes)
  return checkStrings(type === 'json' ? parseJsonObject(text) : parseForm(text))
}

/**
 * Every string of a body, member names included, must be storable text: no NUL (Postgres refuses it in
 * `text`, and a `"state": "a\u0000b"` at the token endpoint was a 500, issue 19) and no lone surrogate
 * (`"\ud800"`, which no UTF-8 encoder keeps: two different values would be stored as the same U+FFFD).
 * Checked here, once, so that no route has to remember it for each field it hands to the database.
 */
function checkStrings<T>(value: T, name = ''): T {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw new OAuthError('invalid_request', `The parameter "${name}" contains a NUL byte`)
    if (!value.isWellFormed()) throw new OAuthError('invalid_request', `The parameter "${name}" is not well-formed Unicode (a lone surrogate)`)
  } else if (Array.isArray(value)) {
    value.forEach((item) => checkStrings(item, name))
  } else if (value !== null && typeof value === 'object' && !(value instanceof Blob)) {
    for (const [member, inner] of Object.entries(value)) {
      checkStrings(member, member)
      checkStrings(inner, member)
    }
  }
  return value
}

/** Whether a request says its body is multipart/form-data: the one kind large enough to bound separately. */
export function isMultipart(request: Request): boolean {
  return mimeOf(request) === mimeTypes.multipart
}

function mimeOf(request: Request): string {
  return (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
}

/**
 * A body that says its length, in one read: the server's HTTP parser ends it there (and refuses a request
 * that also says it is chunked), so only a Request made in process can bring more, and it is refused. A bare
 * server read a token request's 150 bytes 136,000 times a second so, and 45,000 through the stream (issue 34).
 */
async function readDeclared(request: Request, length: number): Promise<Uint8Array> {
  let bytes: Uint8Array
  try {
    bytes = new Uint8Array(await request.arrayBuffer())
  } catch {
    throw new OAuthError('invalid_request', 'The request body could not be read to its end')
  }
  if (bytes.byteLength > length) throw new OAuthError('invalid_request', 'The request body is longer than its Content-Length')
  return bytes
}

/** The body in one buffer of `capacity` bytes; a body that goes on past it is refused with `overflow()`. */
async function readBytes(request: Request, capacity: number, overflow: () => OAuthError): Promise<Uint8Array<ArrayBuffer>> {
  if (!request.body) return new Uint8Array(0)
  const buffer = new Uint8Array(capacity)
  let filled = 0
  try {
    // Leaving the loop early cancels the stream: the rest of an oversized body is never pulled.
    for await (const chunk of request.body) {
      if (filled + chunk.byteLength > capacity) throw overflow()
      buffer.set(chunk, filled)
      filled += chunk.byteLength
    }
  } catch (cause) {
    if (cause instanceof OAuthError) throw cause
    throw new OAuthError('invalid_request', 'The request body could not be read to its end')
  }
  return buffer.subarray(0, filled)
}

/**
 * Our JSON bodies nest a few levels (a passkey response, four). The parser, the duplicate check and the
 * schema checks after them all recurse: `[[[…]]]` thousands deep overflowed the stack (a 500).
 */
const MAX_JSON_DEPTH = 32

function parseJsonObject(text: string): Record<string, unknown> {
  return parseStrictJsonObject(text, 'The request body')
}

/**
 * JSON text that must be one object, read as strictly as a JSON body: at most `maxDepth` levels, no member
 * given twice at any level. `what` names it in the `invalid_request` (a body, or a parameter that holds
 * JSON, such as OpenID4VP's `wallet_metadata`).
 *
 * `JSON.parse` reads it, and keeps only the last of two members of one name; so the text's member names are
 * counted while its depth is measured, and a parsed value with fewer members than the text named had one
 * twice. Only then does momoa's syntax tree find which, for the error. (Parsing every body into that tree
 * was 15% of a POST validation's CPU and most of its garbage: `bun run bench --only 'validate POST'
 * --profile`.)
 */
export function parseStrictJsonObject(text: string, what: string, maxDepth = MAX_JSON_DEPTH): Record<string, unknown> {
  const memberNames = countMemberNames(text, maxDepth)
  if (memberNames === undefined) throw new OAuthError('invalid_request', `${what} nests deeper than ${maxDepth} levels`)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new OAuthError('invalid_request', `${what} is not valid JSON`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new OAuthError('invalid_request', `${what} must be a JSON object`)
  if (countMembers(value) !== memberNames) throw duplicate(firstDuplicateName(text))
  return value as Record<string, unknown>
}

/**
 * How many member names JSON text writes (strings followed by a colon), or undefined when it opens more than
 * `max` arrays and objects inside each other; brackets and colons in strings do not count. Meant for text that
 * `JSON.parse` then accepts: outside a string, a colon follows only a member's name.
 */
function countMemberNames(text: string, max: number): number | undefined {
  let depth = 0
  let names = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === ':') names++
    else if (c === '[' || c === '{') {
      if (++depth > max) return undefined
    } else if (c === ']' || c === '}') depth--
  }
  return names
}

/** The members of every object in a parsed JSON value, nested ones included. */
function countMembers(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + countMembers(item), 0)
  const members = Object.values(value)
  return members.reduce((sum: number, member) => sum + countMembers(member), members.length)
}

/** The first member name written twice in one object of JSON text that has one. */
function firstDuplicateName(text: string): string {
  for (const { node, phase } of iterator(parseJsonAst(text, { mode: 'json' }))) {
    if (phase !== 'enter' || node.type !== 'Object') continue
    const seen = new Set<string>()
    for (const member of (node as ObjectNode).members) {
      const name = member.name.type === 'String' ? member.name.value : member.name.name
      if (seen.has(name)) return name
      seen.add(name)
    }
  }
  throw new Error('firstDuplicateName: the text names no member twice')
}

function parseForm(text: string): Record<string, unknown> {
  const body: Record<string, string> = {}
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(body, name)) throw duplicate(name)
    setOwn(body, name, value)
  }
  return body
}

/** Text fields become strings (each at most once); files are gathered in an array under their name. */
async function parseMultipart(request: Request): Promise<Record<string, unknown>> {
  let form: FormData
  try {
    form = await request.formData()
  } catch {
    throw new OAuthError('invalid_request', 'The request body is not valid multipart/form-data')
  }
  const body: Record<string, string | File[]> = {}
  for (const [name, value] of form) {
    // Own members only: a field named `valueOf` or `constructor` is not a second one, and `__proto__` stays a field.
    const existing = Object.hasOwn(body, name) ? body[name] : undefined
    if (typeof value === 'string') {
      if (existing !== undefined) throw duplicate(name)
      setOwn(body, name, value)
    } else if (existing === undefined || Array.isArray(existing)) {
      setOwn(body, name, [...(existing ?? []), value])
    } else {
      throw duplicate(name)
    }
  }
  return body
}

/** `body[name] = value`, except that `__proto__` becomes a member (as JSON.parse makes it) instead of the object's prototype. */
function setOwn<T>(body: Record<string, T>, name: string, value: T): void {
  Object.defineProperty(body, name, { value, enumerable: true, writable: true, configurable: true })
}

function duplicate(name: string): OAuthError {
  return new OAuthError('invalid_request', `The parameter "${name}" is given more than once`)
}

function tooLarge(limit: number): OAuthError {
  return new OAuthError('invalid_request', `The request body is larger than ${limit} bytes`)
}

/**
 * Refuses a query string that names a parameter twice (`?period=day&period=month`): the framework would
 * silently keep one of them, and SPEC.md §7 makes duplicates `invalid_request`.
 */
export function rejectDuplicateQuery(request: Request): void {
  const seen = new Set<string>()
  for (const name of new URL(request.url).searchParams.keys()) {
    if (seen.has(name)) throw duplicate(name)
    seen.add(name)
  }
}
