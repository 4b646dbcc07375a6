import { describe, expect, test } from 'bun:test'
import { OAuthError } from '../../src/errors.ts'
import { MAX_BODY_BYTES, readStrictBody } from '../../src/lib/strict-request.ts'

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
