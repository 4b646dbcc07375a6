import { eq, sql } from 'drizzle-orm'
import { clients } from '../db/schema.ts'
import { RuleError } from '../errors.ts'
import { hmacHex, randomToken } from '../lib/crypto.ts'
import type { ServerKeys } from '../keys/server-keys.ts'
import { enqueueEvent } from '../webhooks/events.ts'
import type { Client, ClientDeps } from './model.ts'

/** The longest a rotated-out secret may stay valid: long enough to deploy the new one, no longer. */
export const MAX_SECRET_OVERLAP_SECONDS = 30 * 24 * 3600

/**
 * Replaces a client's secret. Without an overlap the old one stops working at once (a leaked secret);
 * with one, it keeps working for that many seconds, so a site can deploy the new secret without an outage.
 * Only one previous secret is kept: rotating again ends the earlier overlap.
 */
export async function rotateClientSecret(deps: ClientDeps, clientId: string, options: { overlapSeconds?: number } = {}): Promise<{ client: Client; secret: string } | undefined> {
  const overlap = options.overlapSeconds ?? 0
  if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_SECRET_OVERLAP_SECONDS) {
    throw new RuleError('secret_overlap_range', `the overlap must be whole seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS} (30 days)`)
  }
  const secret = randomToken(32)
  const now = deps.clock.now()
  return deps.db.transaction(async (tx) => {
    const [client] = await tx
      .update(clients)
      .set({
        secretHash: hashSecret(deps.keys, secret),
        // The right-hand side reads the row as it was: the secret being replaced.
        previousSecretHash: overlap > 0 ? sql`${clients.secretHash}` : null,
        previousSecretExpiresAt: overlap > 0 ? new Date(now.getTime() + overlap * 1000) : null,
      })
      .where(eq(clients.id, clientId))
      .returning()
    if (client) await enqueueEvent(tx, client.id, 'client.secret_rotated', { client_id: client.id }, now)
    return client && { client, secret }
  })
}

/** A client secret as stored: an HMAC under the server's key (high-entropy secrets need no password hash; DESIGN.md). */
export function hashSecret(keys: ServerKeys, secret: string): string {
  return hmacHex(keys.clientSecretKey, secret)
}
