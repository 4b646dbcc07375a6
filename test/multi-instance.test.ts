import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startServices, type Services } from '../src/boot.ts'
import { silentLogger } from '../src/lib/log.ts'
import { createClient } from '../src/clients/registry.ts'
import { issueCode } from '../src/oauth/issue-code.ts'
import { basic, freePort, freshDatabaseUrl, onPostgres, REDIRECT_URI, testConfig, waitUntilReady } from './helpers.ts'
import { testBrowser } from './verification/browser.ts'

/**
 * Two server processes on one Postgres database, as behind a load balancer: codes raced across both
 * yield one token each, and a plan limit raced across both is never exceeded.
 */
let database: Awaited<ReturnType<typeof freshDatabaseUrl>>
let services: Services
const servers: { process: ReturnType<typeof Bun.spawn>; url: string }[] = []

beforeAll(async () => {
  if (!onPostgres) return
  database = await freshDatabaseUrl()
  for (let i = 0; i < 2; i++) {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const env = { ...process.env, DATABASE_URL: database.url, PORT: String(port), PUBLIC_URL: url, APP_URL: url, ISSUER_URL: 'https://issuer.ofage.test', FACE_CHECK: '0', OFAGE_DEMO: '0', WORKERS: '1' }
    servers.push({ process: Bun.spawn(['bun', 'src/index.ts'], { env, stdout: 'ignore', stderr: 'ignore' }), url })
  }
  for (const server of servers) await waitUntilReady(server.url)
  services = await startServices(testConfig({ DATABASE_URL: database.url }), { log: silentLogger })
}, 60_000)

afterAll(async () => {
  if (!onPostgres) return
  for (const server of servers) server.process.kill('SIGTERM')
  await Promise.all(servers.map((server) => server.process.exited))
  await services?.close()
  await database?.drop()
})

test.skipIf(!onPostgres)('the same codes raced across two instances: exactly one token each, valid on both', async () => {
  const { client, secret } = await createClient(services.deps, { name: 'Race', redirectUris: [REDIRECT_URI] })
  const codes = await Promise.all(
    Array.from({ length: 10 }, () => issueCode(services.deps, { clientId: client.id, redirectUri: REDIRECT_URI, state: 's', ageOver: 18, methodClass: 'age_only' })),
  )
  const attempts = codes.flatMap(({ code }) =>
    Array.from({ length: 10 }, (_, i) =>
      fetch(`${servers[i % 2]!.url}/api/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: basic(client.id, secret) },
        body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state: 's' }),
      }).then(async (response) => ({ code, status: response.status, body: (await response.json()) as Record<string, string> })),
    ),
  )
  const results = await Promise.all(attempts)
  for (const { code } of codes) {
    const mine = results.filter((r) => r.code === code)
    expect(mine.filter((r) => r.status === 200)).toHaveLength(1)
    expect(mine.filter((r) => r.body.error === 'code_already_used')).toHaveLength(9)
  }
  // Every code was replayed, so every token was revoked: both instances must agree on that.
  const token = results.find((r) => r.status === 200)!.body.access_token
  for (const server of servers) expect((await fetch(`${server.url}/api/verify/token/${token}`)).status).toBe(401)
}, 60_000)

test.skipIf(!onPostgres)('a plan limit raced across two instances is never exceeded, and usage counts each once', async () => {
  const { client, secret } = await createClient(services.deps, { name: 'Limited', redirectUris: [REDIRECT_URI], sandbox: true, verificationLimit: 5 })
  const visitors = await Promise.all(
    Array.from({ length: 16 }, async (_, i) => {
      const browser = testBrowser({ baseUrl: servers[i % 2]!.url })
      const { page } = await browser.open({ client_id: client.id, state: `v${i}` })
      return { browser, page }
    }),
  )
  const outcomes = await Promise.all(
    visitors.map(({ browser, page }, i) =>
      browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' }).then((r) => ({ i, status: r.status })),
    ),
  )
  expect(outcomes.filter((o) => o.status === 303)).toHaveLength(5)
  expect(outcomes.filter((o) => o.status === 402)).toHaveLength(11)
  const usage = await (await fetch(`${servers[0]!.url}/api/oauth/usage`, { headers: { authorization: basic(client.id, secret) } })).json()
  expect(usage.usage.total_verifications).toBe(5)
}, 60_000)
