import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import { BrandingError, findClientLogo, findLogoVersion, removeClientLogo, setClientLogo, updateBranding } from '../../src/branding/branding.ts'
import { contrastRatio } from '../../src/branding/contrast.ts'
import { withAbsoluteFiles } from '../../src/cli/run.ts'
import { runCommand } from '../../src/cli/run.ts'
import { deleteClient } from '../../src/clients/delete-client.ts'
import { findClient } from '../../src/clients/registry.ts'
import { createTestContext, type TestContext } from '../helpers.ts'
import { manyScansJpeg } from '../images/hostile-images.ts'
import { backLink, readPage, testBrowser } from '../verification/browser.ts'

/**
 * A site's look on the hosted page (issue 24, item 2): what the page shows for a branded client, that an
 * unbranded one's page is exactly what it was, the logo and stylesheet routes' answers, the rules a value must
 * keep (in the service, so for the dashboard and the CLI alike), and the CLI's flags.
 */
let ctx: TestContext
const fixture = (name: string) => new Uint8Array(readFileSync(join(import.meta.dir, 'fixtures', name)))
const dir = mkdtempSync(join(tmpdir(), 'ofage-branding-'))

beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(async () => {
  await ctx.close()
  rmSync(dir, { recursive: true, force: true })
})

async function openPage(clientId: string) {
  const { response, page } = await testBrowser(ctx).open({ client_id: clientId, state: 'st' })
  expect(response.status).toBe(200)
  return page.html
}

/** The page without what differs between two visits: the session's path and its CSRF token. */
const stable = (html: string) =>
  html
    .replace(/\/s\/[\w-]+/g, '/s/SESSION')
    .replace(/name="csrf" value="[^"]+"/g, 'name="csrf" value="TOKEN"')
    .replace(/data-csrf="[^"]+"/g, 'data-csrf="TOKEN"')
const stylesheets = (html: string) => [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((match) => match[1]!.replaceAll('&amp;', '&'))
const logoSrc = (html: string) => /<p class="brand-logo"><img src="([^"]+)"/.exec(html)?.[1]?.replaceAll('&amp;', '&')

async function cli(...argv: string[]) {
  const out: string[] = []
  const status = await runCommand({ deps: ctx.deps, close: async () => {} }, argv, { out: (text) => out.push(text), err: (text) => out.push(text) })
  return { status, text: out.join('\n') }
}

describe('the hosted page', () => {
  test('a site that set nothing: no trace of branding, and the page is the same before and after a look was set and cleared', async () => {
    const plain = await ctx.createClient({ name: 'Plain shop', sandbox: true })
    const before = await openPage(plain.id)
    expect(stylesheets(before)).toEqual(['/assets/ofage.css'])
    for (const trace of ['/branding/', 'brand-logo', '<img', 'noopener']) expect(before).not.toContain(trace)
    await updateBranding(ctx.deps.db, plain.id, { displayName: 'Other name', accentColour: '#14632c', privacyUrl: 'https://plain.example/privacy' })
    await setClientLogo(ctx.deps, plain.id, fixture('logo-32x16.png'))
    expect(await openPage(plain.id)).toContain('/branding/')
    await updateBranding(ctx.deps.db, plain.id, { displayName: null, accentColour: null, privacyUrl: null })
    await removeClientLogo(ctx.deps.db, plain.id)
    expect(stable(await openPage(plain.id))).toBe(stable(before))
  })

  test('a branded site: its display name wherever the page names it, its logo, its colour’s stylesheet and its privacy policy', async () => {
    const shop = await ctx.createClient({ name: 'internal-shop-7', sandbox: true })
    await updateBranding(ctx.deps.db, shop.id, { displayName: 'Wine & <Co> "1"', accentColour: '#14632C', privacyUrl: 'https://wine.example/privacy?lang=en' })
    const logo = (await setClientLogo(ctx.deps, shop.id, fixture('wide-1200x300.jpg')))!
    const html = await openPage(shop.id)
    expect(html).not.toContain('internal-shop-7')
    const name = 'Wine &amp; &lt;Co&gt; &quot;1&quot;'
    expect(html).toContain(`<title>Age check · ${name}</title>`)
    expect(html).toContain(`${name} asks you to confirm that you are 18 or older.`)
    expect(html).toContain(`We check only that you are old enough. ${name} gets a yes`)
    // The logo, before the heading, at its stored size, named for a screen reader. In a quoted attribute only
    // the quote needs escaping (@kitajs/html escapes it); "<" and "& " are text there.
    expect(html).toContain(`<p class="brand-logo"><img src="/branding/${shop.id}/logo.png?v=${logo.sha256.slice(0, 16)}" width="1024" height="256" alt="Wine & <Co> &#34;1&#34; logo"/></p><h1>`)
    expect(html.replace(/ alt="[^"]*"/, '')).not.toContain('<Co>')
    // Ours first, then the site's colour, which must win.
    expect(stylesheets(html)).toEqual(['/assets/ofage.css', `/branding/${shop.id}/theme.css?v=14632c`])
    // The privacy policy beside the privacy notice, opening no window that could reach back to the page.
    const privacy = html.slice(html.indexOf('<section class="privacy"'))
    expect(privacy).toContain(`<a href="https://wine.example/privacy?lang=en" rel="noopener noreferrer">${name}’s privacy policy</a>`)
    // In German too: the alt text and the link are the catalog's.
    const { page } = await testBrowser(ctx).open({ client_id: shop.id, lang: 'de' })
    expect(page.html).toContain('alt="Logo von Wine & <Co> &#34;1&#34;"')
    expect(page.html).toContain(`>Datenschutzerklärung von ${name}</a>`)
  })

  test('a failed check’s way back names the display name too', async () => {
    const shop = await ctx.createClient({ name: 'internal-name', sandbox: true })
    await updateBranding(ctx.deps.db, shop.id, { displayName: 'Cellar Door' })
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: shop.id })
    const failed = await readPage(await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '10', method_class: 'age_only' }))
    expect(backLink(failed.html)?.text).toBe('Back to Cellar Door')
    expect(failed.html).not.toContain('internal-name')
  })
})

