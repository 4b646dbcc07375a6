import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startServices } from '../../src/boot.ts'
import { createClient } from '../../src/clients/registry.ts'
import { loadConfig } from '../../src/config.ts'
import { silentLogger } from '../../src/lib/log.ts'
import { awayFromWindowEdge, freePort, freshDatabase, REDIRECT_URI, startServerProcess } from '../helpers.ts'

/**
 * Without a proxy, the abuse limits count by the socket's address, which the server reads only when a route
 * asks for it (src/ratelimit/peer.ts). A real server, one new session a minute per address, and visitors on
 * loopback addresses of their own (curl --interface): the second visit from an address is refused, a visit
 * from another is not, and what a visitor writes in X-Forwarded-For changes nothing without TRUST_PROXY.
 */
const database = await freshDatabase()
const port = await freePort()
const url = `http://127.0.0.1:${port}`
const env = { ...database.env, PORT: String(port), PUBLIC_URL: url, FACE_CHECK: '0', OFAGE_DEMO: '0', WORKERS: '1', RATE_LIMIT_SESSIONS: '1' }
let server: Awaited<ReturnType<typeof startServerProcess>> | undefined
let page = ''

beforeAll(async () => {
  // The client first, on the database the server will then hold (the embedded store allows one process).
  const services = await startServices(loadConfig({ ...process.env, ...env }), { log: silentLogger, serve: false })
  const { client } = await createClient(services.deps, { name: 'Address shop', redirectUris: [REDIRECT_URI], sandbox: true })
  await services.close()
  page = `${url}/?${new URLSearchParams({ client_id: client.id, redirect_uri: REDIRECT_URI, state: 'addresses' })}`
  server = await startServerProcess(env)
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await database.drop()
})

/** A visit to the page from `from`, a loopback address: its status. */
async function visitFrom(from: string, headers: string[] = []): Promise<number> {
  const curl = Bun.spawn(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '--interface', from, ...headers.flatMap((h) => ['-H', h]), page], { stdout: 'pipe' })
  const [out] = await Promise.all([new Response(curl.stdout).text(), curl.exited])
  return Number(out)
}

test('each socket address has its own session limit; X-Forwarded-For is not believed without TRUST_PROXY', async () => {
  await awayFromWindowEdge()
  expect(await visitFrom('127.0.0.2')).toBe(200)
  expect(await visitFrom('127.0.0.2')).toBe(429)
  expect(await visitFrom('127.0.0.2', ['X-Forwarded-For: 198.51.100.7'])).toBe(429)
  expect(await visitFrom('127.0.0.3')).toBe(200)
  expect(await visitFrom('127.0.0.3')).toBe(429)
})
