import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { errorStatus } from '../src/errors.ts'
import { createClient } from '../src/clients/registry.ts'
import { startTestServer, type RunningServer } from './browser/chromium.ts'
import { callback, testBrowser } from './verification/browser.ts'

/**
 * Every snippet of docs/integration.md, run as written against a real listening server: the visitor's
 * part (the sandbox form) is played by the test, everything else is the snippet's own code.
 */
const guide = await Bun.file('docs/integration.md').text()
const CALLBACK = 'https://shop.example/age/callback'
const PYTHON = '/usr/bin/python3'
const hasPython = Bun.spawnSync([PYTHON, '-c', 'import jwt, cryptography']).exitCode === 0
if (!hasPython) {
  if (process.env.CI) throw new Error('the Python snippet needs /usr/bin/python3 with python3-jwt and python3-cryptography')
  console.warn('docs: the Python snippet is skipped (apt-get install python3-jwt python3-cryptography)')
}

/** The code block that follows `<!-- snippet: name -->`. */
function snippet(name: string): string {
  const match = new RegExp(`<!-- snippet: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(guide)
  if (!match) throw new Error(`docs/integration.md has no snippet "${name}"`)
  return match[1]!
}

let running: RunningServer
let shop: { id: string; secret: string }
// Under node_modules so that the snippets' `import 'ofage/client'` resolves to this package.
const scratch = join('node_modules', '.cache', 'ofage-doc-snippets')

beforeAll(async () => {
  running = await startTestServer()
  const { client, secret } = await createClient(running.services.deps, { name: 'Docs shop', redirectUris: [CALLBACK], sandbox: true })
  shop = { id: client.id, secret }
  Object.assign(process.env, { OFAGE_URL: running.baseUrl, OFAGE_CLIENT_ID: shop.id, OFAGE_CLIENT_SECRET: shop.secret, OFAGE_SANDBOX: '1' })
  mkdirSync(scratch, { recursive: true })
}, 30_000)
afterAll(() => running.stop())

/** The visitor at the page the snippet sent them to: passes the sandbox check, returns to the callback. */
async function visit(url: string): Promise<URL> {
  expect(url.startsWith(`${running.baseUrl}/?`)).toBe(true)
  const browser = testBrowser({ baseUrl: running.baseUrl })
  const { response, page } = await browser.open(Object.fromEntries(new URL(url).searchParams))
  expect(response.status).toBe(200)
  return callback(await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' }))!.url
}

/** Runs a command to its end: never spawnSync, which would stop the in-process server it talks to. */
async function run(argv: string[], env: Record<string, string | undefined> = {}): Promise<string> {
  const child = Bun.spawn(argv, { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()])
  expect(err).toBe('')
  expect(await child.exited).toBe(0)
  return out.trim()
}

const sh = (script: string, env: Record<string, string>) => run(['sh', '-c', script], env)

describe('docs/integration.md', () => {
  test('curl: push, visit, exchange, validate', async () => {
    const env = { OFAGE: running.baseUrl, CLIENT_ID: shop.id, CLIENT_SECRET: shop.secret, REDIRECT_URI: CALLBACK, STATE: 'curl-state' }
    const back = await visit(await sh(snippet('curl-start'), env))
    expect(back.searchParams.get('state')).toBe('curl-state')
    const exchanged = JSON.parse(await sh(snippet('curl-exchange'), { ...env, CODE: back.searchParams.get('code')! }))
    expect(exchanged).toMatchObject({ token_type: 'Bearer', expires_in: 600 })
    const validated = JSON.parse(await sh(snippet('curl-validate'), { ...env, ACCESS_TOKEN: exchanged.access_token }))
    expect(validated).toMatchObject({ valid: true, age_over: 21, sandbox: true })
  })

  test.each(['client-library', 'openid-client'])('%s: start, visit, finish; a replayed callback and a forged state fail', async (name) => {
    const file = join(mkdtempSync(join(scratch, `${name}-`)), 'age-check.ts')
    writeFileSync(file, snippet(name))
    const { startAgeCheck, finishAgeCheck } = (await import(join(process.cwd(), file))) as {
      startAgeCheck(session: Record<string, string>): Promise<string>
      finishAgeCheck(callback: URL, session: Record<string, string>): Promise<boolean>
    }
    const session: Record<string, string> = {}
    const back = await visit(await startAgeCheck(session))
    expect(await finishAgeCheck(back, session)).toBe(true)
    // The same callback again: the code is used.
    expect(await finishAgeCheck(back, session).catch(() => false)).toBe(false)
    const other: Record<string, string> = {}
    const forged = await visit(await startAgeCheck(other))
    forged.searchParams.set('state', 'forged')
    expect(await finishAgeCheck(forged, other).catch(() => false)).toBe(false)
  })

  test.skipIf(!hasPython)('python: start, visit, finish; a forged state fails', async () => {
    const dir = mkdtempSync(join(scratch, 'python-'))
    writeFileSync(join(dir, 'age_check.py'), snippet('python'))
    const python = async (code: string) => JSON.parse(await run([PYTHON, '-c', `import json, sys; sys.path.insert(0, ${JSON.stringify(dir)}); import age_check\n${code}`]))
    const [url, session] = await python('session = {}\nprint(json.dumps([age_check.start_age_check(session), session]))')
    const back = await visit(url)
    const finish = (callbackUrl: string) => python(`print(json.dumps(age_check.finish_age_check(${JSON.stringify(callbackUrl)}, json.loads(${JSON.stringify(JSON.stringify(session))}))))`)
    const forged = new URL(back)
    forged.searchParams.set('state', 'forged')
    expect(await finish(forged.href)).toBe(false)
    expect(await finish(back.href)).toBe(true)
    expect(await finish(back.href)).toBe(false)
  })
})

describe('docs/integration.md: webhooks', () => {
  test('the receiver accepts what the service sends (an approval, and the documented test event), once per message, and refuses a forgery', async () => {
    const { addWebhookEndpoint } = await import('../src/webhooks/endpoints.ts')
    const { deliverDue } = await import('../src/webhooks/delivery.ts')
    const { issueCode } = await import('../src/oauth/issue-code.ts')
    const file = join(mkdtempSync(join(scratch, 'webhook-')), 'receiver.ts')
    writeFileSync(file, snippet('webhook-receiver'))
    const { receiveWebhook, handled } = (await import(join(process.cwd(), file))) as { receiveWebhook(request: Request): Promise<Response>; handled: { type: string; data: Record<string, unknown> }[] }
    const statuses: number[] = []
    const receiver = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: async (request) => {
      const response = await receiveWebhook(request)
      statuses.push(response.status)
      return response
    } })
    try {
      const endpoint = await addWebhookEndpoint(running.services.deps, shop.id, { url: `http://127.0.0.1:${receiver.port}/events` })
      process.env.OFAGE_WEBHOOK_SECRET = endpoint.secret
      const { transactionId } = await issueCode(running.services.deps, { clientId: shop.id, redirectUri: CALLBACK, ageOver: 21, methodClass: 'age_only' })
      // The running server's own worker may claim the delivery first (deliverDue then attempts none).
      const deadline = performance.now() + 10_000
      while (handled.length === 0 && performance.now() < deadline) {
        if ((await deliverDue(running.services.deps)) === 0) await Bun.sleep(50)
      }
      expect(handled).toHaveLength(1)
      expect(handled[0]).toMatchObject({ type: 'verification.approved', data: { transaction_id: transactionId, age_over: 21 } })
      const forged = await fetch(`http://127.0.0.1:${receiver.port}/events`, {
        method: 'POST',
        headers: { 'webhook-id': 'msg_x', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' },
        body: JSON.stringify({ type: 'verification.approved', data: {} }),
      })
      expect(forged.status).toBe(400)
      expect(handled).toHaveLength(1)
      expect(statuses).toEqual([204, 400])
      // The dashboard's "Send a test event": the payload the guide shows, with this client's and endpoint's ids.
      const { enqueueTestEvent } = await import('../src/webhooks/events.ts')
      const at = new Date()
      await enqueueTestEvent(running.services.deps.db, endpoint, at)
      const documented = /`webhook\.test` event[\s\S]*?```json\n(.*)\n```/.exec(guide)![1]!
      const expected = JSON.parse(documented.replace('cl_test_…', shop.id).replace('we_…', endpoint.id).replace('2026-11-22T12:00:00.000Z', at.toISOString()))
      while (handled.length === 1 && performance.now() < deadline + 10_000) {
        if ((await deliverDue(running.services.deps)) === 0) await Bun.sleep(50)
      }
      expect(handled[1]).toEqual(expected)
      expect(statuses).toEqual([204, 400, 204])
    } finally {
      receiver.stop(true)
    }
  })
})

