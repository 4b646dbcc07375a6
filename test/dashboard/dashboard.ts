import { createDashboardUser, setPasswordWithToken } from '../../src/dashboard/users.ts'
import type { TestContext } from '../helpers.ts'
import { readPage, testBrowser } from '../verification/browser.ts'

export const PASSWORD = 'correct horse battery staple'

/** A dashboard user of `clientId` whose password is set. */
export async function createUser(ctx: TestContext, clientId: string, email: string, password = PASSWORD) {
  const { user, link } = await createDashboardUser(ctx.deps, { clientId, email })
  if (!(await setPasswordWithToken(ctx.deps, { token: link.token, password }))) throw new Error('the new link did not set the password')
  return user
}

export type DashboardBrowser = ReturnType<typeof testBrowser>

/** Opens the sign-in page in `browser` and posts the form; returns the answer. */
export async function postSignIn(browser: DashboardBrowser, email: string, password: string, headers: Record<string, string> = {}) {
  const form = await readPage(await browser.request('/dashboard/sign-in', { headers }))
  return browser.post('/dashboard/sign-in', { csrf: form.csrf!, email, password }, headers)
}

/** A browser signed in as `email`. */
export async function signedIn(ctx: TestContext, email: string, password = PASSWORD, headers: Record<string, string> = {}) {
  const browser = testBrowser(ctx)
  const response = await postSignIn(browser, email, password, headers)
  if (response.status !== 303) throw new Error(`sign-in failed: ${response.status}`)
  return browser
}

/** A signed-in page's CSRF token (the sign-out forms carry it on every page). */
export async function sessionCsrf(browser: DashboardBrowser): Promise<string> {
  const page = await readPage(await browser.request('/dashboard/audit'))
  if (!page.csrf) throw new Error('no CSRF token on the audit page: not signed in?')
  return page.csrf
}

/** The transaction ids a page links to, in order. */
export function transactionIds(html: string): string[] {
  return [...html.matchAll(/href="\/dashboard\/audit\/([0-9a-f-]{36})"/g)].map((match) => match[1]!)
}

/** The "older" link of an audit page, entities decoded. */
export function olderLink(html: string): string | undefined {
  return /<a href="([^"]*)" rel="next"/.exec(html)?.[1]?.replaceAll('&amp;', '&')
}
