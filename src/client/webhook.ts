/** A webhook event as ofage sends it (Standard Webhooks' payload). */
export type WebhookEvent = { type: string; timestamp: string; data: Record<string, unknown> }

export type WebhookCheck =
  | { ok: true; id: string; event: WebhookEvent }
  | { ok: false; reason: 'missing_headers' | 'bad_signature' | 'stale' | 'malformed' }

/**
 * Checks a webhook per the Standard Webhooks specification: HMAC-SHA256 over `id.timestamp.body` with the
 * endpoint's `whsec_` secret, one of the `v1,` signatures matching, and a timestamp within
 * `toleranceSeconds` (5 minutes) of now, so a captured message cannot be replayed later. Pass the body
 * exactly as received (the raw text, before any JSON parsing). Deduplicate by `id`: delivery is at least once.
 */
export async function verifyWebhook(
  secret: string,
  body: string,
  headers: Headers | Record<string, string | undefined>,
  options: { toleranceSeconds?: number; now?: Date } = {},
): Promise<WebhookCheck> {
  const header = (name: string) => (headers instanceof Headers ? headers.get(name) : (headers[name] ?? null))
  const id = header('webhook-id')
  const timestamp = header('webhook-timestamp')
  const signatures = header('webhook-signature')
  if (!id || !timestamp || !signatures) return { ok: false, reason: 'missing_headers' }
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000)
  if (!/^\d+$/.test(timestamp) || Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) return { ok: false, reason: 'stale' }
  const keyBytes = Uint8Array.from(atob(secret.replace(/^whsec_/, '')), (c) => c.charCodeAt(0))
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${body}`)))
  const expected = btoa(String.fromCharCode(...mac))
  const matches = signatures.split(' ').some((entry) => entry.startsWith('v1,') && constantTimeEqual(entry.slice(3), expected))
  if (!matches) return { ok: false, reason: 'bad_signature' }
  try {
    return { ok: true, id, event: JSON.parse(body) as WebhookEvent }
  } catch {
    return { ok: false, reason: 'malformed' }
  }
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}
