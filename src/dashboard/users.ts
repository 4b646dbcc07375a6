import type { PasswordCost } from '../config.ts'
import { and, asc, eq, gt, sql } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { clients, dashboardUsers } from '../db/schema.ts'
import { OAuthError } from '../errors.ts'
import type { Clock } from '../lib/clock.ts'
import { randomToken, sha256Hex } from '../lib/crypto.ts'
import { deleteAllDashboardPasskeys } from './passkeys.ts'
import { hashPassword } from './passwords.ts'
import { endAllDashboardSessions } from './sessions.ts'

export type DashboardUser = typeof dashboardUsers.$inferSelect

type UserDeps = { db: Database; clock: Clock }

/** A set-password link works for a day, once: long enough to reach the inbox, short enough to go stale. */
export const PASSWORD_LINK_LIFETIME_MS = 24 * 60 * 60_000

/** A one-time set-password link's token (shown once, stored only hashed) and when it stops working. */
export type PasswordLink = { token: string; expiresAt: Date }

const EMAIL = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+$/u
/** Control characters (NUL among them) are in no address, and Postgres refuses NUL in text: such a lookup finds no one. */
const CONTROL = /\p{Cc}/u
const MAX_EMAIL_LENGTH = 254

/** The form an email is compared in: trimmed, lower case (the unique index is on lower(email)). */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase()
}

/** The address of the page that takes a link's token: under APP_URL, where the pages are served. */
export function passwordLinkUrl(appUrl: string, token: string): string {
  return `${appUrl}/dashboard/set-password?${new URLSearchParams({ token })}`
}

/** A user as the CLI shows it: never a hash. */
export function describeDashboardUser(user: DashboardUser) {
  return {
    id: user.id,
    client_id: user.clientId,
    email: user.email,
    password_set: user.passwordHash !== null,
    created_at: user.createdAt.toISOString(),
  }
}

/** Creates a user of one client, without a password, and the one-time link that sets it. */
export async function createDashboardUser(deps: UserDeps, input: { clientId: string; email: string }): Promise<{ user: DashboardUser; link: PasswordLink }> {
  const email = input.email.trim()
  if (!EMAIL.test(email) || email.length > MAX_EMAIL_LENGTH) throw new OAuthError('invalid_request', `not an email address: "${input.email}"`)
  const [client] = await deps.db.select({ id: clients.id }).from(clients).where(eq(clients.id, input.clientId))
  if (!client) throw new OAuthError('invalid_request', `no client ${input.clientId}`)
  if (await findUserByEmail(deps.db, email)) throw new OAuthError('invalid_request', `a dashboard user with the email ${email} exists already`)
  const link = newLink(deps.clock)
  const [user] = await deps.db
    .insert(dashboardUsers)
    .values({
      id: `usr_${randomToken(12)}`,
      clientId: client.id,
      email,
      passwordTokenHash: sha256Hex(link.token),
      passwordTokenExpiresAt: link.expiresAt,
      createdAt: deps.clock.now(),
    })
    .returning()
  return { user: user!, link }
}

/** A new set-password link for an existing user; the previous link stops working. */
export async function issuePasswordLink(deps: UserDeps, userId: string): Promise<PasswordLink | undefined> {
  const link = newLink(deps.clock)
  const updated = await deps.db
    .update(dashboardUsers)
    .set({ passwordTokenHash: sha256Hex(link.token), passwordTokenExpiresAt: link.expiresAt })
    .where(eq(dashboardUsers.id, userId))
    .returning({ id: dashboardUsers.id })
  return updated.length === 1 ? link : undefined
}

/**
 * An operator's password reset (`ofage users reset-password`): a new set-password link, and the account's
 * passkeys removed at once, in one transaction. A reset is how an account is taken back, and a passkey
 * signs in without the password: one planted from a stolen session must not outlive it (issue 19). Its
 * sessions end at once too, not when the link is used: a stolen session must not act with the old password
 * in between.
 */