describe('docs/integration.md: command lines', () => {
  test('every `npm run -s cli --` line runs as the CLI', async () => {
    const { runCommand } = await import('../src/cli/run.ts')
    const lines = [...guide.matchAll(/^npm run -s cli -- (.+?)(?:\s+#.*)?$/gm)].map((match) => match[1]!)
    expect(lines.length).toBeGreaterThanOrEqual(2)
    for (const line of lines) {
      // Quoted words stay whole; the guide's placeholder client id is the test's client.
      const argv = [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((word) => (word[1] ?? word[2]!).replace('cl_test_…', shop.id))
      const output: string[] = []
      const status = await runCommand(running.services, argv, { out: (text) => output.push(text), err: (text) => output.push(text) })
      expect({ line, status, output: status === 0 ? '' : output.join('\n') }).toEqual({ line, status: 0, output: '' })
    }
  })
})

describe('README.md and docs/: command lines', () => {
  test('every `npm run -s cli --` line is a command line the CLI accepts: commands, subcommands and options exist', async () => {
    const { parseCommandLine } = await import('../src/cli/commands.ts')
    const files = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]
    const checked: string[] = []
    for (const file of files) {
      for (const [, line] of (await Bun.file(file).text()).matchAll(/^\s*npm run -s cli -- (.+?)(?:\s+#.*)?$/gm)) {
        const argv = [...line!.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((word) => word[1] ?? word[2] ?? word[3]!)
        // The test issuer and wallet parse their own options (src/cli/dev.ts, tested in test/cli.test.ts).
        if (argv[0] === 'dev') continue
        let error: string | undefined
        try {
          parseCommandLine(argv)
        } catch (cause) {
          error = (cause as Error).message
        }
        expect({ file, line, error }).toEqual({ file, line, error: undefined })
        checked.push(argv[0]!)
      }
    }
    expect(new Set(checked)).toEqual(new Set(['--version', 'migrate', 'clients', 'webhooks', 'users', 'audit', 'usage', 'keys', 'estimator', 'trust']))
  })
})

describe('docs/errors.md', () => {
  test('lists every error code the service answers with, with its status', async () => {
    const reference = await Bun.file('docs/errors.md').text()
    for (const [code, status] of Object.entries(errorStatus)) expect(reference).toContain(`| \`${code}\` | ${status} |`)
  })
})
