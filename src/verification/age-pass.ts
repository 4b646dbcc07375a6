import { createHmac, randomUUID } from 'node:crypto'
import { and, eq, gt, isNull, lt, sql } from 'drizzle-orm'
import { errors as joseErrors, jwtVerify } from 'jose'
import type { Database } from '../db/client.ts'
import { agePasses, type MethodClass } from '../db/schema.ts'
import { epochSeconds, type Clock } from '../lib/clock.ts'
import { compactJwt } from '../lib/compact-jwt.ts'
import { randomToken } from '../lib/crypto.ts'
import type { ServerKeys } from '../keys/server-keys.ts'
import type { Alongside } from '../oauth/issue-code.ts'
import { acceptsReverification } from '../clients/methods.ts'

/** How long a browser may re-verify without a new check. */
export const AGE_PASS_LIFETIME_MS = 30 * 24 * 60 * 60_000

export const AGE_PASS_COOKIE = 'ofage_pass'

export type AgePass = {
  id: string
  /** Opaque, stable key of the person: the pairwise `sub` is derived from it. */
  personKey: string
  ageOver: number
  methodClass: MethodClass
  sandbox: boolean
  /** When the check behind the pass took place: a passkey saved from it ages from here. */
  createdAt: Date
  expiresAt: Date
}

type PassDeps = { db: Database; keys: ServerKeys; clock: Clock }

const ISSUER = 'ofage:age-pass'

/**
 * A pass for an approved check, with its signed cookie value and the insert of its row, which runs in the
 * statement that issues the check's code (src/oauth/issue-code.ts) and only when the code is issued: a
 * refused code (a plan at its limit) leaves no pass behind. The person key of an earlier pass is kept, so one
 * person keeps one `sub` per client across checks.
 */
export async function prepareAgePass(
  deps: Omit<PassDeps, 'db'>,
  approved: { ageOver: number; methodClass: MethodClass; sandbox: boolean; personKey?: string },
): Promise<{ pass: AgePass; cookie: string; alongside: Alongside }> {
  const now = deps.clock.now()
  const pass: AgePass = {
    id: randomUUID(),
    personKey: approved.personKey ?? randomToken(32),
    ageOver: approved.ageOver,
    methodClass: approved.methodClass,
    sandbox: approved.sandbox,
    createdAt: now,
    expiresAt: new Date(now.getTime() + AGE_PASS_LIFETIME_MS),
  }
  // HS256 by node:crypto: 6–10 µs of CPU a cookie against jose's 19–31 through WebCrypto; read back with jose.
  const claims = { pk: pass.personKey, iss: ISSUER, jti: pass.id, iat: epochSeconds(now), exp: epochSeconds(pass.expiresAt) }
  const cookie = await compactJwt({ alg: 'HS256' }, claims, (input) => createHmac('sha256', deps.keys.agePassKey).update(input).digest())
  return {
    pass,
    cookie,
    alongside: {
      kind: 'age_pass',
      insert: (issued) =>
        sql`insert into age_passes (id, age_over, method_class, sandbox, created_at, expires_at)
          select ${sql.placeholder('passId')}::uuid, ${sql.placeholder('passAgeOver')}::integer, ${sql.placeholder('passMethodClass')}::text,
            ${sql.placeholder('passSandbox')}::boolean, ${sql.placeholder('passCreatedAt')}::timestamptz, ${sql.placeholder('passExpiresAt')}::timestamptz from ${issued}`,
      values: {
        passId: pass.id,
        passAgeOver: pass.ageOver,
        passMethodClass: pass.methodClass,
        passSandbox: pass.sandbox,
        passCreatedAt: now.toISOString(),
        passExpiresAt: pass.expiresAt.toISOString(),
      },
    },
  }
}

/**
 * Reads a pass cookie: a valid signature, not expired, and its row neither revoked nor expired. The age
 * and method come from the row, never from the cookie.
 */
export async function readAgePass(deps: PassDeps, cookie: string | undefined): Promise<AgePass | undefined> {
  if (!cookie || cookie.length > 2048) return undefined
  let payload
  try {
    ;({ payload } = await jwtVerify(cookie, deps.keys.agePassKey, {
      algorithms: ['HS256'],
      issuer: ISSUER,
      currentDate: deps.clock.now(),
      requiredClaims: ['jti', 'exp'],
    }))
  } catch (cause) {
    if (cause instanceof joseErrors.JOSEError) return undefined
    throw cause
  }
  if (typeof payload.pk !== 'string' || !/^[0-9a-f-]{36}$/.test(payload.jti!)) return undefined
  const [row] = await deps.db
    .select()
    .from(agePasses)
    .where(and(eq(agePasses.id, payload.jti!), isNull(agePasses.revokedAt), gt(agePasses.expiresAt, deps.clock.now())))
  if (!row) return undefined
  return {
    id: row.id,
    personKey: payload.pk,
    ageOver: row.ageOver,
    methodClass: row.methodClass,
    sandbox: row.sandbox,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
  }
}

export async function revokeAgePass(deps: PassDeps, id: string): Promise<void> {
  await deps.db.update(agePasses).set({ revokedAt: deps.clock.now() }).where(and(eq(agePasses.id, id), isNull(agePasses.revokedAt)))
}

/**
 * Whether a pass lets this browser skip the check for a client and threshold: old enough, not a sandbox
 * pass on a live client, and the client accepts age passes and the way the pass's own check was made.
 */
export function passCovers(pass: AgePass | undefined, client: { sandbox: boolean; methods: readonly string[] }, ageRequired: number): pass is AgePass {
  return pass !== undefined && pass.ageOver >= ageRequired && (client.sandbox || !pass.sandbox) && acceptsReverification(client, 'age_pass', pass.methodClass)
}

export async function pruneExpiredPasses(db: Database, before: Date): Promise<number> {
  const deleted = await db.delete(agePasses).where(lt(agePasses.expiresAt, before)).returning({ id: agePasses.id })
  return deleted.length
}