export async function resetDashboardPassword(deps: UserDeps, userId: string): Promise<{ link: PasswordLink; passkeysRemoved: number } | undefined> {
  const link = newLink(deps.clock)
  return deps.db.transaction(async (tx) => {
    const updated = await tx
      .update(dashboardUsers)
      .set({ passwordTokenHash: sha256Hex(link.token), passwordTokenExpiresAt: link.expiresAt })
      .where(eq(dashboardUsers.id, userId))
      .returning({ id: dashboardUsers.id })
    if (updated.length !== 1) return undefined
    const passkeysRemoved = await deleteAllDashboardPasskeys(tx, userId)
    await endAllDashboardSessions(tx, userId)
    return { link, passkeysRemoved }
  })
}

function newLink(clock: Clock): PasswordLink {
  return { token: randomToken(32), expiresAt: new Date(clock.now().getTime() + PASSWORD_LINK_LIFETIME_MS) }
}

export async function findUserByEmail(db: Database, email: string): Promise<DashboardUser | undefined> {
  if (CONTROL.test(email) || email.length > MAX_EMAIL_LENGTH) return undefined
  const [user] = await db.select().from(dashboardUsers).where(sql`lower(${dashboardUsers.email}) = ${normaliseEmail(email)}`)
  return user
}

/** A user by id (`usr_…`) or by email (anything with an `@`). */
export async function findDashboardUser(db: Database, idOrEmail: string): Promise<DashboardUser | undefined> {
  if (idOrEmail.includes('@')) return findUserByEmail(db, idOrEmail)
  if (CONTROL.test(idOrEmail)) return undefined
  const [user] = await db.select().from(dashboardUsers).where(eq(dashboardUsers.id, idOrEmail))
  return user
}

export async function listDashboardUsers(db: Database, clientId?: string): Promise<DashboardUser[]> {
  return db
    .select()
    .from(dashboardUsers)
    .where(clientId === undefined ? undefined : eq(dashboardUsers.clientId, clientId))
    .orderBy(asc(dashboardUsers.clientId), asc(dashboardUsers.createdAt), asc(dashboardUsers.id))
}

/** Removes a user and, with them, every session they have (the foreign key cascades). */
export async function removeDashboardUser(db: Database, idOrEmail: string): Promise<DashboardUser | undefined> {
  const user = await findDashboardUser(db, idOrEmail)
  if (!user) return undefined
  await db.delete(dashboardUsers).where(eq(dashboardUsers.id, user.id))
  return user
}

/** The user a set-password link's token belongs to, while the link works. */
export async function findUserByPasswordToken(deps: UserDeps, token: string): Promise<DashboardUser | undefined> {
  if (token.length === 0 || token.length > 128) return undefined
  // Looked up by its hash: a token is compared as a digest through the index, never character by character.
  const [user] = await deps.db
    .select()
    .from(dashboardUsers)
    .where(and(eq(dashboardUsers.passwordTokenHash, sha256Hex(token)), gt(dashboardUsers.passwordTokenExpiresAt, deps.clock.now())))
  return user
}

/**
 * Sets the password of the link's user and spends the link, once: of two posts racing with one token, one
 * wins. A new password ends every session the user had, wherever it was signed in, and with
 * `removePasskeys` (the page's box, ticked unless the user unticks it) every passkey too.
 */
export async function setPasswordWithToken(deps: UserDeps & { config: { passwordHash: PasswordCost } }, input: { token: string; password: string; removePasskeys?: boolean }): Promise<DashboardUser | undefined> {
  const { token, password } = input
  if (!(await findUserByPasswordToken(deps, token))) return undefined
  const passwordHash = await hashPassword(password, deps.config.passwordHash)
  return deps.db.transaction(async (tx) => {
    const [user] = await tx
      .update(dashboardUsers)
      .set({ passwordHash, passwordTokenHash: null, passwordTokenExpiresAt: null })
      .where(and(eq(dashboardUsers.passwordTokenHash, sha256Hex(token)), gt(dashboardUsers.passwordTokenExpiresAt, deps.clock.now())))
      .returning()
    if (user) await endAllDashboardSessions(tx, user.id)
    if (user && input.removePasskeys) await deleteAllDashboardPasskeys(tx, user.id)
    return user
  })
}
