import { describe, expect, test } from 'bun:test'
import { OAuthError } from '../../src/errors.ts'
import { MAX_BODY_BYTES, parseStrictJsonObject, readStrictBody } from '../../src/lib/strict-request.ts'

const URL = 'http://ofage.test/api/oauth/token'
const json = { 'content-type': 'application/json' }

async function refusal(request: Request): Promise<string> {
  try {
    await readStrictBody(request, ['json', 'form'])
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError)
    return (error as OAuthError).description
  }
  throw new Error('read')
}

describe('a JSON or form body is read within its bound (src/lib/strict-request.ts)', () => {
  test('one that says its length is read in one piece', async () => {
    const body = JSON.stringify({ grant_type: 'authorization_code', code: 'c'.repeat(64) })
    const request = new Request(URL, { method: 'POST', body, headers: { ...json, 'content-length': String(Buffer.byteLength(body)) } })
    expect(await readStrictBody(request, ['json'])).toEqual({ grant_type: 'authorization_code', code: 'c'.repeat(64) })
  })

  test('one that says a length over the bound is refused unread', async () => {
    let pulled = 0
    const body = new ReadableStream({ pull: (controller) => void (pulled++, controller.enqueue(new Uint8Array(1024))) })
    const request = new Request(URL, { method: 'POST', body, headers: { ...json, 'content-length': String(MAX_BODY_BYTES + 1) } })
    expect(await refusal(request)).toBe(`The request body is larger than ${MAX_BODY_BYTES} bytes`)
    expect(pulled).toBeLessThanOrEqual(1)
  })

  test('one that brings more than its Content-Length (only a request made in process can) is refused', async () => {
    const request = new Request(URL, { method: 'POST', body: '{"code":"abcdef"}', headers: { ...json, 'content-length': '4' } })
    expect(await refusal(request)).toBe('The request body is longer than its Content-Length')
  })

  test('one without a length (chunked) is cut off at the bound: the rest is never pulled', async () => {
    let pulled = 0
    const body = new ReadableStream({ pull: (controller) => void (pulled++, controller.enqueue(new Uint8Array(1024).fill(32))) })
    const request = new Request(URL, { method: 'POST', body, headers: json })
    expect(await refusal(request)).toBe(`The request body is larger than ${MAX_BODY_BYTES} bytes`)
    expect(pulled).toBeLessThan(MAX_BODY_BYTES / 1024 + 4)
  })
})

describe("what the one-piece read relies on: Bun's parser ends a body at its Content-Length", () => {
  /** A raw HTTP/1.1 exchange with a server whose one route reads its body strictly and says what it read. */
  async function send(raw: string): Promise<string> {
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: async (request) => Response.json(await readStrictBody(request, ['json']).catch((error: OAuthError) => ({ refused: error.description }))),
    })
    try {
      let received = ''
      const socket = await Bun.connect({ hostname: '127.0.0.1', port: server.port!, socket: { data: (_, chunk) => void (received += chunk.toString()) } })
      socket.write(raw)
      for (let i = 0; i < 100 && !received.includes('\r\n\r\n'); i++) await Bun.sleep(20)
      await Bun.sleep(50)
      socket.end()
      return received
    } finally {
      await server.stop(true)
    }
  }

  test('a request that says both Content-Length and chunked is refused before any route runs', async () => {
    const body = '{"code":"abcdefghijklmnopqrstuvwxyz"}'
    const answer = await send(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`)
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request')
  })

  test('bytes past the Content-Length are not the body: the route reads exactly what was declared', async () => {
    const answer = await send(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}{"smuggled":"yes"}`)
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK')
    expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toStartWith('{}')
  })
})

describe('JSON text read strictly (parseStrictJsonObject)', () => {
  function refused(text: string): string {
    try {
      parseStrictJsonObject(text, 'The body', 4)
    } catch (error) {
      expect(error).toBeInstanceOf(OAuthError)
      return (error as OAuthError).description
    }
    throw new Error(`accepted ${text}`)
  }

  test('a member given twice is refused at any level, by its name, however the text hides it', () => {
    const twice = (name: string) => `The parameter "${name}" is given more than once`
    expect(refused('{"a":1,"a":1}')).toBe(twice('a'))
    expect(refused('{"a":"x:y","a":1}')).toBe(twice('a'))
    expect(refused('{"k":{"b":[{"c":1,"c":2}]}}')).toBe(twice('c'))
    expect(refused('{"k":[{"x":1},{"y":{"z":":","z":"\\":"}}]}')).toBe(twice('z'))
    expect(refused('{"__proto__":1,"__proto__":{}}')).toBe(twice('__proto__'))
    // A name that ends in a backslash: the quote after it still closes the string.
    expect(refused(String.raw`{"a\\":1,"a\\":2}`)).toBe(twice('a\\'))
    // The same name written two ways is the same member.
    expect(refused('{"a":1,"\\u0061":2}')).toBe(twice('a'))
  })

  test('colons, quotes and brackets inside strings are not members nor levels', () => {
    const text = '{"a:b":"c:d","e\\"":":","[[[[[":"{{{{{","n":{"m":[1,":",{"o":null}]}}'
    expect(parseStrictJsonObject(text, 'The body', 4)).toEqual(JSON.parse(text))
  })

  test('a __proto__ member is an own member, never the prototype', () => {
    const parsed = parseStrictJsonObject('{"__proto__":{"admin":true},"x":1}', 'The body')
    expect(Object.hasOwn(parsed, '__proto__')).toBe(true)
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype)
    expect((parsed as { admin?: unknown }).admin).toBeUndefined()
  })

  test('too deep, not JSON, or not an object: each its own refusal', () => {
    expect(refused('{"a":[[[[1]]]]}')).toBe('The body nests deeper than 4 levels')
    expect(refused('{"a":1,}')).toBe('The body is not valid JSON')
    expect(refused('{"a":1')).toBe('The body is not valid JSON')
    expect(refused('[{"a":1}]')).toBe('The body must be a JSON object')
    expect(refused('"a:b"')).toBe('The body must be a JSON object')
    expect(refused('null')).toBe('The body must be a JSON object')
  })
})
