import type { AppDeps } from '../deps.ts'
import { pruneDashboardSessions } from '../dashboard/sessions.ts'
import { pruneInstanceReports } from '../keys/instance-reports.ts'
import { pruneExpiredCodes } from '../oauth/codes.ts'
import { pruneExpiredPushedRequests } from '../oauth/pushed-requests.ts'
import { pruneExpiredPasskeys } from '../passkeys/store.ts'
import { pruneRateLimits } from '../ratelimit/limits.ts'
import { pruneExpiredPasses } from '../verification/age-pass.ts'
import { pruneExpiredSessions } from '../verification/sessions.ts'

/** Codes are kept an hour past expiry so a late replay is still recognised and revokes its tokens. */
const KEEP_EXPIRED_MS = 60 * 60_000

/**
 * Deletes expired codes, pushed requests, verification sessions, age passes, passkeys, dashboard sessions,
 * past rate-limit windows and instances' old key reports; audit rows and usage stay.
 */
export async function pruneExpired(deps: Pick<AppDeps, 'db' | 'clock'>): Promise<void> {
  const before = new Date(deps.clock.now().getTime() - KEEP_EXPIRED_MS)
  await pruneExpiredCodes(deps.db, before)
  await pruneExpiredPushedRequests(deps.db, before)
  await pruneExpiredSessions(deps.db, before)
  await pruneExpiredPasses(deps.db, before)
  await pruneExpiredPasskeys(deps.db, before)
  await pruneDashboardSessions(deps.db, before)
  await pruneRateLimits(deps.db, before)
  await pruneInstanceReports(deps.db, before)
}