describe('the logo and stylesheet routes', () => {
  test('the logo is the stored PNG from our origin: image/png, nosniff, its own CSP, a year’s cache for its current version only', async () => {
    const shop = await ctx.createClient({ sandbox: true })
    await setClientLogo(ctx.deps, shop.id, fixture('logo-32x16.webp'))
    const src = logoSrc(await openPage(shop.id))!
    const response = await ctx.request(src)
    expect(response.status).toBe(200)
    expect(Object.fromEntries(['content-type', 'x-content-type-options', 'content-security-policy', 'cache-control', 'cross-origin-resource-policy'].map((name) => [name, response.headers.get(name)]))).toEqual({
      'content-type': 'image/png',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'",
      'cache-control': 'public, max-age=31536000, immutable',
      'cross-origin-resource-policy': 'same-origin',
    })
    const bytes = new Uint8Array(await response.arrayBuffer())
    expect(bytes).toEqual((await findClientLogo(ctx.deps.db, shop.id))!.png)
    expect(PNG.sync.read(Buffer.from(bytes)).width).toBe(32)
    // An older page's version, or none: the current logo, never kept as if it could not change.
    for (const stale of [`/branding/${shop.id}/logo.png?v=0000000000000000`, `/branding/${shop.id}/logo.png`]) {
      const again = await ctx.request(stale)
      expect([again.status, again.headers.get('cache-control')]).toEqual([200, 'no-cache'])
    }
  })

  test('a new logo is a new URL, and a removed one is gone', async () => {
    const shop = await ctx.createClient({ sandbox: true })
    await setClientLogo(ctx.deps, shop.id, fixture('logo-32x16.png'))
    const first = logoSrc(await openPage(shop.id))
    await setClientLogo(ctx.deps, shop.id, fixture('alpha-64x32.webp'))
    const second = logoSrc(await openPage(shop.id))
    expect(second).not.toBe(first)
    expect((await findLogoVersion(ctx.deps.db, shop.id))?.width).toBe(64)
    expect(await removeClientLogo(ctx.deps.db, shop.id)).toBe(true)
    expect((await ctx.request(second!)).status).toBe(404)
    expect(logoSrc(await openPage(shop.id))).toBeUndefined()
  })

  test('the stylesheet paints our blue’s places in the site’s colour, and its hover darker; text/css, nosniff', async () => {
    const shop = await ctx.createClient({ sandbox: true })
    await updateBranding(ctx.deps.db, shop.id, { accentColour: '#14632c' })
    const response = await ctx.request(`/branding/${shop.id}/theme.css?v=14632c`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    const css = await response.text()
    expect(css).toContain('a, button.link, button.secondary, nav.languages details summary, .languages a { color: #14632c; }')
    expect(css).toContain('button:not(.link, .secondary), a.button { background: #14632c; color: #fff; }')
    expect(css).toContain('button:not(.link, .secondary):hover, a.button:hover { background: #115425; }')
    // The passkey's outlined buttons stay outlined, in the site's colour on white (issue 24).
    expect(css).toContain('button.secondary, button.secondary:hover { border-color: #14632c; background: #fff; }')
    // Every blue of our stylesheet that stands for the accent has its counterpart here.
    const ours = readFileSync('public/ofage.css', 'utf8')
    expect(ours).toContain('a { color: #1d4ed8; }')
    expect(ours).toContain('.languages a { color: #1d4ed8; }')
  })

  test('no such client, no logo or colour, or an id no client can have: 404, never a 500', async () => {
    const shop = await ctx.createClient({ sandbox: true })
    for (const path of [`/branding/${shop.id}/logo.png`, `/branding/${shop.id}/theme.css`, '/branding/cl_nobody/logo.png', '/branding/cl_nobody/theme.css', '/branding/a%00b/logo.png', '/branding/a%00b/theme.css']) {
      expect([path, (await ctx.request(path)).status]).toEqual([path, 404])
    }
    // Refused before any lookup: an id longer than any client's, a malformed escape.
    for (const path of [`/branding/${'x'.repeat(300)}/logo.png`, '/branding/%ff%/theme.css']) expect([path, (await ctx.request(path)).status]).toEqual([path, 400])
  })
})

describe('the rules of a site’s look', () => {
  test('an accent colour under 4.5:1 where it meets text is refused with its ratio, and nothing changes', async () => {
    const shop = await ctx.createClient({ redirectUris: ['https://shop.example/cb'] })
    await updateBranding(ctx.deps.db, shop.id, { displayName: 'Kept', accentColour: '#1d4ed8' })
    const refused = await updateBranding(ctx.deps.db, shop.id, { displayName: 'Changed', accentColour: '#767676' }).catch((error) => error)
    expect(refused).toBeInstanceOf(BrandingError)
    expect(refused).toMatchObject({ code: 'invalid_request', problem: 'accent_contrast', ratio: contrastRatio('#767676', '#fdecea') })
    expect(refused.description).toContain('3.97:1')
    expect(await findClient(ctx.deps.db, shop.id)).toMatchObject({ displayName: 'Kept', accentColour: '#1d4ed8' })
  })

  test.each([
    ['a colour name', 'accent_colour', { accentColour: 'green' }],
    ['CSS after a colour', 'accent_colour', { accentColour: '#1d4ed8;} body {display:none' }],
    ['a blank display name', 'display_name', { displayName: '   ' }],
    ['a display name of 81 characters', 'display_name', { displayName: 'x'.repeat(81) }],
    ['a right-to-left override in the name', 'display_name', { displayName: 'Shop\u202eeniW' }],
    ['a control character in the name', 'display_name', { displayName: 'Shop\u0007' }],
    ['a javascript: link', 'privacy_url', { privacyUrl: 'javascript:alert(1)' }],
    ['a fragment', 'privacy_url', { privacyUrl: 'https://shop.example/privacy#top' }],
    ['credentials in the link', 'privacy_url', { privacyUrl: 'https://user:pw@shop.example/' }],
    ['plain http for a live site', 'privacy_url', { privacyUrl: 'http://shop.example/privacy' }],
    ['a link of 2049 characters', 'privacy_url', { privacyUrl: `https://shop.example/${'p'.repeat(2048)}`.slice(0, 2049) }],
  ] as const)('%s is refused (%s)', async (_, problem, changes) => {
    const live = await ctx.createClient({ redirectUris: ['https://shop.example/cb'] })
    expect(await updateBranding(ctx.deps.db, live.id, changes).catch((error) => error)).toMatchObject({ problem })
  })

  test('a display name of 80 characters, emoji counted as one each, is taken; a sandbox site may link a plain-http policy', async () => {
    const sandbox = await ctx.createClient({ sandbox: true })
    const name = `${'é'.repeat(78)}🍷🍷`
    expect(await updateBranding(ctx.deps.db, sandbox.id, { displayName: ` ${name} `, privacyUrl: 'http://shop.test/privacy' })).toMatchObject({ displayName: name, privacyUrl: 'http://shop.test/privacy' })
  })

  test('no change at all changes nothing; an unknown client is undefined', async () => {
    const shop = await ctx.createClient({ sandbox: true })
    await updateBranding(ctx.deps.db, shop.id, { displayName: 'Same' })
    expect(await updateBranding(ctx.deps.db, shop.id, {})).toMatchObject({ id: shop.id, displayName: 'Same' })
    expect(await updateBranding(ctx.deps.db, 'cl_nobody', { displayName: 'X' })).toBeUndefined()
    expect(await setClientLogo(ctx.deps, 'cl_nobody', fixture('logo-32x16.png'))).toBeUndefined()
  })

  test('deleting a client deletes its logo with it', async () => {
    const shop = await ctx.createClient({ sandbox: true })
    await setClientLogo(ctx.deps, shop.id, fixture('logo-32x16.png'))
    expect(await deleteClient(ctx.deps.db, shop.id, { now: ctx.clock.now() })).toEqual({ outcome: 'deleted', auditRows: 0 })
    expect(await findClientLogo(ctx.deps.db, shop.id)).toBeUndefined()
  })
})

describe('ofage clients update: the look from the command line', () => {
  test('--display-name, --accent-colour, --privacy-url and --logo set it, show says so, and none clears each', async () => {
    const shop = await ctx.createClient({ redirectUris: ['https://shop.example/cb'] })
    writeFileSync(join(dir, 'logo.jpg'), fixture('logo-32x16.jpg'))
    const set = await cli('clients', 'update', shop.id, '--display-name', 'Shop Example', '--accent-colour', '#14632C', '--privacy-url', 'https://shop.example/privacy', '--logo', join(dir, 'logo.jpg'), '--json')
    expect(set.status).toBe(0)
    const shown = JSON.parse(set.text)
    expect(shown).toMatchObject({ display_name: 'Shop Example', accent_colour: '#14632c', privacy_url: 'https://shop.example/privacy', logo: { width: 32, height: 16 } })
    expect(shown.logo.sha256).toBe((await findLogoVersion(ctx.deps.db, shop.id))!.sha256)
    expect((await cli('clients', 'show', shop.id)).text).toContain(`logo: 32×16 PNG, sha256 ${shown.logo.sha256}`)
    // list --json says the same as show --json.
    expect(JSON.parse((await cli('clients', 'list', '--json')).text).find((c: { client_id: string }) => c.client_id === shop.id)).toEqual(shown)
    const cleared = await cli('clients', 'update', shop.id, '--display-name', 'none', '--accent-colour', 'none', '--privacy-url', 'none', '--logo', 'none', '--json')
    expect(JSON.parse(cleared.text)).toMatchObject({ display_name: null, accent_colour: null, privacy_url: null, logo: null })
    expect((await cli('clients', 'show', shop.id)).text).toContain('logo: none')
  })

  test('a refused colour, a GIF or a missing file: exit 1, the reason in one line, nothing changed', async () => {
    const shop = await ctx.createClient({ redirectUris: ['https://shop.example/cb'] })
    const light = await cli('clients', 'update', shop.id, '--accent-colour', '#ff0000')
    expect(light).toEqual({ status: 1, text: expect.stringContaining('WCAG 2.2 AA needs 4.5:1') })
    writeFileSync(join(dir, 'logo.png'), fixture('tiny.gif'))
    expect(await cli('clients', 'update', shop.id, '--logo', join(dir, 'logo.png'))).toEqual({ status: 1, text: expect.stringContaining('not a PNG, JPEG or WebP image (it is GIF)') })
    expect(await cli('clients', 'update', shop.id, '--logo', join(dir, 'nowhere.png'))).toEqual({ status: 1, text: expect.stringContaining('cannot be read') })
    writeFileSync(join(dir, 'huge.png'), new Uint8Array(1024 * 1024 + 1))
    expect(await cli('clients', 'update', shop.id, '--logo', join(dir, 'huge.png'))).toEqual({ status: 1, text: expect.stringContaining('1048577 bytes') })
    expect(await findClient(ctx.deps.db, shop.id)).toMatchObject({ accentColour: null })
    expect(await findLogoVersion(ctx.deps.db, shop.id)).toBeUndefined()
  })

  test('the attack round’s JPEG of 12,000 progressive scans: exit 1 at once, the scan budget in one line, nothing changed (issue 30)', async () => {
    const shop = await ctx.createClient({ redirectUris: ['https://shop.example/cb'] })
    writeFileSync(join(dir, 'scans.jpg'), manyScansJpeg({ width: 2048, height: 1024, scans: 12_000 }))
    const started = performance.now()
    const refused = await cli('clients', 'update', shop.id, '--logo', join(dir, 'scans.jpg'))
    expect(refused).toEqual({ status: 1, text: expect.stringContaining('the logo is refused: the JPEG has more than 64 scans') })
    // Before, jpeg-js decoded all 12,000 scans and took the file: seconds, then exit 0.
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(await findLogoVersion(ctx.deps.db, shop.id)).toBeUndefined()
  })

  test('a command sent to the running server names the logo by its absolute path: the server reads it from elsewhere', () => {
    const cwd = process.cwd()
    expect(withAbsoluteFiles(['clients', 'update', 'cl_x', '--logo', 'art/logo.png', '--name', 'logo.png'])).toEqual(['clients', 'update', 'cl_x', '--logo', join(cwd, 'art/logo.png'), '--name', 'logo.png'])
    expect(withAbsoluteFiles(['clients', 'update', 'cl_x', '--logo=art/logo.png'])).toEqual(['clients', 'update', 'cl_x', `--logo=${join(cwd, 'art/logo.png')}`])
    expect(withAbsoluteFiles(['clients', 'update', 'cl_x', '--logo', 'none'])).toEqual(['clients', 'update', 'cl_x', '--logo', 'none'])
  })
})
