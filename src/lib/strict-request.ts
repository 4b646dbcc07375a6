import { evaluate, iterator, parse as parseJsonAst, type ObjectNode } from '@humanwhocodes/momoa'
import { OAuthError } from '../errors.ts'

/** Request bodies of the API are a few hundred bytes; anything far larger is refused unread. */
export const MAX_BODY_BYTES = 16 * 1024

type BodyType = 'json' | 'form'

/**
 * Reads a request body as a flat object, strictly: only the allowed content types, a size bound,
 * well-formed JSON, and no member given twice (SPEC.md §7: duplicate parameters are `invalid_request`;
 * `JSON.parse` would silently keep the last one). Failures are `invalid_request`.
 */
export async function readStrictBody(request: Request, allowed: BodyType[]): Promise<Record<string, unknown>> {
  const mime = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  const type: BodyType | undefined =
    mime === 'application/json' ? 'json' : mime === 'application/x-www-form-urlencoded' ? 'form' : undefined
  if (!type || !allowed.includes(type)) {
    const expected = allowed.map((t) => (t === 'json' ? 'application/json' : 'application/x-www-form-urlencoded')).join(' or ')
    throw new OAuthError('invalid_request', `Content-Type must be ${expected}`)
  }
  const declared = Number(request.headers.get('content-length') ?? 0)
  if (declared > MAX_BODY_BYTES) throw tooLarge()
  const text = await request.text()
  if (text.length > MAX_BODY_BYTES) throw tooLarge()
  return type === 'json' ? parseJsonObject(text) : parseForm(text)
}

function parseJsonObject(text: string): Record<string, unknown> {
  let document
  try {
    document = parseJsonAst(text, { mode: 'json' })
  } catch {
    throw new OAuthError('invalid_request', 'The request body is not valid JSON')
  }
  if (document.body.type !== 'Object') throw new OAuthError('invalid_request', 'The request body must be a JSON object')
  for (const { node, phase } of iterator(document)) {
    if (phase !== 'enter' || node.type !== 'Object') continue
    const seen = new Set<string>()
    for (const member of (node as ObjectNode).members) {
      const name = member.name.type === 'String' ? member.name.value : member.name.name
      if (seen.has(name)) throw duplicate(name)
      seen.add(name)
    }
  }
  return evaluate(document.body) as Record<string, unknown>
}

function parseForm(text: string): Record<string, unknown> {
  const body: Record<string, string> = {}
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(body, name)) throw duplicate(name)
    body[name] = value
  }
  return body
}

function duplicate(name: string): OAuthError {
  return new OAuthError('invalid_request', `The parameter "${name}" is given more than once`)
}

function tooLarge(): OAuthError {
  return new OAuthError('invalid_request', `The request body is larger than ${MAX_BODY_BYTES} bytes`)
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
