import { expect } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { decodeJwt } from 'jose'
import { chromium, type Browser, type Page } from 'playwright-core'
import { createHandler } from '../../src/app.tsx'
import { startServices, type Services } from '../../src/boot.ts'
import { silentLogger } from '../../src/lib/log.ts'
import type { Challenge } from '../../src/liveness/challenge.ts'
import { basic, freePort, freshDatabase, testConfig } from '../helpers.ts'

/**
 * Browser tests use Debian's Chromium through playwright-core. Without it they are skipped with one
 * line; under CI, a missing Chromium is a failure rather than a silent pass.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const hasChromium = existsSync(CHROMIUM)
if (!hasChromium) {
  if (process.env.CI) throw new Error(`browser tests need Chromium at ${CHROMIUM} (apt-get install chromium)`)
  console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`)
}

/**
 * `bun run screenshots` rewrites docs/screenshots/ with the browser tests' own pages (UPDATE_SCREENSHOTS=1).
 * The screenshot tests exist only then: registered as skipped, every ordinary run reported them.
 */
export const updatingScreenshots = process.env.UPDATE_SCREENSHOTS === '1'

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...FLAGS, ...extraArgs] })
}

export type RunningServer = { baseUrl: string; services: Services; stop(): Promise<void> }

/**
 * A real listening server, as `bun start` runs it, on a fresh database. `hostname: 'localhost'` addresses it
 * by name (it still listens on 127.0.0.1): WebAuthn needs an RP ID that is a domain, never an IP address.
 * `database` may put something between the server and its database (test/db-proxy.ts) by giving its URL.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  options: { estimator?: boolean; pickChallenge?: () => Challenge; hostname?: 'localhost'; database?: (url: string) => Promise<string> } = {},
): Promise<RunningServer> {
  const database = await freshDatabase()
  const port = await freePort()
  const baseUrl = `http://${options.hostname ?? '127.0.0.1'}:${port}`
  const databaseEnv = options.database && database.env.DATABASE_URL ? { DATABASE_URL: await options.database(database.env.DATABASE_URL) } : database.env
  const services = await startServices(testConfig({ ...databaseEnv, PUBLIC_URL: baseUrl, ISSUER_URL: baseUrl, ...env }), {
    log: silentLogger,
    estimator: options.estimator,
    pickChallenge: options.pickChallenge,
  })
  const server = Bun.serve({ port, hostname: '127.0.0.1', fetch: createHandler(services.deps) })
  return {
    baseUrl,
    services,
    async stop() {
      await server.stop()
      await services.close()
      await database.drop()
    },
  }
}

/** No part of the page is wider than the screen (a table may scroll inside its own box): nothing scrolls sideways. */
export async function fitsTheScreen(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)
}

/**
 * No table's own box scrolls sideways either: on a desktop screen each table fits as a table (issue 32, item 5:
 * the dashboard's audit table scrolled sideways at 1280 px).
 */
export async function tablesFitTheirBoxes(page: Page): Promise<boolean> {
  return page.evaluate(() => [...document.querySelectorAll('.table-wrap')].every((box) => box.scrollWidth <= box.clientWidth))
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's violations on the page as it is now, `id (nodes)` each: an accessible page gives []. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource)
  return page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run(): Promise<{ violations: { id: string; nodes: unknown[] }[] }> } }).axe.run()
    return result.violations.map((v) => `${v.id} (${v.nodes.length})`)
  })
}

/**
 * The site's back channel once the browser is back at its callback: the code exchanged with the client's
 * credentials (200 expected), the token validated by the API, and the token's `sub`.
 */
export async function exchangeAtCallback(page: Page, site: { baseUrl: string; client: { id: string; secret: string }; callback: string; state: string }) {
  await page.waitForURL(`${site.callback}**`, { timeout: 15_000 })
  const code = new URL(page.url()).searchParams.get('code')
  const response = await fetch(`${site.baseUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic(site.client.id, site.client.secret) },
    body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: site.callback, state: site.state }),
  })
  expect(response.status).toBe(200)
  const { access_token } = (await response.json()) as { access_token: string }
  const validation = (await (await fetch(`${site.baseUrl}/api/verify/token/${access_token}`)).json()) as Record<string, unknown>
  return { validation, sub: decodeJwt(access_token).sub, callback: new URL(page.url()) }
}
