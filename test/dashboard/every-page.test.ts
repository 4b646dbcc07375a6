import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createDashboardUser } from '../../src/dashboard/users.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { readPage, testBrowser } from '../verification/browser.ts'
import { createUser, PASSWORD, postSignIn, sessionCsrf, signedIn, type DashboardBrowser } from './dashboard.ts'

/**
 * What every dashboard page and form share (issue 24): the navigation marks the page shown, and every form
 * that succeeds answers 303 to a page (post/redirect/get), so that a reload never sends a form again.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
let transactionId: string

beforeAll(async () => {
  // One account signs in for every case here: no sign-in limit in the way.
  ctx = await createTestContext({ env: { RATE_LIMIT_SIGNIN_ACCOUNT: '1000', RATE_LIMIT_SIGNIN_ADDRESS: '1000' } })
  shop = await ctx.createClient({ name: 'Shop' })
  transactionId = (await ctx.issueCode({ clientId: shop.id })).transactionId
  await createUser(ctx, shop.id, 'owner@shop.example')
}, 60_000)
afterAll(() => ctx.close())

/** The navigation's links with their aria-current, in order. */
function navigation(html: string): [string, string | undefined][] {
  const nav = /<nav aria-label="[^"]*"><ul>([\s\S]*?)<\/ul><\/nav>/.exec(html)![1]!
  return [...nav.matchAll(/<a href="([^"]+)"(?: aria-current="([^"]+)")?>/g)].map((link) => [link[1]!, link[2]])
}

describe('the navigation marks the page shown', () => {
  test.each([
    ['/dashboard/audit', { '/dashboard/audit': 'page' }],
    ['/dashboard/audit?from=2026-11-01', { '/dashboard/audit': 'page' }],
    // A verification is inside the audit log: that link is current, but not "this page".
    ['/dashboard/audit/{transaction}', { '/dashboard/audit': 'true' }],
    ['/dashboard/usage', { '/dashboard/usage': 'page' }],
    ['/dashboard/settings', { '/dashboard/settings': 'page' }],
    ['/dashboard/sign-out-everywhere', {}],
  ] as const)('%s', async (path, current) => {
    const browser = await signedIn(ctx, 'owner@shop.example')
    const response = await browser.request(path.replace('{transaction}', transactionId))
    expect(response.status).toBe(200)
    const links = navigation(await response.text())
    expect(links.map(([href]) => href)).toEqual(['/dashboard/audit', '/dashboard/usage', '/dashboard/settings'])
    expect(Object.fromEntries(links.filter(([, mark]) => mark))).toEqual(current)
  })

  test('in another language the links keep it, and the mark', async () => {
    const browser = await signedIn(ctx, 'owner@shop.example')
    const links = navigation(await (await browser.request('/dashboard/usage?lang=fr')).text())
    expect(links).toEqual([
      ['/dashboard/audit?lang=fr', undefined],
      ['/dashboard/usage?lang=fr', 'page'],
      ['/dashboard/settings?lang=fr', undefined],
    ])
  })
})

/** A form posted as it succeeds, by the browser it returns (the one that then follows the redirect). */
type FormCase = () => Promise<{ browser: DashboardBrowser; response: Response }>
const signedInForm = (path: string, fields: Record<string, string> = {}): FormCase => async () => {
  const browser = await signedIn(ctx, 'owner@shop.example')
  return { browser, response: await browser.post(path, { csrf: await sessionCsrf(browser), ...fields }) }
}
const settingsForm = (path: string, fields: Record<string, string>) => signedInForm(`/dashboard/settings/${path}`, fields)

/** Every form post of the dashboard. */
const forms: Record<string, FormCase> = {
  'POST /dashboard/sign-in': async () => {
    const browser = testBrowser(ctx)
    return { browser, response: await postSignIn(browser, 'owner@shop.example', PASSWORD) }
  },
  'POST /dashboard/sign-out': signedInForm('/dashboard/sign-out'),
  'POST /dashboard/sign-out-everywhere': signedInForm('/dashboard/sign-out-everywhere'),
  'POST /dashboard/set-password': async () => {
    const { link } = await createDashboardUser(ctx.deps, { clientId: shop.id, email: 'new@shop.example' })
    const browser = testBrowser(ctx)
    const form = await readPage(await browser.request(`/dashboard/set-password?token=${link.token}`))
    return { browser, response: await browser.post('/dashboard/set-password', { csrf: form.csrf!, token: link.token, password: PASSWORD, confirm: PASSWORD }) }
  },
  'POST /dashboard/settings/redirect-uris/add': settingsForm('redirect-uris/add', { redirect_uri: 'https://shop.example/second' }),
  'POST /dashboard/settings/redirect-uris/remove': settingsForm('redirect-uris/remove', { redirect_uri: 'https://shop.example/second' }),
  'POST /dashboard/settings/site': settingsForm('site', { min_age: '18', home_url: 'https://shop.example/' }),
  'POST /dashboard/settings/methods': settingsForm('methods', { method_credential: 'on', method_passkey: 'on', method_age_pass: 'on', method_face: 'on' }),
  'POST /dashboard/settings/gate-hosts/add': settingsForm('gate-hosts/add', { gate_host: 'gated.example' }),
  'POST /dashboard/settings/gate-hosts/remove': settingsForm('gate-hosts/remove', { gate_host: 'https://gated.example' }),
  'POST /dashboard/settings/gate': settingsForm('gate', { gate_age: '21', gate_ttl: '86400' }),
  'POST /dashboard/settings/rotate-secret': settingsForm('rotate-secret', { overlap: '3600', password: PASSWORD }),
  // A passkey that is not saved (or not this user's) is gone as far as this user can tell: the same answer.
  'POST /dashboard/passkeys/delete': signedInForm('/dashboard/passkeys/delete', { credential_id: 'bm90LWEtc2F2ZWQtb25l' }),
}
/** The passkey ceremonies: JSON for the page's script, which follows the `redirect` of their answer (passkeys.test.ts). */
const scriptEndpoints = ['POST /dashboard/passkeys/options', 'POST /dashboard/passkeys', 'POST /dashboard/sign-in/passkey/options', 'POST /dashboard/sign-in/passkey']

describe('post/redirect/get: every dashboard form that succeeds answers 303', () => {
  test('the list below names every form route the dashboard serves', () => {
    const served = ctx.app.routes.filter((route) => route.method === 'POST' && route.path.startsWith('/dashboard')).map((route) => `${route.method} ${route.path}`)
    expect(served.filter((route) => !scriptEndpoints.includes(route)).sort()).toEqual(Object.keys(forms).sort())
  })

  test.each(Object.entries(forms))('%s', async (_route, send) => {
    const { browser, response } = await send()
    expect(response.status).toBe(303)
    const location = response.headers.get('location')!
    expect(location).toMatch(/^\/dashboard\/[a-z-]+(\?[^#]*)?$/)
    // The page it leads to is an ordinary GET a reload repeats harmlessly.
    expect((await browser.request(location)).status).toBe(200)
  })
})
