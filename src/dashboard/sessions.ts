import { and, eq, gt, lt, or } from 'drizzle-orm'
import type { Database, Executor } from '../db/client.ts'
import { clients, dashboardSessions, dashboardUsers } from '../db/schema.ts'
import type { Clock } from '../lib/clock.ts'
import { randomToken, sha256Hex } from '../lib/crypto.ts'

/** A session unused this long ends: a dashboard left open overnight on a shared machine signs nobody in. */
export const SESSION_IDLE_MS = 12 * 60 * 60_000
/** However busy, a session ends this long after sign-in. */
export const SESSION_LIFETIME_MS = 7 * 24 * 60 * 60_000
/** `last_seen_at` is written at most this often: not a write per page view. */
const TOUCH_EVERY_MS = 60_000

type SessionDeps = { db: Database; clock: Clock }

/** Who is signed in: the user, their client, and the session's token (from the cookie) and its hash. */
export type SignedIn = {
  token: string
  tokenHash: string
  user: { id: string; email: string; clientId: string }
  client: { id: string; name: string; sandbox: boolean }
}

/** Starts a session for a user; returns the token for the cookie. Only its SHA-256 is stored. */
export async function createDashboardSession(deps: SessionDeps, userId: string): Promise<{ token: string; expiresAt: Date }> {
  const token = randomToken(32)
  const now = deps.clock.now()
  const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_MS)
  await deps.db.insert(dashboardSessions).values({ tokenHash: sha256Hex(token), userId, createdAt: now, expiresAt, lastSeenAt: now })
  return { token, expiresAt }
}

/**
 * The live session a cookie's token names, with its user and client; undefined when unknown, past its
 * absolute end, or idle too long. A session in use has its `last_seen_at` moved on.
 */
export async function findDashboardSession(deps: SessionDeps, token: string | undefined): Promise<SignedIn | undefined> {
  if (!token || token.length > 128) return undefined
  const now = deps.clock.now()
  const tokenHash = sha256Hex(token)
  const [row] = await deps.db
    .select({
      lastSeenAt: dashboardSessions.lastSeenAt,
      user: { id: dashboardUsers.id, email: dashboardUsers.email, clientId: dashboardUsers.clientId },
      client: { id: clients.id, name: clients.name, sandbox: clients.sandbox },
    })
    .from(dashboardSessions)
    .innerJoin(dashboardUsers, eq(dashboardUsers.id, dashboardSessions.userId))
    .innerJoin(clients, eq(clients.id, dashboardUsers.clientId))
    .where(
      and(
        eq(dashboardSessions.tokenHash, tokenHash),
        gt(dashboardSessions.expiresAt, now),
        gt(dashboardSessions.lastSeenAt, new Date(now.getTime() - SESSION_IDLE_MS)),
      ),
    )
  if (!row) return undefined
  if (now.getTime() - row.lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
    await deps.db.update(dashboardSessions).set({ lastSeenAt: now }).where(eq(dashboardSessions.tokenHash, tokenHash))
  }
  return { token, tokenHash, user: row.user, client: row.client }
}

/** Signs out one session. */
export async function endDashboardSession(db: Database, tokenHash: string): Promise<void> {
  await db.delete(dashboardSessions).where(eq(dashboardSessions.tokenHash, tokenHash))
}

/** Signs a user out everywhere: every session of theirs, on every device. Returns how many ended. */
export async function endAllDashboardSessions(db: Executor, userId: string): Promise<number> {
  const ended = await db.delete(dashboardSessions).where(eq(dashboardSessions.userId, userId)).returning({ tokenHash: dashboardSessions.tokenHash })
  return ended.length
}

/** Deletes sessions that ended before `before`, by either clock. */
export async function pruneDashboardSessions(db: Database, before: Date): Promise<number> {
  const deleted = await db
    .delete(dashboardSessions)
    .where(or(lt(dashboardSessions.expiresAt, before), lt(dashboardSessions.lastSeenAt, new Date(before.getTime() - SESSION_IDLE_MS))))
    .returning({ tokenHash: dashboardSessions.tokenHash })
  return deleted.length
}
