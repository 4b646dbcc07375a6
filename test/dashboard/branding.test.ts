import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { findLogoVersion } from '../../src/branding/branding.ts'
import { findClient } from '../../src/clients/registry.ts'
import { createTestContext, PUBLIC_URL, type TestContext } from '../helpers.ts'
import { manyScansJpeg } from '../images/hostile-images.ts'
import { testBrowser } from '../verification/browser.ts'
import { createUser, sessionCsrf, signedIn, type DashboardBrowser } from './dashboard.ts'

/**
 * "Your site's look" on the settings page (issue 24, item 2): each form bound to the signed-in user's client,
 * refused in words in the user's language, followed by a redirect with a notice, and checked by what the
 * hosted page then shows.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
let rival: Awaited<ReturnType<TestContext['createClient']>>
let owner: DashboardBrowser
let rivalUser: DashboardBrowser
const logged: string[] = []
const fixture = (name: string): Uint8Array<ArrayBuffer> => new Uint8Array(readFileSync(join(import.meta.dir, '..', 'branding', 'fixtures', name)))

beforeAll(async () => {
  const record = (event: string, fields?: Record<string, unknown>) => void logged.push(JSON.stringify({ event, ...fields }))
  ctx = await createTestContext({ log: { info: record, error: record } })
  shop = await ctx.createClient({ name: 'internal-shop', redirectUris: ['https://shop.example/cb'] })
  rival = await ctx.createClient({ name: 'Rival', redirectUris: ['https://rival.example/cb'] })
  await createUser(ctx, shop.id, 'owner@shop.example')
  await createUser(ctx, rival.id, 'owner@rival.example')
  owner = await signedIn(ctx, 'owner@shop.example')
  rivalUser = await signedIn(ctx, 'owner@rival.example')
}, 60_000)
afterAll(() => ctx.close())

const client = async (id: string) => (await findClient(ctx.deps.db, id))!
const alertOf = (html: string) => /<div role="alert" class="alert" id="branding-problem"><p>([^<]*)<\/p>/.exec(html)?.[1]
const noticeOf = (html: string) => /<p role="status" class="notice">([^<]*)<\/p>/.exec(html)?.[1]

async function saveLook(browser: DashboardBrowser, fields: Record<string, string>, query = '', headers: Record<string, string> = {}) {
  return browser.post(`/dashboard/settings/branding${query}`, { csrf: await sessionCsrf(browser), display_name: '', accent_colour: '', privacy_url: '', ...fields }, headers)
}

/** The upload form as a browser sends it: multipart, with its Content-Length. */
async function upload(browser: DashboardBrowser, bytes: Uint8Array<ArrayBuffer>, options: { name?: string; type?: string; csrf?: string; headers?: Record<string, string>; query?: string } = {}) {
  const form = new FormData()
  form.set('csrf', options.csrf ?? (await sessionCsrf(browser)))
  form.set('logo', new File([bytes], options.name ?? 'logo.png', { type: options.type ?? 'image/png' }))
  return browser.request(`/dashboard/settings/branding/logo${options.query ?? ''}`, { method: 'POST', body: form, headers: options.headers })
}

async function hostedPage(clientId: string): Promise<string> {
  const { response, page } = await testBrowser(ctx).open({ client_id: clientId, redirect_uri: 'https://shop.example/cb' })
  expect(response.status).toBe(200)
  return page.html
}

