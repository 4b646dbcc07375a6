import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { createDashboardUser } from '../../src/dashboard/users.ts'
import type { Logger } from '../../src/lib/log.ts'
import { createTestContext, queryRows, type TestContext } from '../helpers.ts'
import { readPage, testBrowser } from '../verification/browser.ts'
import { hasSmtpSink, startSmtpSink, type ReceivedMail, type SmtpSink } from '../mail/smtp-sink.ts'
import { createUser, postSignIn, signedIn, type DashboardBrowser } from './dashboard.ts'

/**
 * "Forgot password?" (issue 24, item 5): with SMTP_URL, the set-password link by email, against a real SMTP
 * server the test starts; without it, a page that says the operator resets passwords, and nothing sent.
 */
const SMTP_USER = 'mailer'
const SMTP_PASSWORD = 'smtp secret phrase'
const SENDER = 'ofage <no-reply@age.example>'
const APP_URL = 'http://app.ofage.test'
const NEW_PASSWORD = 'a brand new pass phrase'

/** Each request comes from its own address, so that the per-address limit is met only where a test means it. */
let addresses = 0
const fromAddress = () => ({ 'x-forwarded-for': `203.0.113.${++addresses}` })

/** Opens the page in `browser` and posts its form; returns the answer. */
async function requestReset(browser: DashboardBrowser, email: string, headers: Record<string, string> = {}, path = '/dashboard/forgot-password') {
  const form = await readPage(await browser.request(path, { headers }))
  return browser.post(path, { csrf: form.csrf!, email }, headers)
}

/** The set-password link in an email's text. */
function linkIn(mail: ReceivedMail): string {
  const link = /https?:\/\/\S+/.exec(mail.body)?.[0]
  if (!link) throw new Error(`no link in: ${mail.body}`)
  return link
}

