import type { Limit } from '../config.ts'
import type { Database } from '../db/client.ts'
import type { DashboardLanguage } from '../i18n/language-codes.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import type { Clock } from '../lib/clock.ts'
import { sha256Hex } from '../lib/crypto.ts'
import type { OutgoingMail } from '../mail/outbox.ts'
import { takeHit } from '../ratelimit/limits.ts'
import { formatInstant } from './audit-page.tsx'
import { findUserByEmail, issuePasswordLink, normaliseEmail, passwordLinkUrl } from './users.ts'

export type PasswordResetLimits = { passwordResetEmail: Limit; passwordResetAddress: Limit }

/**
 * Counts one "Forgot password?" request against its address and against the email it names (its hash,
 * normalised, from every address, whether or not it has an account), before anything is looked up; past
 * either limit a RateLimitedError. Per email from all addresses, unlike sign-in: what the limit protects
 * here is the inbox, which many addresses could otherwise flood.
 */
export async function countPasswordResetRequest(deps: { db: Database; clock: Clock; limits: PasswordResetLimits }, input: { email: string; address: string }): Promise<void> {
  await takeHit(deps, `dashboard-password-reset:address:${input.address}`, deps.limits.passwordResetAddress)
  await takeHit(deps, `dashboard-password-reset:email:${sha256Hex(normaliseEmail(input.email))}`, deps.limits.passwordResetEmail)
}

/**
 * The email that answers a "Forgot password?" for `email`, or undefined when no account has it. It carries
 * a new set-password link, the one `ofage users reset-password` prints (24 hours, once; the previous link
 * stops working), on APP_URL, and its expiry: nothing else about the account. The account's sessions and
 * passkeys are left as they are until the link is used: anyone may ask for a reset of any email, and that
 * alone must not sign its owner out (the set-password page then ends every session and offers to remove the
 * passkeys, as after an operator's link). Sent to the address as the account holds it, not as typed.
 */
export async function composePasswordResetEmail(
  deps: { db: Database; clock: Clock },
  input: { email: string; lang: DashboardLanguage; appUrl: string },
): Promise<OutgoingMail | undefined> {
  const user = await findUserByEmail(deps.db, input.email)
  const link = user && (await issuePasswordLink(deps, user.id))
  if (!user || !link) return undefined
  const t = dashboardLanguages[input.lang].forgotPassword
  return { to: user.email, subject: t.emailSubject, text: t.emailBody(passwordLinkUrl(input.appUrl, link.token), `${formatInstant(link.expiresAt)} UTC`) }
}