describe('the look’s section of the settings page', () => {
  test('shows its forms: the logo upload (PNG, JPEG or WebP only), the name, colour and privacy link, and no logo yet', async () => {
    const html = await (await owner.request('/dashboard/settings')).text()
    expect(html).toContain('<h2 id="branding-heading">Your site’s look</h2>')
    expect(html).toContain('action="/dashboard/settings/branding/logo" enctype="multipart/form-data"')
    expect(html).toContain('accept="image/png,image/jpeg,image/webp"')
    expect(html).toContain('No logo yet: the page shows your name only.')
    for (const field of ['display_name', 'accent_colour', 'privacy_url']) expect(html).toContain(`name="${field}"`)
    // Empty means the client's own name: the help says which.
    expect(html).toContain('The name the page shows your visitors. Empty: internal-shop')
    expect(html).not.toContain('branding/logo/remove')
  })

  test('saving the name, colour and link: 303 with a notice, the hosted page shows them; empty fields clear them', async () => {
    const saved = await saveLook(owner, { display_name: '  Shop Example ', accent_colour: '#14632C', privacy_url: 'https://shop.example/privacy' })
    expect([saved.status, saved.headers.get('location')]).toEqual([303, '/dashboard/settings?notice=branding_saved'])
    expect(noticeOf(await (await owner.request(saved.headers.get('location')!)).text())).toBe('Your site’s look is saved.')
    expect(await client(shop.id)).toMatchObject({ displayName: 'Shop Example', accentColour: '#14632c', privacyUrl: 'https://shop.example/privacy' })
    const page = await hostedPage(shop.id)
    expect(page).toContain('Shop Example asks you to confirm')
    expect(page).toContain(`/branding/${shop.id}/theme.css?v=14632c`)
    expect(page).toContain('href="https://shop.example/privacy" rel="noopener noreferrer"')
    // The form shows what is saved.
    const settings = await (await owner.request('/dashboard/settings')).text()
    expect(settings).toContain('value="Shop Example"')
    expect(settings).toContain('value="#14632c"')
    // Cleared: the page is the plain one again.
    expect((await saveLook(owner, {})).status).toBe(303)
    expect(await client(shop.id)).toMatchObject({ displayName: null, accentColour: null, privacyUrl: null })
    expect(await hostedPage(shop.id)).not.toContain('/branding/')
    expect(logged.some((line) => line.includes('"change":"branding_saved"') && line.includes(shop.id))).toBe(true)
  })

  test('a colour too light for white text or for links is refused with its ratio, the typed values kept, nothing saved', async () => {
    await saveLook(owner, { display_name: 'Kept' })
    const refused = await saveLook(owner, { display_name: 'Changed', accent_colour: '#767676', privacy_url: 'https://shop.example/p' })
    expect(refused.status).toBe(400)
    const html = await refused.text()
    expect(alertOf(html)).toBe('This colour is too light: white text on it, or links in it, reach only 3.97:1, and WCAG 2.2 AA needs 4.5:1. Choose a darker one.')
    expect(html).toContain('value="#767676"')
    expect(html).toContain('value="Changed"')
    expect(html).toContain('aria-describedby="accent-help branding-problem"')
    expect(await client(shop.id)).toMatchObject({ displayName: 'Kept', accentColour: null, privacyUrl: null })
  })

  test.each([
    ['a colour name', { accent_colour: 'green' }, 'The accent colour is # and six hexadecimal digits, such as #1d4ed8; empty for none.'],
    ['a name of 81 characters', { display_name: 'x'.repeat(81) }, 'The display name has 1 to 80 characters, without control characters or text-direction marks; empty for none.'],
    ['a plain-http policy for a live site', { privacy_url: 'http://shop.example/privacy' }, 'The privacy policy must be an absolute http(s) address without a #fragment, a user name or password, spaces or control characters; a live site’s must use https, except on your own machine (localhost).'],
  ] as const)('%s is refused in words', async (_, fields, message) => {
    const refused = await saveLook(owner, fields)
    expect([refused.status, alertOf(await refused.text())]).toEqual([400, message])
  })

  test('refusals speak the user’s language', async () => {
    // Red's lowest contrast is as a link in an alert: (0.8681 + 0.05) / (0.2126 + 0.05) = 3.496…
    const refused = await saveLook(owner, { accent_colour: '#ff0000' }, '?lang=de')
    expect(alertOf(await refused.text())).toBe('Diese Farbe ist zu hell: Weiße Schrift darauf oder Links in dieser Farbe erreichen nur 3.49:1, WCAG 2.2 AA verlangt 4.5:1. Wählen Sie eine dunklere.')
    const gif = await upload(owner, fixture('tiny.gif'), { query: '?lang=fr', name: 'logo.png' })
    expect(alertOf(await gif.text())).toBe('Ce fichier n’est pas une image PNG, JPEG ou WebP. SVG, GIF et les autres formats ne sont pas acceptés.')
  })
})

