import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { siteHomeUrl } from '../../src/clients/model.ts'
import { createTestContext, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { backLink, readPage, testBrowser } from './browser.ts'

/**
 * Every dead end has a way out (DESIGN.md): a failed check and the too-many-attempts page link back to
 * the site, at its registered home address or the origin of the session's redirect URI, never at an
 * address the request brought.
 */
let ctx: TestContext

beforeAll(async () => {
  ctx = await createTestContext()
})
afterAll(() => ctx.close())

async function failOnce(clientId: string, query: Record<string, string> = {}, extraFields: Record<string, string> = {}) {
  const browser = testBrowser(ctx)
  const { page } = await browser.open({ client_id: clientId, state: 'st-secret', ...query })
  const failed = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '10', method_class: 'age_only', ...extraFields })
  expect(failed.status).toBe(200)
  return { browser, page, failed: await readPage(failed) }
}

describe('the way back to the site', () => {
  test('siteHomeUrl: the home address when registered, else the origin of the redirect URI', () => {
    expect(siteHomeUrl({ homeUrl: null }, 'https://shop.example/cb?x=1')).toBe('https://shop.example/')
    expect(siteHomeUrl({ homeUrl: null }, 'http://127.0.0.1:8080/age/cb')).toBe('http://127.0.0.1:8080/')
    expect(siteHomeUrl({ homeUrl: 'https://www.shop.example/age' }, 'https://shop.example/cb')).toBe('https://www.shop.example/age')
  })

  test('a fresh page offers no way back: it is no dead end', async () => {
    const client = await ctx.createClient({ sandbox: true })
    const { page } = await testBrowser(ctx).open({ client_id: client.id })
    expect(backLink(page.html)).toBeUndefined()
  })

  test('a failed check links back to the origin of the redirect URI, without code or state', async () => {
    const client = await ctx.createClient({ name: 'Wine <shop>', sandbox: true })
    const { failed } = await failOnce(client.id)
    expect(failed.html).toContain('4 attempts left')
    expect(backLink(failed.html)).toEqual({ href: 'https://shop.example/', text: 'Back to Wine &lt;shop&gt;' })
    expect(failed.html).not.toContain('st-secret')
  })

  test("a failed check links to the client's home address when it has one", async () => {
    const client = await ctx.createClient({ sandbox: true, homeUrl: 'https://www.shop.example/age?from=check&step=1' })
    const { failed } = await failOnce(client.id)
    expect(backLink(failed.html)?.href).toBe('https://www.shop.example/age?from=check&step=1')
  })

  test('the origin is the one of the redirect URI this request used', async () => {
    const client = await ctx.createClient({ sandbox: true, redirectUris: [REDIRECT_URI, 'https://other.example:8443/age/cb'] })
    const { failed } = await failOnce(client.id, { redirect_uri: 'https://other.example:8443/age/cb' })
    expect(backLink(failed.html)?.href).toBe('https://other.example:8443/')
  })

  test('an incomplete form is a failure alert too, with the way back', async () => {
    const client = await ctx.createClient({ sandbox: true })
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: client.id })
    const refused = await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: 'old', method_class: 'age_only' })
    expect(refused.status).toBe(400)
    expect(backLink(await refused.text())?.href).toBe('https://shop.example/')
  })

  test('the too-many-attempts page links back, after the last post and on reload', async () => {
    const client = await ctx.createClient({ sandbox: true, homeUrl: 'https://shop.example/welcome' })
    const browser = testBrowser(ctx)
    let { page } = await browser.open({ client_id: client.id })
    const action = page.action('/methods/sandbox')
    const csrf = page.csrf!
    for (let i = 0; i < 5; i++) page = await readPage(await browser.post(action, { csrf, age: '10', method_class: 'age_only' }))
    expect(page.html).toContain('Too many attempts')
    expect(backLink(page.html)?.href).toBe('https://shop.example/welcome')
    const reloaded = await readPage(await browser.request(action.split('/methods')[0]!))
    expect(reloaded.html).toContain('Too many attempts')
    expect(backLink(reloaded.html)?.href).toBe('https://shop.example/welcome')
  })

  test('a client that accepts only a way this deployment cannot offer (a digital ID without a trust list) is told so plainly, with the way back', async () => {
    const client = await ctx.createClient({ name: 'ID shop', methods: ['credential'] })
    const { page } = await testBrowser(ctx).open({ client_id: client.id, state: 'st' })
    expect(page.html).toContain('No way to confirm your age is available for this site yet. Please contact the site.')
    expect(backLink(page.html)?.href).toBe('https://shop.example/')
    expect(page.actions.some((action) => action.includes('/methods/'))).toBe(false)
    expect(page.html).not.toContain('data-passkey')
  })

  test('German: "Zurück zu {site}"', async () => {
    const client = await ctx.createClient({ name: 'Weinladen', sandbox: true })
    const { failed } = await failOnce(client.id, { lang: 'de' })
    expect(backLink(failed.html)?.text).toBe('Zurück zu Weinladen')
  })

  test('the link never reflects the request: query parameters and form fields cannot set it', async () => {
    const client = await ctx.createClient({ sandbox: true })
    const evil = 'https://evil.example/'
    const fields = { home_url: evil, redirect_uri: evil, homeUrl: evil }
    const { browser, failed } = await failOnce(client.id, {}, fields)
    expect(backLink(failed.html)?.href).toBe('https://shop.example/')
    expect(failed.html).not.toContain('evil.example')
    const sessionPath = failed.action('/methods/sandbox').split('/methods')[0]!
    const reloaded = await browser.request(`${sessionPath}?home_url=${encodeURIComponent(evil)}&redirect_uri=${encodeURIComponent(evil)}`)
    expect(await reloaded.text()).not.toContain('evil.example')
    const opened = await browser.request(`/?${new URLSearchParams({ client_id: client.id, redirect_uri: REDIRECT_URI, home_url: evil })}`)
    expect(await opened.text()).not.toContain('evil.example')
  })
})
