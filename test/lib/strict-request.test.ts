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