describe('the logo', () => {
  test('an upload is stored as our PNG, shown on the settings page and the hosted page; removing it takes it away', async () => {
    const response = await upload(owner, fixture('alpha-64x32.webp'), { name: 'logo.webp', type: 'image/webp' })
    expect([response.status, response.headers.get('location')]).toEqual([303, '/dashboard/settings?notice=logo_saved'])
    const version = (await findLogoVersion(ctx.deps.db, shop.id))!
    expect(version).toMatchObject({ width: 64, height: 32 })
    const src = `/branding/${shop.id}/logo.png?v=${version.sha256.slice(0, 16)}`
    const settings = await (await owner.request('/dashboard/settings?notice=logo_saved')).text()
    expect(noticeOf(settings)).toBe('Your logo is saved.')
    expect(settings).toContain(`<img src="${src}" width="64" height="32" alt="Your logo as the page shows it"/>`)
    expect(await hostedPage(shop.id)).toContain(`<img src="${src}"`)
    expect((await ctx.request(src)).headers.get('content-type')).toBe('image/png')

    const removed = await owner.post('/dashboard/settings/branding/logo/remove', { csrf: await sessionCsrf(owner) })
    expect([removed.status, removed.headers.get('location')]).toEqual([303, '/dashboard/settings?notice=logo_removed'])
    expect(await findLogoVersion(ctx.deps.db, shop.id)).toBeUndefined()
    expect(await hostedPage(shop.id)).not.toContain('/branding/')
  })

  test('what the file is decides, not its name or type: a GIF named logo.png, an SVG, an empty file are refused in words', async () => {
    const cases: [Uint8Array<ArrayBuffer>, string][] = [
      [fixture('tiny.gif'), 'This file is not a PNG, JPEG or WebP image. SVG, GIF and other formats are not accepted.'],
      [new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'This file is not a PNG, JPEG or WebP image. SVG, GIF and other formats are not accepted.'],
      [fixture('animated.webp'), 'This image is animated. A logo is one still image.'],
      [new Uint8Array(0), 'Choose a file to upload.'],
    ]
    for (const [bytes, message] of cases) {
      const refused = await upload(owner, bytes)
      expect([refused.status, alertOf(await refused.text())]).toEqual([400, message])
    }
    expect(await findLogoVersion(ctx.deps.db, shop.id)).toBeUndefined()
  })

  test('a file over 1 MiB is refused in words before it is read, and one whose header names too many pixels before it is decoded', async () => {
    const large = await upload(owner, new Uint8Array(1024 * 1024 + 70 * 1024))
    expect([large.status, alertOf(await large.text())]).toEqual([400, 'This file is larger than 1 MiB. Save the logo smaller and try again.'])
    // Just under the form's bound, just over the logo's: the same words.
    const over = await upload(owner, new Uint8Array(1024 * 1024 + 1))
    expect([over.status, alertOf(await over.text())]).toEqual([400, 'This file is larger than 1 MiB. Save the logo smaller and try again.'])
    const ihdr = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0x27, 0x10, 0, 0, 0x27, 0x10, 8, 6, 0, 0, 0])
    const huge = await upload(owner, ihdr)
    expect([huge.status, alertOf(await huge.text())]).toEqual([400, 'This image is too large: at most 2048 pixels a side and 2 million pixels in all. Scale it down and try again.'])
  })
})

describe('a logo costs bounded work (issue 30)', () => {
  test('the attack round’s JPEG (2048 × 1024, 12,000 empty progressive scans) is refused in words at once, and the server answers meanwhile', async () => {
    const hostile = manyScansJpeg({ width: 2048, height: 1024, scans: 12_000 })
    const csrf = await sessionCsrf(owner)
    const started = performance.now()
    let settled = false
    const uploading = upload(owner, hostile, { name: 'logo.jpg', type: 'image/jpeg', csrf }).then((response) => {
      settled = true
      return { response, ms: performance.now() - started }
    })
    // The key set falls due every 10 ms while the upload is read, each timed from when it fell due, as a client
    // whose request arrived then sees it: an event loop held by the decoder shows as a slow one.
    let slowest = 0
    for (let due = performance.now(); !settled; due += 10) {
      await Bun.sleep(Math.max(0, due - performance.now()))
      expect((await ctx.request('/api/.well-known/jwks.json')).status).toBe(200)
      slowest = Math.max(slowest, performance.now() - due)
    }
    const { response, ms } = await uploading
    console.log(`hostile logo refused in ${ms.toFixed(0)} ms; the slowest key set answer meanwhile ${slowest.toFixed(0)} ms`)
    expect([response.status, alertOf(await response.text())]).toEqual([
      400,
      'This image takes too much work to read (a JPEG of very many progressive scans, or compressed data far larger than the picture). Save it again as a PNG or an ordinary JPEG and retry.',
    ])
    // Generous bounds for a busy machine: before, jpeg-js held the event loop for seconds, the key set with it.
    expect(ms).toBeLessThan(2_000)
    expect(slowest).toBeLessThan(1_000)
    expect(await findLogoVersion(ctx.deps.db, shop.id)).toBeUndefined()
  })
})