describe.skipIf(!hasSmtpSink)('"Forgot password?" with SMTP_URL', () => {
  let sink: SmtpSink
  let ctx: TestContext
  let shop: Awaited<ReturnType<TestContext['createClient']>>
  const logLines: string[] = []
  const log: Logger = { info: (event, fields) => logLines.push(JSON.stringify({ event, ...fields })), error: (event, fields) => logLines.push(JSON.stringify({ event, ...fields })) }

  beforeAll(async () => {
    sink = await startSmtpSink({ user: SMTP_USER, password: SMTP_PASSWORD })
    ctx = await createTestContext({
      log,
      env: {
        TRUST_PROXY: '1',
        APP_URL,
        SMTP_URL: sink.url,
        SMTP_FROM: SENDER,
        RATE_LIMIT_PASSWORD_RESET_EMAIL: '2',
        RATE_LIMIT_PASSWORD_RESET_ADDRESS: '4',
      },
    })
    shop = await ctx.createClient({ name: 'Wine shop' })
  }, 60_000)
  afterAll(async () => {
    try {
      await ctx?.close()
    } finally {
      await sink?.stop()
    }
  })

  /** What arrived for `address` once everything posted so far has been sent. */
  async function delivered(address: string): Promise<ReceivedMail[]> {
    await ctx.deps.outbox!.drained()
    return sink.messages().filter((mail) => mail.rcpt_tos.includes(address))
  }

  test('the sign-in page links to it, and it asks for the email', async () => {
    const signIn = await (await ctx.request('/dashboard/sign-in')).text()
    expect(signIn).toContain('<a href="/dashboard/forgot-password">Forgot your password?</a>')
    const page = await readPage(await ctx.request('/dashboard/forgot-password'))
    expect(page.html).toContain('<h1>Reset your password</h1>')
    expect(page.actions).toEqual(['/dashboard/forgot-password'])
    expect(page.html).toContain('name="email" type="email"')
  })

  test('an account’s email receives exactly one plain-text message whose link, on APP_URL, sets a new password once; the request alone signs no one out', async () => {
    await createUser(ctx, shop.id, 'Owner@wine.example')
    const session = await signedIn(ctx, 'owner@wine.example', undefined, fromAddress())
    const answer = await requestReset(testBrowser(ctx), ' OWNER@Wine.Example ', fromAddress())
    expect(answer.status).toBe(303)
    expect(answer.headers.get('location')).toBe('/dashboard/forgot-password?notice=sent')

    const mails = await delivered('Owner@wine.example')
    expect(mails).toHaveLength(1)
    const mail = mails[0]!
    // To the address as the account holds it, through the account SMTP_URL names, from SMTP_FROM.
    expect({ to: mail.to, rcpt: mail.rcpt_tos, from: mail.from, login: mail.login }).toEqual({ to: 'Owner@wine.example', rcpt: ['Owner@wine.example'], from: SENDER, login: SMTP_USER })
    expect({ type: mail.content_type, charset: mail.charset, parts: mail.parts }).toEqual({ type: 'text/plain', charset: 'utf-8', parts: 1 })
    expect(mail.subject).toBe('Choose a new password for your ofage dashboard')
    const link = linkIn(mail)
    expect(link).toStartWith(`${APP_URL}/dashboard/set-password?token=`)
    // The frozen clock's now plus the link's documented 24 hours.
    expect(mail.body).toContain('until Nov 23, 2026, 12:00:00 UTC')
    // Nothing else about the account: not its email, its client or the client's id.
    for (const personal of ['Owner@wine.example', 'owner@wine.example', 'Wine shop', shop.id]) expect(mail.body).not.toContain(personal)

    // Asking signed no one out; using the link does, once.
    expect((await session.request('/dashboard/audit')).status).toBe(200)
    const path = link.slice(APP_URL.length)
    const browser = testBrowser(ctx)
    const form = await readPage(await browser.request(path))
    expect(form.html).toContain('Owner@wine.example')
    const token = new URL(link).searchParams.get('token')!
    const set = await browser.post('/dashboard/set-password', { csrf: form.csrf!, token, password: NEW_PASSWORD, confirm: NEW_PASSWORD })
    expect(set.status).toBe(303)
    expect((await session.request('/dashboard/audit')).status).toBe(303)
    expect((await postSignIn(testBrowser(ctx), 'owner@wine.example', NEW_PASSWORD, fromAddress())).status).toBe(303)
    const again = await browser.post('/dashboard/set-password', { csrf: form.csrf!, token, password: 'someone else’s phrase', confirm: 'someone else’s phrase' })
    expect(again.status).toBe(400)
    expect(await again.text()).toContain('This link is not valid')
    expect((await browser.request(path)).status).toBe(400)
    expect(await delivered('Owner@wine.example')).toHaveLength(1)
  })

  test('an unknown email receives nothing, and gets exactly the answer an account’s email gets', async () => {
    await createUser(ctx, shop.id, 'known@wine.example')
    const answers = []
    for (const email of ['known@wine.example', 'nobody@wine.example']) {
      const browser = testBrowser(ctx)
      const response = await requestReset(browser, email, fromAddress())
      const next = await browser.request(response.headers.get('location')!)
      answers.push({ status: response.status, location: response.headers.get('location'), body: await response.text(), next: next.status, nextBody: await next.text() })
    }
    expect(answers[0]!.nextBody).toContain('If this email has a dashboard account, a link to choose a new password is on its way.')
    expect(answers[1]).toEqual(answers[0]!)
    expect(await delivered('known@wine.example')).toHaveLength(1)
    expect(await delivered('nobody@wine.example')).toEqual([])
  })

  test('the answer goes out before the email: a slow mail server does not hold it', async () => {
    await createUser(ctx, shop.id, 'slow@wine.example')
    sink.hold(2)
    try {
      const answer = await requestReset(testBrowser(ctx), 'slow@wine.example', fromAddress())
      expect(answer.status).toBe(303)
      // Had the route waited for the send, the server would have the message by now.
      expect(sink.messages().filter((mail) => mail.rcpt_tos.includes('slow@wine.example'))).toEqual([])
      expect(await delivered('slow@wine.example')).toHaveLength(1)
    } finally {
      sink.hold(0)
    }
  }, 30_000)

  test('the email speaks the language the request negotiated', async () => {
    await createUser(ctx, shop.id, 'langue@wine.example')
    await requestReset(testBrowser(ctx), 'langue@wine.example', fromAddress(), '/dashboard/forgot-password?lang=fr')
    // Sent after the answer: the French one must be out before the German is asked for, or they may cross.
    expect(await delivered('langue@wine.example')).toHaveLength(1)
    await requestReset(testBrowser(ctx), 'langue@wine.example', { ...fromAddress(), 'accept-language': 'de-CH, de;q=0.9' })
    const [french, german] = await delivered('langue@wine.example')
    expect(french!.subject).toBe('Choisissez un nouveau mot de passe pour votre tableau de bord ofage')
    expect(french!.body).toContain('jusqu’au 23 nov. 2026, 12:00:00 UTC')
    expect(german!.subject).toBe('Neues Passwort für Ihr ofage-Dashboard')
    // Each request replaced the link before it: only the newest works.
    const path = (mail: ReceivedMail) => linkIn(mail).slice(APP_URL.length)
    expect((await ctx.request(path(french!))).status).toBe(400)
    expect((await ctx.request(path(german!))).status).toBe(200)
  })

  test('per email, from every address: past the limit 429 with Retry-After and nothing sent, alike for an unknown email; it lifts when the hour ends', async () => {
    await createUser(ctx, shop.id, 'limited@wine.example')
    for (const email of ['limited@wine.example', 'stranger@wine.example']) {
      for (let i = 0; i < 2; i++) expect((await requestReset(testBrowser(ctx), email, fromAddress())).status).toBe(303)
      const refused = await requestReset(testBrowser(ctx), email.toUpperCase(), fromAddress())
      expect(refused.status).toBe(429)
      const retryAfter = Number(refused.headers.get('retry-after'))
      expect(retryAfter).toBeGreaterThan(0)
      expect(retryAfter).toBeLessThanOrEqual(3600)
      expect(refused.headers.get('content-security-policy')).toContain("default-src 'none'")
      expect(await refused.text()).toContain('Too many requests for a link.')
    }
    expect(await delivered('limited@wine.example')).toHaveLength(2)
    ctx.clock.advance(60 * 60_000)
    expect((await requestReset(testBrowser(ctx), 'limited@wine.example', fromAddress())).status).toBe(303)
    expect(await delivered('limited@wine.example')).toHaveLength(3)
  })

  test('per address: one address asking for many emails is refused past its limit; another address is not', async () => {
    const address = fromAddress()
    for (let i = 0; i < 4; i++) expect((await requestReset(testBrowser(ctx), `sprayed${i}@wine.example`, address)).status).toBe(303)
    expect((await requestReset(testBrowser(ctx), 'sprayed4@wine.example', address)).status).toBe(429)
    expect((await requestReset(testBrowser(ctx), 'sprayed4@wine.example', fromAddress())).status).toBe(303)
  })

  test('a post without the form’s CSRF token, or from another site, is refused with 403 and sends nothing', async () => {
    await createUser(ctx, shop.id, 'forged@wine.example')
    const browser = testBrowser(ctx)
    const form = await readPage(await browser.request('/dashboard/forgot-password'))
    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) => browser.post('/dashboard/forgot-password', { email: 'forged@wine.example', ...fields }, { ...fromAddress(), ...headers })
    expect((await post({ csrf: 'forged' })).status).toBe(403)
    expect((await testBrowser(ctx).post('/dashboard/forgot-password', { csrf: form.csrf!, email: 'forged@wine.example' }, fromAddress())).status).toBe(403)
    expect((await post({ csrf: form.csrf! }, { origin: 'https://evil.example' })).status).toBe(403)
    expect((await post({ csrf: form.csrf! }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    expect(await delivered('forged@wine.example')).toEqual([])
  })

  test('the log says a message went out, and never the SMTP password, an email, a token or a link', async () => {
    await createUser(ctx, shop.id, 'logged@wine.example')
    await requestReset(testBrowser(ctx), 'logged@wine.example', fromAddress())
    await requestReset(testBrowser(ctx), 'unlogged@wine.example', fromAddress())
    const [mail] = await delivered('logged@wine.example')
    const all = logLines.join('\n')
    expect(all).toContain('"event":"mail_sent","purpose":"dashboard_password_reset"')
    const token = new URL(linkIn(mail!)).searchParams.get('token')!
    for (const secret of [SMTP_PASSWORD, 'logged@wine.example', 'unlogged@wine.example', token, linkIn(mail!)]) expect(all).not.toContain(secret)
  })
})

describe.skipIf(!hasSmtpSink)('"Forgot password?" when the mail server refuses', () => {
  test('a wrong SMTP password: the same answer, nothing sent, and one log line with the error code only', async () => {
    const sink = await startSmtpSink({ user: SMTP_USER, password: SMTP_PASSWORD })
    const lines: string[] = []
    const log: Logger = { info: (event, fields) => lines.push(JSON.stringify({ event, ...fields })), error: (event, fields) => lines.push(JSON.stringify({ event, ...fields })) }
    const wrong = 'not the smtp password'
    const ctx = await createTestContext({ log, env: { SMTP_URL: sink.url.replace(encodeURIComponent(SMTP_PASSWORD), encodeURIComponent(wrong)), SMTP_FROM: SENDER } })
    try {
      const shop = await ctx.createClient()
      await createUser(ctx, shop.id, 'refused@wine.example')
      const answer = await requestReset(testBrowser(ctx), 'refused@wine.example')
      expect(answer.status).toBe(303)
      expect(answer.headers.get('location')).toBe('/dashboard/forgot-password?notice=sent')
      await ctx.deps.outbox!.drained()
      expect(sink.messages()).toEqual([])
      const failures = lines.filter((line) => line.includes('mail_failed'))
      expect(failures).toHaveLength(1)
      expect(JSON.parse(failures[0]!)).toEqual({ event: 'mail_failed', purpose: 'dashboard_password_reset', code: 'EAUTH 535' })
      for (const secret of [wrong, SMTP_PASSWORD, 'refused@wine.example']) expect(lines.join('\n')).not.toContain(secret)
    } finally {
      try {
        await ctx.close()
      } finally {
        await sink.stop()
      }
    }
  }, 60_000)
})

describe('"Forgot password?" without SMTP_URL', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestContext()
  }, 60_000)
  afterAll(() => ctx.close())

  test('the page says the operator resets passwords, and how, with no form; in the reader’s language', async () => {
    const signIn = await (await ctx.request('/dashboard/sign-in')).text()
    expect(signIn).toContain('href="/dashboard/forgot-password"')
    const page = await ctx.request('/dashboard/forgot-password')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await page.text()
    expect(html).toContain('This service sends no email, so its operator resets passwords.')
    expect(html).toContain('<code>ofage users reset-password EMAIL</code>')
    expect(html).not.toContain('<form')
    const german = await (await ctx.request('/dashboard/forgot-password', { headers: { 'accept-language': 'de' } })).text()
    expect(german).toContain('daher setzt sein Betreiber Passwörter zurück')
    expect(german).toContain('<code>ofage users reset-password EMAIL</code>')
  })

  test('a post (a form from before SMTP_URL was removed) explains the same and issues no link', async () => {
    const shop = await ctx.createClient()
    const user = await createUser(ctx, shop.id, 'nomail@wine.example')
    const pending = (await createDashboardUser(ctx.deps, { clientId: shop.id, email: 'pending@wine.example' })).user
    const tokens = async () => queryRows<{ id: string; password_token_hash: string | null }>(ctx.deps.db, sql`select id, password_token_hash from dashboard_users order by id`)
    const before = await tokens()
    expect(before.find((row) => row.id === user.id)?.password_token_hash).toBeNull()
    expect(ctx.deps.outbox).toBeUndefined()
    for (const email of ['nomail@wine.example', 'pending@wine.example']) {
      const browser = testBrowser(ctx)
      const form = await readPage(await browser.request('/dashboard/sign-in'))
      const answer = await browser.post('/dashboard/forgot-password', { csrf: form.csrf!, email })
      expect(answer.status).toBe(200)
      const html = await answer.text()
      expect(html).toContain('This service sends no email, so its operator resets passwords.')
      expect(html).not.toContain('<form')
    }
    // Not even the pending account's link was replaced.
    expect(await tokens()).toEqual(before)
    expect(before.some((row) => row.id === pending.id && row.password_token_hash !== null)).toBe(true)
  })
})
