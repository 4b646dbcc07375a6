import type { AppDeps } from '../deps.ts'
import { refreshTrustSources } from '../credentials/trust/trust-sources.ts'
import { REPORT_EVERY_MS } from '../keys/instance-reports.ts'
import { startWebhookWorker } from '../webhooks/delivery.ts'
import { pruneExpired } from './prune.ts'

const PRUNE_EVERY_MS = 10 * 60_000
/** How often the server looks for imported trust lists due for a refresh (CREDENTIAL_TRUST_REFRESH_HOURS says when one is). */
const TRUST_REFRESH_CHECK_MS = 5 * 60_000

/**
 * What a server process does besides answering requests, in one place: every process reads the key in
 * force again and reports which key it signs with (a rotation is also heard at once by NOTIFY:
 * src/keys/signing-keys.ts) and delivers webhooks (leases in the outbox keep two from sending one attempt
 * twice); the primary process alone prunes expired rows and refreshes imported trust lists (each due list
 * is taken by one instance: trust-sources.ts), since those deletes and fetches are the same whoever runs them.
 * A failure is logged and the job runs again at its next turn. `stop()` ends them all, the webhook worker
 * after its sends in flight.
 */
export function startBackgroundJobs(deps: AppDeps, options: { primary: boolean }): { stop(): Promise<void> } {
  const every = (ms: number, event: string, job: () => Promise<unknown>) => {
    const timer = setInterval(() => job().catch((cause) => deps.log.error(event, { message: String(cause) })), ms)
    timer.unref()
    return timer
  }
  const timers = [
    every(REPORT_EVERY_MS, 'signing_key_read_failed', () => deps.keys.signing.refresh()),
    ...(options.primary
      ? [every(PRUNE_EVERY_MS, 'prune_failed', () => pruneExpired(deps)), every(TRUST_REFRESH_CHECK_MS, 'trust_refresh_failed', () => refreshTrustSources(deps))]
      : []),
  ]
  const webhooks = startWebhookWorker(deps)
  return {
    async stop() {
      for (const timer of timers) clearInterval(timer)
      await webhooks.stop()
    },
  }
}
