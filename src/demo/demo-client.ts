import { eq } from 'drizzle-orm'
import { clients } from '../db/schema.ts'
import type { AppDeps } from '../deps.ts'
import { hmacHex } from '../lib/crypto.ts'
import { createClient, findClient } from '../clients/registry.ts'

export const DEMO_CLIENT_ID = 'demo'

/**
 * The demo's sandbox client. Its secret is derived from a server key rather than stored anywhere, so
 * every start (and every instance) can compute it without it ever being printed or kept in plain text.
 */
export function demoClientSecret(deps: Pick<AppDeps, 'keys'>): string {
  return Buffer.from(hmacHex(deps.keys.clientSecretKey, 'ofage demo client secret'), 'hex').toString('base64url')
}

export function demoRedirectUri(publicUrl: string): string {
  return `${publicUrl}/demo/callback`
}

/**
 * Creates the demo client; with `sync` (the server) also brings an existing one in line with the current
 * PUBLIC_URL. Idempotent. A CLI command never syncs: its shell's PUBLIC_URL may not be the server's, and
 * the running server's /demo would then send visitors to an address nobody serves.
 */
export async function ensureDemoClient(deps: AppDeps, options: { sync: boolean }): Promise<void> {
  const redirectUri = demoRedirectUri(deps.config.publicUrl)
  const existing = await findClient(deps.db, DEMO_CLIENT_ID)
  if (!existing) {
    await createClient(deps, {
      id: DEMO_CLIENT_ID,
      name: 'ofage demo shop',
      redirectUris: [redirectUri],
      sandbox: true,
      secret: demoClientSecret(deps),
    }).catch(async (cause) => {
      // Another instance created it at the same moment: fine.
      if (!(await findClient(deps.db, DEMO_CLIENT_ID))) throw cause
    })
    return
  }
  if (!options.sync) return
  await deps.db
    .update(clients)
    .set({ redirectUris: [redirectUri], sandbox: true, status: 'active', verificationLimit: null, minAge: null })
    .where(eq(clients.id, DEMO_CLIENT_ID))
}
