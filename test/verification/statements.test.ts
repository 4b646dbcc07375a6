import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createStatementLog } from '../../src/db/statement-log.ts'
import { addWebhookEndpoint } from '../../src/webhooks/endpoints.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { callback, testBrowser } from './browser.ts'

/**
 * The statements a visitor's flow sends to the database (issue 34), `BEGIN` and `COMMIT` included: each is
 * a round trip, and they bound the flow's rate (docs/performance.md). A change that adds one fails here.
 */
const log = createStatementLog()
let ctx: TestContext

beforeAll(async () => {
  ctx = await createTestContext({ onStatement: log.onStatement })
})
afterAll(() => ctx.close())

/** The statements of opening the page, and of completing its sandbox form, on a client's second visit. */
async function measureFlow(clientId: string) {
  const browser = testBrowser(ctx)
  // A client's first visit on an instance may read it; what is measured is every visit after that.
  await browser.open({ client_id: clientId })
  const opened = await log.measure(() => browser.open({ client_id: clientId, state: 's' }))
  expect(opened.result.response.status).toBe(200)
  const { page } = opened.result
  const completed = await log.measure(() => browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' }))
  expect(callback(completed.result)).toBeDefined()
  return { open: opened.statements.length, complete: completed.statements.length }
}

test('opening the page: 4 statements; completing the sandbox form: 13', async () => {
  const client = await ctx.createClient({ sandbox: true })
  expect(await measureFlow(client.id)).toEqual({ open: 4, complete: 13 })
})

test('with a plan limit and a webhook endpoint: 5 and 16', async () => {
  const client = await ctx.createClient({ sandbox: true, verificationLimit: 100 })
  await addWebhookEndpoint(ctx.deps, client.id, { url: 'https://hooks.example/ofage' })
  expect(await measureFlow(client.id)).toEqual({ open: 5, complete: 16 })
})
