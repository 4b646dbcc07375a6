import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { startServices, type Services } from '../src/boot.ts'
import { silentLogger } from '../src/lib/log.ts'
import { createClient } from '../src/clients/registry.ts'
import { basic, freePort, freshDatabaseUrl, onPostgres, queryRows, REDIRECT_URI, testConfig, waitUntilReady } from './helpers.ts'
import { callback, testBrowser } from './verification/browser.ts'

/**
 * A server killed with SIGKILL in the middle of a burst of verifications and exchanges, then started again
 * on the same database: every approved verification is counted exactly once (usage equals audit rows), no
 * code yields two tokens, and sessions the kill interrupted can still be completed.
 */
let database: Awaited<ReturnType<typeof freshDatabaseUrl>>
let services: Services
let server: ReturnType<typeof Bun.spawn> | undefined
const port = await freePort()
const url = `http://127.0.0.1:${port}`

function startServer() {
  const env = { ...process.env, DATABASE_URL: database.url, PORT: String(port), PUBLIC_URL: url, APP_URL: url, ISSUER_URL: 'https://issuer.ofage.test', FACE_CHECK: '0', OFAGE_DEMO: '0', WORKERS: '1' }
  server = Bun.spawn(['bun', 'src/index.ts'], { env, stdout: 'ignore', stderr: 'ignore' })
  return waitUntilReady(url, 30_000)
}

beforeAll(async () => {
  if (!onPostgres) return
  database = await freshDatabaseUrl()
  await startServer()
  services = await startServices(testConfig({ DATABASE_URL: database.url }), { log: silentLogger })
}, 60_000)

afterAll(async () => {
  if (!onPostgres) return
  server?.kill('SIGTERM')
  await server?.exited
  await services?.close()
  await database?.drop()
})

test.skipIf(!onPostgres)('kill -9 mid-burst: usage equals audit rows, no code redeemed twice, interrupted sessions complete after the restart', async () => {
  const { client, secret } = await createClient(services.deps, { name: 'Chaos shop', redirectUris: [REDIRECT_URI], sandbox: true })
  const authorization = basic(client.id, secret)
  const visitors = await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const browser = testBrowser({ baseUrl: url })
      const { page } = await browser.open({ client_id: client.id, state: `v${i}` })
      return { browser, page, state: `v${i}` }
    }),
  )
  const exchange = (code: string, state: string) =>
    fetch(`${url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state }),
    }).then((r) => r.status, () => 0)
  // Each visitor completes the test form and the site exchanges the code twice (a double click): the kill lands in the middle.
  let firstCode: () => void = () => {}
  const someCompleted = new Promise<void>((resolve) => (firstCode = resolve))
  const burst = visitors.map(async (visitor) => {
    const response = await visitor.browser.post(visitor.page.action('/methods/sandbox'), { csrf: visitor.page.csrf!, age: '30', method_class: 'age_only' }).catch(() => undefined)
    const back = response && callback(response)
    if (!back) return { visitor, statuses: [] as number[] }
    firstCode()
    return { visitor, back, statuses: await Promise.all([exchange(back.code, visitor.state), exchange(back.code, visitor.state)]) }
  })
  await someCompleted
  server!.kill('SIGKILL')
  await server!.exited
  const results = await Promise.all(burst)
  await startServer()

  // Nothing redeemed twice: of all the exchanges of a code, before and after the restart, at most one got a token.
  for (const { back, visitor, statuses } of results.filter((result) => result.back)) {
    const after = await exchange(back!.code, visitor.state)
    expect([200, 400]).toContain(after)
    expect([...statuses, after].filter((status) => status === 200).length).toBeLessThanOrEqual(1)
  }
  // Every visitor the kill cut off before a code reached them can finish now, or learns the session completed.
  for (const { visitor, back } of results.filter((result) => !result.back)) {
    const retry = await visitor.browser.post(visitor.page.action('/methods/sandbox'), { csrf: visitor.page.csrf!, age: '30', method_class: 'age_only' })
    expect([303, 400]).toContain(retry.status)
    expect(back).toBeUndefined()
  }
  // Counted once each, whatever the kill interrupted.
  const [audit] = await queryRows<{ n: number }>(services.deps.db, sql`select count(*)::int as n from audit_logs where client_id = ${client.id}`)
  const [usage] = await queryRows<{ n: number }>(services.deps.db, sql`select coalesce(sum(total), 0)::int as n from usage_daily where client_id = ${client.id}`)
  expect(usage!.n).toBe(audit!.n)
  const [codes] = await queryRows<{ n: number }>(services.deps.db, sql`select count(*)::int as n from auth_codes where client_id = ${client.id}`)
  expect(codes!.n).toBe(audit!.n)
  // The kill landed mid-burst: some visitors got their code before it, some did not.
  expect(results.some((result) => result.back)).toBe(true)
}, 90_000)