describe('who may change the look', () => {
  test('each user changes their own client’s look only', async () => {
    expect((await saveLook(rivalUser, { display_name: 'Rival Ltd' })).status).toBe(303)
    expect((await upload(rivalUser, fixture('logo-32x16.png'))).status).toBe(303)
    expect((await client(rival.id)).displayName).toBe('Rival Ltd')
    expect((await client(shop.id)).displayName).not.toBe('Rival Ltd')
    expect(await findLogoVersion(ctx.deps.db, shop.id)).toBeUndefined()
    expect(await findLogoVersion(ctx.deps.db, rival.id)).toBeDefined()
    // Removing "a" logo removes one's own, never the other client's.
    await owner.post('/dashboard/settings/branding/logo/remove', { csrf: await sessionCsrf(owner) })
    expect(await findLogoVersion(ctx.deps.db, rival.id)).toBeDefined()
  })

  test('a wrong or another session’s CSRF token is 403, a foreign origin 403 before the upload is read: nothing changes', async () => {
    const before = await client(shop.id)
    const wrong = await owner.post('/dashboard/settings/branding', { csrf: 'wrong', display_name: 'Forged', accent_colour: '', privacy_url: '' })
    expect(wrong.status).toBe(403)
    const others = await owner.post('/dashboard/settings/branding', { csrf: await sessionCsrf(rivalUser), display_name: 'Forged', accent_colour: '', privacy_url: '' })
    expect(others.status).toBe(403)
    expect((await saveLook(owner, { display_name: 'Forged' }, '', { origin: 'https://evil.example' })).status).toBe(403)
    expect((await saveLook(owner, { display_name: 'Forged' }, '', { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    expect((await upload(owner, fixture('logo-32x16.png'), { csrf: 'wrong' })).status).toBe(403)
    expect((await upload(owner, fixture('logo-32x16.png'), { headers: { origin: 'https://evil.example' } })).status).toBe(403)
    // Refused from its headers: even a body too large for the form is not read.
    expect((await upload(owner, new Uint8Array(2 * 1024 * 1024), { headers: { origin: 'https://evil.example' } })).status).toBe(403)
    expect((await owner.post('/dashboard/settings/branding/logo/remove', { csrf: 'wrong' })).status).toBe(403)
    expect(await client(shop.id)).toEqual(before)
    expect(await findLogoVersion(ctx.deps.db, shop.id)).toBeUndefined()
  })

  test('signed out, every form sends the browser to sign in and changes nothing', async () => {
    const stranger = testBrowser(ctx)
    const look = await stranger.post('/dashboard/settings/branding', { csrf: 'x', display_name: 'X', accent_colour: '', privacy_url: '' })
    expect([look.status, look.headers.get('location')]).toEqual([303, '/dashboard/sign-in'])
    const form = new FormData()
    form.set('csrf', 'x')
    form.set('logo', new File([fixture('logo-32x16.png')], 'logo.png'))
    const logo = await stranger.request('/dashboard/settings/branding/logo', { method: 'POST', body: form, headers: { origin: PUBLIC_URL } })
    expect([logo.status, logo.headers.get('location')]).toEqual([303, '/dashboard/sign-in'])
    const remove = await stranger.post('/dashboard/settings/branding/logo/remove', { csrf: 'x' })
    expect([remove.status, remove.headers.get('location')]).toEqual([303, '/dashboard/sign-in'])
  })

  test('an upload that is not the form (no file, two files, a JSON body) is a 400 page, never a 500', async () => {
    const csrf = await sessionCsrf(owner)
    const noFile = new FormData()
    noFile.set('csrf', csrf)
    const two = new FormData()
    two.set('csrf', csrf)
    two.append('logo', new File([fixture('logo-32x16.png')], 'a.png'))
    two.append('logo', new File([fixture('logo-32x16.png')], 'b.png'))
    for (const body of [noFile, two]) expect((await owner.request('/dashboard/settings/branding/logo', { method: 'POST', body })).status).toBe(400)
    const json = await owner.request('/dashboard/settings/branding/logo', { method: 'POST', body: JSON.stringify({ csrf }), headers: { 'content-type': 'application/json' } })
    expect(json.status).toBe(400)
  })
})
