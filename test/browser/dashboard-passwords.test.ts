import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { createDashboardUser, setPasswordWithToken } from '../../src/dashboard/users.ts'
import { createClient } from '../../src/clients/registry.ts'
import { hasSmtpSink, startSmtpSink, type SmtpSink } from '../mail/smtp-sink.ts'
import { axeViolations, hasChromium, launchChromium, startTestServer, type RunningServer } from './chromium.ts'

/**
 * The dashboard's passwords in headless Chromium (issue 24): "Forgot password?" from the sign-in page to a
 * real SMTP server and back through the emailed link; the set-password page's own sentence for a password
 * that is too short (the browser's tooltip used to stop the post before the server could say it); and the
 * sign-in page's "Or with your email and password" set apart from the passkey button.
 */
const PASSWORD = 'a long and memorable phrase'
const NEW_PASSWORD = 'another long memorable phrase'

let running: RunningServer
let browser: Browser
let sink: SmtpSink | undefined
let clientId: string

beforeAll(async () => {
  if (!hasChromium) return
  sink = hasSmtpSink ? await startSmtpSink() : undefined
  // Under a name: the passkey button (and so the "or" under it) shows only where WebAuthn can run.
  running = await startTestServer(sink ? { SMTP_URL: sink.url, SMTP_FROM: 'ofage <no-reply@age.example>' } : {}, { hostname: 'localhost' })
  clientId = (await createClient(running.services.deps, { name: 'Password shop', redirectUris: ['https://shop.example/callback'], sandbox: true })).client.id
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  try {
    await browser?.close()
    await running?.stop()
  } finally {
    await sink?.stop()
  }
})

/** A user of the shop whose password is set: the email to sign in with. */
async function userWithPassword(email: string): Promise<string> {
  const { link } = await createDashboardUser(running.services.deps, { clientId, email })
  await setPasswordWithToken(running.services.deps, { token: link.token, password: PASSWORD })
  return email
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

describe.skipIf(!hasChromium)('the dashboard’s passwords in headless Chromium', () => {
  test.skipIf(!hasSmtpSink)('"Forgot your password?" → the email → its link → a new password → signed in; axe finds nothing', async () => {
    const email = await userWithPassword('forgetful@shop.example')
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${running.baseUrl}/dashboard/sign-in`)
      await page.getByRole('link', { name: 'Forgot your password?' }).click()
      await page.waitForURL('**/dashboard/forgot-password')
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Reset your password')
      expect(await axeViolations(page)).toEqual([])
      await page.getByLabel('Email').fill(email)
      await page.getByRole('button', { name: 'Send the link' }).click()
      await page.waitForURL('**/dashboard/forgot-password?notice=sent')
      expect(await page.getByRole('status').textContent()).toContain('a link to choose a new password is on its way')
      expect(await axeViolations(page)).toEqual([])

      const [mail] = await sink!.waitForMessages(1)
      expect(mail!.rcpt_tos).toEqual([email])
      const link = /https?:\/\/\S+/.exec(mail!.body)![0]
      expect(link).toStartWith(`${running.baseUrl}/dashboard/set-password?token=`)
      await page.goto(link)
      await page.getByLabel('New password').fill(NEW_PASSWORD)
      await page.getByLabel('Repeat the password').fill(NEW_PASSWORD)
      await page.getByRole('button', { name: 'Save password' }).click()
      await page.waitForURL('**/dashboard/sign-in?notice=password_set')
      await signIn(page, email, NEW_PASSWORD)
      await page.waitForURL('**/dashboard/audit')

      // The link was spent; its page says so and offers the way to a new one.
      await page.goto(link)
      expect(await page.getByRole('alert').textContent()).toContain('This link is not valid')
      await page.getByRole('link', { name: 'Forgot your password?' }).click()
      await page.waitForURL('**/dashboard/forgot-password')
    } finally {
      await context.close()
    }
  }, 90_000)

  test('a new password that is too short gets the server’s sentence, tied to the field, not only a browser tooltip', async () => {
    const { link } = await createDashboardUser(running.services.deps, { clientId, email: 'short@shop.example' })
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(`${running.baseUrl}/dashboard/set-password?token=${link.token}`)
      const field = page.getByLabel('New password')
      expect(await field.getAttribute('aria-describedby')).toBe('password-rule')
      expect(await page.locator('#password-rule').textContent()).toContain('At least 12 characters.')
      await field.fill('too short')
      await page.getByLabel('Repeat the password').fill('too short')
      await page.getByRole('button', { name: 'Save password' }).click()
      const alert = page.getByRole('alert')
      await alert.waitFor({ timeout: 10_000 })
      expect(await alert.textContent()).toContain('The password needs at least 12 characters.')
      expect(await field.getAttribute('aria-invalid')).toBe('true')
      expect(await field.getAttribute('aria-describedby')).toBe('password-problem password-rule')
      expect(await axeViolations(page)).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)

  test('"Or with your email and password:" stands apart from the passkey button, on a desktop and on a phone', async () => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      for (const viewport of [{ width: 1280, height: 860 }, { width: 360, height: 740 }]) {
        await page.setViewportSize(viewport)
        await page.goto(`${running.baseUrl}/dashboard/sign-in`)
        const button = page.getByRole('button', { name: 'Sign in with a passkey' })
        await button.waitFor()
        const or = page.getByText('Or with your email and password:')
        const buttonBox = (await button.boundingBox())!
        const orBox = (await or.boundingBox())!
        // A rule and at least a line's height between them (it sat right under the button: a gap of 0).
        expect(orBox.y - (buttonBox.y + buttonBox.height)).toBeGreaterThanOrEqual(24)
        expect(await or.evaluate((element) => getComputedStyle(element).borderTopStyle)).toBe('solid')
        // And the form's first field below it, not jammed against it either.
        const emailBox = (await page.getByLabel('Email').boundingBox())!
        expect(emailBox.y).toBeGreaterThan(orBox.y + orBox.height)
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true)
        expect(await axeViolations(page)).toEqual([])
      }
    } finally {
      await context.close()
    }
  }, 60_000)
})
