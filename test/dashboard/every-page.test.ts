import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createDashboardUser } from '../../src/dashboard/users.ts'
import { addWebhookEndpoint } from '../../src/webhooks/endpoints.ts'
import { eq } from 'drizzle-orm'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { webhookDeliveries } from '../../src/db/schema.ts'
import { createTestContext, freePort, type TestContext } from '../helpers.ts'
import { readPage, testBrowser } from '../verification/browser.ts'
import { createUser, PASSWORD, postSignIn, sessionCsrf, signedIn, type DashboardBrowser } from './dashboard.ts'

/**
 * What every dashboard page and form share (issue 24): the navigation marks the page shown, and every form
 * that succeeds answers 303 to a page (post/redirect/get), so that a reload never sends a form again.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
let transactionId: string
let endpointId: string

beforeAll(async () => {
  // One account signs in for every case here: no sign-in limit in the way. "Forgot password?" needs an SMTP
  // server to offer its form; nothing listens on this one, so the email it sends after answering just fails.
  const smtp = `smtp://127.0.0.1:${await freePort()}`
  ctx = await createTestContext({ env: { RATE_LIMIT_SIGNIN_ACCOUNT: '1000', RATE_LIMIT_SIGNIN_ADDRESS: '1000', SMTP_URL: smtp, SMTP_FROM: 'ofage <noreply@ofage.test>' } })
  shop = await ctx.createClient({ name: 'Shop' })
  transactionId = (await ctx.issueCode({ clientId: shop.id })).transactionId
  await createUser(ctx, shop.id, 'owner@shop.example')
  endpointId = (await addWebhookEndpoint(ctx.deps, shop.id, { url: 'https://hooks.shop.example/listed' })).id
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
    ['/dashboard/webhooks', { '/dashboard/webhooks': 'page' }],
    ['/dashboard/webhooks/{endpoint}', { '/dashboard/webhooks': 'true' }],
    ['/dashboard/settings', { '/dashboard/settings': 'page' }],
    ['/dashboard/sign-out-everywhere', {}],
  ] as const)('%s', async (path, current) => {
    const browser = await signedIn(ctx, 'owner@shop.example')
    const response = await browser.request(path.replace('{transaction}', transactionId).replace('{endpoint}', endpointId))
    expect(response.status).toBe(200)
    const links = navigation(await response.text())
    expect(links.map(([href]) => href)).toEqual(['/dashboard/audit', '/dashboard/usage', '/dashboard/webhooks', '/dashboard/settings'])
    expect(Object.fromEntries(links.filter(([, mark]) => mark))).toEqual(current)
  })

  test('in another language the links keep it, and the mark', async () => {
    const browser = await signedIn(ctx, 'owner@shop.example')
    const links = navigation(await (await browser.request('/dashboard/usage?lang=fr')).text())
    expect(links).toEqual([
      ['/dashboard/audit?lang=fr', undefined],
      ['/dashboard/usage?lang=fr', 'page'],
      ['/dashboard/webhooks?lang=fr', undefined],
      ['/dashboard/settings?lang=fr', undefined],
    ])
  })
})

/** A form posted as it succeeds, by the browser it returns (the one that then follows the redirect). */
type FormCase = () => Promise<{ browser: DashboardBrowser; response: Response }>
const signedInForm = (path: string, fields: Record<string, string> = {}): FormCase => async () => {
  const browser = await signedIn(ctx, 'owner@shop.example')
  const values = Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, value.replace('{endpoint}', endpointId)]))
  return { browser, response: await browser.post(path, { csrf: await sessionCsrf(browser), ...values }) }
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
  'POST /dashboard/forgot-password': async () => {
    const browser = testBrowser(ctx)
    const form = await readPage(await browser.request('/dashboard/forgot-password'))
    return { browser, response: await browser.post('/dashboard/forgot-password', { csrf: form.csrf!, email: 'owner@shop.example' }) }
  },
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
  'POST /dashboard/settings/branding': settingsForm('branding', { display_name: 'Shop & Co', accent_colour: '#0b6e4f', privacy_url: 'https://shop.example/privacy' }),
  'POST /dashboard/settings/branding/logo': async () => {
    const browser = await signedIn(ctx, 'owner@shop.example')
    const form = new FormData()
    form.set('csrf', await sessionCsrf(browser))
    form.set('logo', new File([readFileSync(join(import.meta.dir, '..', 'branding', 'fixtures', 'logo-32x16.png'))], 'logo.png', { type: 'image/png' }))
    return { browser, response: await browser.request('/dashboard/settings/branding/logo', { method: 'POST', body: form }) }
  },
  'POST /dashboard/settings/branding/logo/remove': settingsForm('branding/logo/remove', {}),
  'POST /dashboard/webhooks/add': signedInForm('/dashboard/webhooks/add', { url: 'https://hooks.shop.example/added', 'event_verification.approved': 'on' }),
  'POST /dashboard/webhooks/test': signedInForm('/dashboard/webhooks/test', { endpoint_id: '{endpoint}' }),
  'POST /dashboard/webhooks/replay': async () => {
    // A delivery the worker gave up on: what the replay button is for.
    const [delivery] = await ctx.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId))
    await ctx.deps.db.update(webhookDeliveries).set({ deliveredAt: null, deadAt: ctx.clock.now() }).where(eq(webhookDeliveries.id, delivery!.id))
    return signedInForm('/dashboard/webhooks/replay', { delivery_id: delivery!.id })()
  },
  'POST /dashboard/webhooks/remove': signedInForm('/dashboard/webhooks/remove', { endpoint_id: '{endpoint}' }),
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
    expect(location).toMatch(/^\/dashboard\/[A-Za-z0-9_/-]+(\?[^#]*)?$/)
    // The page it leads to is an ordinary GET a reload repeats harmlessly.
    expect((await browser.request(location)).status).toBe(200)
  })
})
