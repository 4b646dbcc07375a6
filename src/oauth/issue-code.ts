import { randomUUID } from 'node:crypto'
import { sql, type SQL } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { sqlBuiltOnce } from '../db/prepared.ts'
import { rowsOf } from '../db/rows.ts'
import type { MethodClass } from '../db/schema.ts'
import { OAuthError } from '../errors.ts'
import { hmacHex, randomToken, sha256Hex } from '../lib/crypto.ts'
import type { ServerKeys } from '../keys/server-keys.ts'
import { countVerification, monthDays, monthToDateAfterLock, verificationCount } from '../usage/counters.ts'
import { enqueueEventFrom, payloadPieces, payloadText } from '../webhooks/events.ts'
import { CODE_LIFETIME_MS, type CodeDeps } from './codes.ts'

export type ApprovedCheck = {
  clientId: string
  /** The redirect URI of the authorization request; must be registered for the client. */
  redirectUri: string
  state?: string | null
  /** The PKCE challenge (S256) of the authorization request, if it sent one. */
  codeChallenge?: string | null
  /** The threshold requested and proven (`age_required`). */
  ageOver: number
  methodClass: MethodClass
  reverification?: boolean
  /** A stable, opaque key for the person (from their age pass); absent, the subject is fresh. */
  personKey?: string
  /** For the audit row: the method that approved (`sandbox`, `face`, `age_pass`) and its buffer, if any. */
  method?: string
  ageBuffer?: number | null
}

export type IssuedCode = { code: string; transactionId: string; expiresAt: Date }

/**
 * A part that a caller adds to the code's statement, which is built once per shape (src/db/prepared.ts): its
 * SQL names its values only by placeholders (prefixed, so that parts never share a name), and `values` gives
 * them for this call. `kind` tells one part's SQL from another's: the statement is built once per kind.
 */
export type StatementPart = { kind: string; values: Record<string, unknown> }

/**
 * What must be taken for the code to be issued, in the code's own statement (the page's session, claimed
 * once): `update` changes a row only when `approved` (the client's checks passed) holds one, and returns a
 * row when it did; when it changes none, nothing is written and `refused` is thrown.
 */
export type ApprovalClaim = StatementPart & { update(approved: SQL): SQL; refused(): Error }

/** Written with the code and only with it (the page's age pass): an `insert … select … from issued`. */
export type Alongside = StatementPart & { insert(issued: SQL): SQL }

export type IssueOptions = {
  claim?: ApprovalClaim
  alongside?: Alongside | undefined
  /**
   * Whether the client has a plan limit, as the caller last saw it: only then is its row locked. A wrong
   * guess costs a second statement, never the limit (the statement reads the row).
   */
  limited?: boolean
}

type Outcome = { status: string; redirect_registered: boolean; verification_limit: number | null; used: number; issued: number }

/**
 * Records an approved check and issues its authorization code, in one statement: the client's checks, the
 * claim (`options.claim`), the audit row, the usage count, the code, the webhook events and what goes with
 * them are written together or not at all. With a plan limit, the statement locks the client row and only
 * then counts the month (migration 0021), so concurrent completions are counted one at a time and the limit
 * is never exceeded (`payment_required`).
 */
export async function issueCode(deps: CodeDeps, check: ApprovedCheck, options: IssueOptions = {}): Promise<IssuedCode> {
  if (!Number.isInteger(check.ageOver) || check.ageOver < 1 || check.ageOver > 99) {
    throw new OAuthError('invalid_request', 'age_required must be an integer from 1 to 99')
  }
  const now = deps.clock.now()
  const code = randomToken(32)
  const transactionId = randomUUID()
  const expiresAt = new Date(now.getTime() + CODE_LIFETIME_MS)
  const subject = pairwiseSubject(deps.keys, check.clientId, check.personKey ?? randomToken(32))
  const values = approvalValues({ ...check, now, code, transactionId, expiresAt, subject }, options)
  let limited = options.limited ?? false
  for (;;) {
    const [outcome] = rowsOf<Outcome>(await approvalStatement(deps.db, limited, options).execute(values))
    if (!outcome) throw new OAuthError('invalid_client', 'Unknown client')
    if (outcome.issued === 1) return { code, transactionId, expiresAt }
    if (outcome.status !== 'active') throw new OAuthError('client_suspended', 'This client is suspended')
    if (!outcome.redirect_registered) throw new OAuthError('invalid_redirect_uri', 'redirect_uri is not registered for this client')
    if (outcome.verification_limit !== null && !limited) {
      // The client has a limit after all: again, with its row locked.
      limited = true
      continue
    }
    if (outcome.verification_limit !== null && outcome.used >= outcome.verification_limit) {
      throw new OAuthError('payment_required', "This client's plan has reached its verification limit for the month")
    }
    throw options.claim?.refused() ?? new Error('the approval wrote nothing')
  }
}

/**
 * The approval as one statement of data-modifying CTEs. They all see the snapshot the statement began with,
 * so each write reads from the one before it (`approved`, then `issued`), and the client is read once. A
 * client without a limit is read, not locked: its completions do not wait for each other. With a limit, the
 * `for update` makes racing completions of the client wait here; Postgres then re-reads the locked row
 * (EvalPlanQual), but the usage counters read in the same statement would still show its start, which is why
 * the month is counted by a function that takes its own snapshot, after the lock.
 *
 * Built once per shape and database (with or without the lock, the claim and what goes alongside, by kind),
 * its values are placeholders (`approvalValues`): Drizzle took 90 µs a completion to build it.
 */
