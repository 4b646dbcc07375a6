import type { Cookies } from '../web/cookies.ts'
import { createSealedCookie } from './sealed-cookie.ts'

/**
 * Carries a webhook endpoint's new signing secret across the redirect after the form that added it, to the
 * one view of the webhooks page that shows it (sealed-cookie.ts), for five minutes.
 */
const COOKIE = { name: 'ofage_new_webhook_secret', path: '/dashboard/webhooks', purpose: 'ofage dashboard: new webhook secret cookie', lifetimeSeconds: 300 }

export type NewWebhookSecret = { endpointId: string; secret: string }

export function createWebhookSecretCookie(config: { appUrl: string }, dashboardKey: Uint8Array) {
  const sealed = createSealedCookie(config, dashboardKey, COOKIE)

  /** Sets the cookie: the secret of `endpointId`, for this session (its token's hash) only. */
  function write(cookies: Cookies, value: NewWebhookSecret & { sessionTokenHash: string }, now: Date): Promise<void> {
    return sealed.write(cookies, { eid: value.endpointId, sec: value.secret }, value.sessionTokenHash, now)
  }

  /** Reads the cookie once (clearing it): the secret when it was sealed here, for this session, and is still fresh. */
  async function take(cookies: Cookies, sessionTokenHash: string, now: Date): Promise<NewWebhookSecret | undefined> {
    const claims = await sealed.take(cookies, sessionTokenHash, now)
    return typeof claims?.eid === 'string' && typeof claims.sec === 'string' ? { endpointId: claims.eid, secret: claims.sec } : undefined
  }

  return { write, take }
}

export type WebhookSecretCookie = ReturnType<typeof createWebhookSecretCookie>
