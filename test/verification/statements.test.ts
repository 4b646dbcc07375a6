import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createStatementLog } from '../../src/db/statement-log.ts'
import { addWebhookEndpoint } from '../../src/webhooks/endpoints.ts'
import { sql } from 'drizzle-orm'
import { createTestContext, queryRows, type TestContext } from '../helpers.ts'
import { callback, testBrowser } from './browser.ts'

/**
 * The statements a visitor's flow sends to the database (issue 34), `BEGIN` and `COMMIT` included: each is
 * a round trip, and they bound the flow's rate (docs/performance.md). A change that adds one fails here.
 * Before issue 34: 4 to open the page, 13 to complete the sandbox form (5 and 16 with a plan limit and a
 * webhook endpoint).
 */
const log = createStatementLog()
let ctx: TestContext

beforeAll(async () => {
  ctx = await createTestContext({ onStatement: log.onStatement })
})
afterAll(() => ctx.close())

const completeSandbox = (browser: ReturnType<typeof testBrowser>, page: { action(suffix: string): string; csrf?: string | undefined }) =>
  browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })

/** The statements of opening the page, and of completing its sandbox form, on a client's second visit. */
async function measureFlow(clientId: string) {
  const browser = testBrowser(ctx)
  // A client's first visit on an instance reads it; what is measured is every visit after that.
  const first = await log.measure(() => browser.open({ client_id: clientId }))
  expect(first.statements).toHaveLength(2)
  const opened = await log.measure(() => browser.open({ client_id: clientId, state: 's' }))
  expect(opened.result.response.status).toBe(200)
  const completed = await log.measure(() => completeSandbox(browser, opened.result.page))
  expect(callback(completed.result)).toBeDefined()
  return { open: opened.statements.length, complete: completed.statements.length }
}

test('opening the page: 1 statement; completing the sandbox form: 2', async () => {
  const client = await ctx.createClient({ sandbox: true })
  expect(await measureFlow(client.id)).toEqual({ open: 1, complete: 2 })
})

test('with a plan limit and a webhook endpoint: the same 1 and 2', async () => {
  const client = await ctx.createClient({ sandbox: true, verificationLimit: 100 })
  await addWebhookEndpoint(ctx.deps, client.id, { url: 'https://hooks.example/ofage' })
  expect(await measureFlow(client.id)).toEqual({ open: 1, complete: 2 })
})

test('re-verifying with the age pass: 2 statements to open (the pass is read), 3 to continue', async () => {
  const client = await ctx.createClient({ sandbox: true })
  const browser = testBrowser(ctx)
  const { page } = await browser.open({ client_id: client.id })
  expect(callback(await completeSandbox(browser, page))).toBeDefined()
  const opened = await log.measure(() => browser.open({ client_id: client.id, state: 'again' }))
  const continued = await log.measure(() => browser.post(opened.result.page.action('/continue'), { csrf: opened.result.page.csrf! }))
  expect(callback(continued.result)).toBeDefined()
  expect({ open: opened.statements.length, continue: continued.statements.length }).toEqual({ open: 2, continue: 3 })
})

test('the opening and the check\'s hit commit without waiting for the disk; the approval waits, and no connection keeps the setting', async () => {
  const client = await ctx.createClient({ sandbox: true })
  const browser = testBrowser(ctx)
  await browser.open({ client_id: client.id })
  const opened = await log.measure(() => browser.open({ client_id: client.id, state: 's' }))
  const completed = await log.measure(() => completeSandbox(browser, opened.result.page))
  expect(callback(completed.result)).toBeDefined()
  const unflushed = (text: string) => text.includes("set_config('synchronous_commit', 'off', true)")
  expect(opened.statements.map(unflushed)).toEqual([true])
  // The check's hit and attempt, then the approval: the code, the audit row and the usage wait for the disk.
  expect(completed.statements.map(unflushed)).toEqual([true, false])
  expect(completed.statements[1]).toContain('insert into auth_codes')
  // Set for the statement's own transaction only: every pooled connection still commits synchronously.
  const settings = await Promise.all(Array.from({ length: 30 }, () => queryRows<{ synchronous_commit: string }>(ctx.deps.db, sql`show synchronous_commit`)))
  expect(new Set(settings.map(([row]) => row!.synchronous_commit))).toEqual(new Set(['on']))
})