function approvalStatement(db: Database, limited: boolean, options: IssueOptions) {
  const shape = `${limited ? 'limited' : 'open'}_${options.claim?.kind ?? 'unclaimed'}_${options.alongside?.kind ?? 'alone'}`
  let statement = approvalStatements.get(shape)
  if (!statement) approvalStatements.set(shape, (statement = sqlBuiltOnce(`approval_${shape}`, () => approvalSql(limited, options))))
  return statement(db)
}

const approvalStatements = new Map<string, ReturnType<typeof sqlBuiltOnce>>()

const value = (name: string) => sql.placeholder(name)

/** What the events' payloads take from the statement itself, not from the call: the client's sandbox flag and plan limit. */
const approvedEventSql = { sandbox: sql`issued.sandbox` }
const limitEventSql = { verification_limit: sql`reaching.verification_limit` }

function approvalSql(limited: boolean, options: IssueOptions): SQL {
  const client = sql`select id, status, verification_limit, sandbox, ${value('redirectUri')}::text = any(redirect_uris) as redirect_registered
    from clients where id = ${value('clientId')}::text ${limited ? sql`for update` : sql``}`
  const used = limited ? monthToDateAfterLock(sql`client.id`, value('monthStart'), value('monthEnd')) : sql`0`
  const underLimit = limited ? sql`(verification_limit is null or used < verification_limit)` : sql`verification_limit is null`
  const claim = options.claim
    ? sql`claim as (${options.claim.update(sql`approved`)}), issued as (select approved.* from approved, claim)`
    : sql`issued as (select * from approved)`
  const count = { clientId: value('clientId'), day: value('day'), ageOnly: value('ageOnly'), biometric: value('biometric'), reverification: value('reverification') }
  return sql`with client as (${client}),
    counted as (select client.*, ${used} as used from client),
    approved as (select used, verification_limit, sandbox from counted where status = 'active' and redirect_registered and ${underLimit}),
    ${claim},
    audit as (
      insert into audit_logs (transaction_id, client_id, subject, method_class, verification_level, age_over, method, age_buffer, created_at)
      select ${value('transactionId')}::uuid, ${value('clientId')}::text, ${value('subject')}::text, ${value('methodClass')}::text, ${value('level')}::text,
        ${value('ageOver')}::integer, ${value('method')}::text, ${value('ageBuffer')}::integer, ${value('at')}::timestamptz
      from issued
      returning transaction_id
    ),
    counter as (${countVerification(sql`issued`, count)}),
    code as (
      insert into auth_codes (code_hash, client_id, transaction_id, redirect_uri, state, code_challenge, created_at, expires_at)
      select ${value('codeHash')}::text, ${value('clientId')}::text, audit.transaction_id, ${value('redirectUri')}::text, ${value('state')}::text,
        ${value('codeChallenge')}::text, ${value('at')}::timestamptz, ${value('expiresAt')}::timestamptz
      from audit
    ),
    approved_event as (${enqueueEventFrom(sql`issued`, value('clientId'), 'verification.approved', payloadText('verification.approved', approvedEventSql, 'approvedEvent'), value('at'))}),
    limit_event as (${enqueueEventFrom(
      // The completion that uses the plan's last verification of the month says so, once.
      sql`(select * from issued where used + 1 = verification_limit) as reaching`,
      value('clientId'),
      'plan.limit_reached',
      payloadText('plan.limit_reached', limitEventSql, 'limitEvent'),
      value('at'),
    )})
    ${options.alongside ? sql`, alongside as (${options.alongside.insert(sql`issued`)})` : sql``}
    select status, redirect_registered, verification_limit, used, (select count(*)::integer from issued) as issued from counted`
}

/** The values of {@link approvalSql}'s placeholders for one approval. */
function approvalValues(
  check: ApprovedCheck & { now: Date; code: string; transactionId: string; expiresAt: Date; subject: string },
  options: IssueOptions,
): Record<string, unknown> {
  const at = check.now.toISOString()
  const reverification = check.reverification ?? false
  const level = reverification ? 're_verification' : 'first_verification'
  const { start, end } = monthDays(check.now)
  const { clientId, ...count } = verificationCount({ clientId: check.clientId, at: check.now, methodClass: check.methodClass, reverification })
  const approvedEvent = { client_id: check.clientId, transaction_id: check.transactionId, age_over: check.ageOver, method_class: check.methodClass, verification_level: level, ...approvedEventSql }
  const limitEvent = { client_id: check.clientId, ...limitEventSql, month: at.slice(0, 7) }
  return {
    clientId,
    ...count,
    redirectUri: check.redirectUri,
    monthStart: start,
    monthEnd: end,
    transactionId: check.transactionId,
    subject: check.subject,
    methodClass: check.methodClass,
    level,
    ageOver: check.ageOver,
    method: check.method ?? null,
    ageBuffer: check.ageBuffer ?? null,
    at,
    codeHash: sha256Hex(check.code),
    state: check.state ?? null,
    codeChallenge: check.codeChallenge ?? null,
    expiresAt: check.expiresAt.toISOString(),
    ...payloadPieces('verification.approved', approvedEvent, check.now, 'approvedEvent'),
    ...payloadPieces('plan.limit_reached', limitEvent, check.now, 'limitEvent'),
    ...options.claim?.values,
    ...options.alongside?.values,
  }
}

/** `sub` is pairwise: stable for one person at one client, unlinkable across clients (DESIGN.md). */
function pairwiseSubject(keys: ServerKeys, clientId: string, personKey: string): string {
  return hmacHex(keys.subjectKey, `${clientId}\u0000${personKey}`)
}
