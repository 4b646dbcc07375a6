import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createHash, createPublicKey } from 'node:crypto'
import { freePort, freshDatabase, startServerProcess } from '../helpers.ts'

/**
 * The key set and the PEM key as a running server answers them: Bun.serve's static routes, with no app in
 * the way (src/keys/routes.ts, staticKeyRoutes). They must say what the app's routes say, answer a
 * conditional GET with 304, HEAD without a body, carry HSTS where the app's answers do, and leave every other
 * method to the app (the spec's 404). Rotation while serving: test/admin-socket.test.ts (embedded) and
 * test/keys/two-instances.test.ts (two servers on Postgres).
 */
const PATHS = ['/api/.well-known/jwks.json', '/api/verify/public-key']
const database = await freshDatabase()
const port = await freePort()
const url = `http://127.0.0.1:${port}`
let server: Awaited<ReturnType<typeof startServerProcess>> | undefined

beforeAll(async () => {
  // An https public URL: the answers must carry Strict-Transport-Security, as the app's do.
  server = await startServerProcess({ ...database.env, PORT: String(port), PUBLIC_URL: 'https://age.shop.example', FACE_CHECK: '0', OFAGE_DEMO: '0', WORKERS: '1' })
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await database.drop()
})

test('GET answers the published documents with their ETag, cache lifetime and HSTS; the two name one key', async () => {
  const hsts = (await fetch(`${url}/healthz`)).headers.get('strict-transport-security')
  expect(hsts).toStartWith('max-age=')
  const [jwks, pem] = await Promise.all(PATHS.map((path) => fetch(`${url}${path}`)))
  for (const response of [jwks!, pem!]) {
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.get('cache-control')).toBe('public, max-age=86400')
    expect(response.headers.get('strict-transport-security')).toBe(hsts)
  }
  const [jwksBody, pemBody] = [await jwks!.text(), await pem!.text()]
  expect(jwks!.headers.get('etag')).toBe(`"${createHash('sha256').update(jwksBody).digest('hex').slice(0, 32)}"`)
  expect(pem!.headers.get('etag')).toBe(`"${createHash('sha256').update(pemBody).digest('hex').slice(0, 32)}"`)
  const set = JSON.parse(jwksBody) as { keys: { kid: string; n: string; alg: string }[] }
  const key = JSON.parse(pemBody) as { public_key: string; kid: string; alg: string }
  expect(set.keys).toHaveLength(1)
  expect(createPublicKey(key.public_key).export({ format: 'jwk' }).n).toBe(set.keys[0]!.n)
  expect([key.kid, key.alg]).toEqual([set.keys[0]!.kid, set.keys[0]!.alg])
})

test('a cached copy is confirmed with 304 and no body; another ETag gets the document; HEAD gets no body', async () => {
  for (const path of PATHS) {
    const first = await fetch(`${url}${path}`)
    const etag = first.headers.get('etag')!
    const body = await first.text()
    for (const offered of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await fetch(`${url}${path}`, { headers: { 'if-none-match': offered } })
      expect([offered, again.status, await again.text()]).toEqual([offered, 304, ''])
      expect(again.headers.get('etag')).toBe(etag)
    }
    const changed = await fetch(`${url}${path}`, { headers: { 'if-none-match': '"an-older-key"' } })
    expect([changed.status, await changed.text()]).toEqual([200, body])
    const head = await fetch(`${url}${path}`, { method: 'HEAD' })
    expect([head.status, head.headers.get('etag'), await head.text()]).toEqual([200, etag, ''])
  }
})

test('other methods reach the app: the spec error body and status, with a request id', async () => {
  for (const path of PATHS) {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const response = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'OPTIONS' ? undefined : '{}' })
      expect([method, response.status, response.headers.get('content-type')]).toEqual([method, 404, 'application/json'])
      expect(await response.json()).toEqual({ error: 'not_found', error_description: 'No such endpoint' })
      expect(response.headers.get('x-request-id')).toBeTruthy()
    }
  }
})
