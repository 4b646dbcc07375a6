import type { BrowserContext, CDPSession, Page } from 'playwright-core'

/** Chromium's virtual authenticator (CDP WebAuthn domain), standing in for a phone's passkey manager. */
export type VirtualCredential = { credentialId: string; isResidentCredential: boolean; rpId?: string; privateKey: string; userHandle?: string; signCount: number }

/** A page with a platform authenticator that does user verification (a phone's fingerprint reader, say). */
export async function pageWithAuthenticator(context: BrowserContext, shopCallback: string): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const page = await context.newPage()
  await page.route(`${shopCallback}**`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title><h1>Back at the shop</h1>' }))
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable', { enableUI: false })
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })
  return { page, cdp, authenticatorId }
}

export async function credentialsOf(cdp: CDPSession, authenticatorId: string): Promise<VirtualCredential[]> {
  return ((await cdp.send('WebAuthn.getCredentials', { authenticatorId })) as { credentials: VirtualCredential[] }).credentials
}

