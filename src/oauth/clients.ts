import { asc, eq, sql } from 'drizzle-orm'
import type { Database, Executor } from '../db/client.ts'
import { clients, gateHosts, type ClientStatus } from '../db/schema.ts'
import { OAuthError, RuleError } from '../errors.ts'
import { constantTimeEqual, hmacHex, randomToken, sha256Hex } from '../lib/crypto.ts'
import { isCleartextUrl, readHttpUrl, refuseCleartextUrl } from '../lib/http-url.ts'
import type { Limit } from '../config.ts'
import { checkLimit as refuseIfLimited, recordHit, refuseAtLimit, windowHits } from '../ratelimit/limits.ts'
import type { Clock } from '../lib/clock.ts'
import type { ServerKeys } from '../keys/server-keys.ts'
import { enqueueEvent } from '../webhooks/events.ts'
import { minimumClientFaceBuffer } from '../verification/methods/face-policy.ts'
import { readClientMethods, type ClientMethod } from './client-methods.ts'

export type Client = typeof clients.$inferSelect

export type ClientDeps = { db: Database; keys: ServerKeys; clock: Clock }

/** The deployment's settings a client's own are checked against: FACE_AGE_BUFFER, which a client's buffer may not undercut. */
export type ClientRules = { deploymentFaceBuffer?: number | undefined }

export type NewClient = {
  name: string
  redirectUris: string[]
  minAge?: number | null
  verificationLimit?: number | null
  faceBuffer?: number | null
  /** The ways the client accepts (face, credential, passkey, age_pass); every way when not given. */
  methods?: readonly string[]
  homeUrl?: string | null
  sandbox?: boolean
  /** PKCE (S256) on every authorization request of this client. */
  requirePkce?: boolean
  /** Only pushed authorization requests (RFC 9126) open the page for this client. */
  requirePushedRequests?: boolean
  /** Only for importing a client from elsewhere; normally a fresh 256-bit secret is generated. */
  secret?: string
  /** Only for clients the service creates itself (the demo); normally generated. */
  id?: string
}

/** A client as the CLI and docs show it: wire names, never the secret's hash. */
export function describeClient(client: Client) {
  return {
    client_id: client.id,
    name: client.name,
    redirect_uris: client.redirectUris,
    min_age: client.minAge,
    verification_limit: client.verificationLimit,
    face_buffer: client.faceBuffer,
    methods: client.methods,
    home_url: client.homeUrl,
    sandbox: client.sandbox,
    require_pkce: client.requirePkce,
    require_pushed_requests: client.requirePushedRequests,
    status: client.status,
    created_at: client.createdAt.toISOString(),
    /** Set after a rotation with an overlap: until then the previous secret is accepted too. */
    rotation_overlap_until: client.previousSecretExpiresAt?.toISOString() ?? null,
    /** A live client's http addresses, registered before https was required: they work, and should move. */
    needs_https: cleartextAddresses(client),
  }
}

/**
 * The redirect URIs and home URL of a live client that use plain http off loopback. New ones are refused
 * (RFC 9700 §2.6); rows registered before that keep working, and the CLI and dashboard list them here.
 */
export function cleartextAddresses(client: Pick<Client, 'sandbox' | 'redirectUris' | 'homeUrl'>): string[] {
  if (client.sandbox) return []
  return [...client.redirectUris, ...(client.homeUrl ? [client.homeUrl] : [])].filter((url) => isCleartextUrl(url))
}

/** Creates a client and returns it with its secret, which is shown this once and stored only hashed. */
export async function createClient(deps: ClientDeps & ClientRules, input: NewClient): Promise<{ client: Client; secret: string }> {
  const name = input.name.trim()
  if (!name) throw new RuleError('name_empty', 'name must not be empty')
  if (input.redirectUris.length === 0) throw new RuleError('redirect_uri_required', 'at least one redirect URI is required')
  const sandbox = input.sandbox ?? false
  input.redirectUris.forEach((uri) => refuseCleartextUrl('a redirect URI', readHttpUrl('redirect URI', uri), sandbox))
  checkRedirectUriCount(new Set(input.redirectUris).size)
  checkMinAge(input.minAge)
  checkLimit(input.verificationLimit)
  checkFaceBuffer(input.faceBuffer)
  checkFaceBufferFloor(input.faceBuffer ?? null, input.minAge ?? null, deps.deploymentFaceBuffer)
  const methods = input.methods === undefined ? undefined : readClientMethods(input.methods)
  const homeUrl = readHomeUrl(input.homeUrl)
  if (homeUrl) refuseCleartextUrl('the home URL', new URL(homeUrl), sandbox)
  const secret = input.secret ?? randomToken(32)
  const [client] = await deps.db
    .insert(clients)
    .values({
      // A sandbox client's id says so wherever it is pasted: config files, logs, tokens' `aud`.
      id: input.id ?? `${input.sandbox ? 'cl_test_' : 'cl_'}${randomToken(12)}`,
      name,
      secretHash: hashSecret(deps.keys, secret),
      redirectUris: [...new Set(input.redirectUris)],
      minAge: input.minAge ?? null,
      verificationLimit: input.verificationLimit ?? null,
      faceBuffer: input.faceBuffer ?? null,
      ...(methods && { methods }),
      homeUrl: homeUrl ?? null,
      sandbox,
      requirePkce: input.requirePkce ?? false,
      requirePushedRequests: input.requirePushedRequests ?? false,
      createdAt: deps.clock.now(),
    })
    .returning()
  return { client: client!, secret }
}

/** A client and, read in the same statement, the highest of some failure counters in their window. */
async function findClientWithFailures(deps: ClientDeps, clientId: string, failures: { keys: string[]; limit: Limit } | undefined) {
  if (!isClientIdShape(clientId)) return undefined
  const [row] = await deps.db
    .select({ client: clients, failures: failures ? windowHits(failures.keys, failures.limit, deps.clock.now()) : sql<null>`null` })
    .from(clients)
    .where(eq(clients.id, clientId))
  return row
}

/** Client ids are printable ASCII; anything else (a NUL byte, which Postgres refuses in text) names no client. */
export function isClientIdShape(clientId: string): boolean {
  return /^[\x21-\x7e]{1,256}$/.test(clientId)
}

export async function findClient(db: Database, clientId: string): Promise<Client | undefined> {
  if (!isClientIdShape(clientId)) return undefined
  const [client] = await db.select().from(clients).where(eq(clients.id, clientId))
  return client
}

export async function listClients(db: Database): Promise<Client[]> {
  return db.select().from(clients).orderBy(asc(clients.createdAt), asc(clients.id))
}

export type ClientChanges = {
  name?: string
  status?: ClientStatus
  minAge?: number | null
  verificationLimit?: number | null
  faceBuffer?: number | null
  methods?: readonly string[]
  homeUrl?: string | null
  addRedirectUris?: string[]
  removeRedirectUris?: string[]
  requirePkce?: boolean | undefined
  requirePushedRequests?: boolean | undefined
}

/**
 * Applies changes to a client; returns undefined when no such client exists. The row is locked while the
 * redirect URIs are worked out from it, so two edits at once (two dashboard users) never lose one.
 */
export async function updateClient(db: Database, clientId: string, changes: ClientChanges, rules: ClientRules = {}): Promise<Client | undefined> {
  if (!isClientIdShape(clientId)) return undefined
  const name = changes.name?.trim()
  if (name === '') throw new RuleError('name_empty', 'name must not be empty')
  changes.addRedirectUris?.forEach(checkRedirectUri)
  checkMinAge(changes.minAge)
  checkLimit(changes.verificationLimit)
  checkFaceBuffer(changes.faceBuffer)
  const methods: ClientMethod[] | undefined = changes.methods === undefined ? undefined : readClientMethods(changes.methods)
  const homeUrl = readHomeUrl(changes.homeUrl)
  return db.transaction(async (tx) => {
    const [client] = await tx.select().from(clients).where(eq(clients.id, clientId)).for('update')
    if (!client) return undefined
    await refuseRemovingGateCallbacks(tx, client.id, changes.removeRedirectUris ?? [])
    // Checked on the row as it will be: a lower minimum age lets the client ask for thresholds that need more.
    if (changes.faceBuffer !== undefined || changes.minAge !== undefined) {
      const buffer = changes.faceBuffer === undefined ? client.faceBuffer : changes.faceBuffer
      checkFaceBufferFloor(buffer, changes.minAge === undefined ? client.minAge : changes.minAge, rules.deploymentFaceBuffer)
    }
    // Only what is new must be https: an http address registered before the rule keeps working (it is
    // listed as needing https), and re-saving it unchanged with another setting is not refused.
    for (const uri of changes.addRedirectUris ?? []) {
      if (!client.redirectUris.includes(uri)) refuseCleartextUrl('a redirect URI', new URL(uri), client.sandbox)
    }
    if (homeUrl && homeUrl !== client.homeUrl) refuseCleartextUrl('the home URL', new URL(homeUrl), client.sandbox)
    const removed = new Set(changes.removeRedirectUris ?? [])
    const redirectUris = [...new Set([...client.redirectUris, ...(changes.addRedirectUris ?? [])])].filter((u) => !removed.has(u))
    if (redirectUris.length === 0) throw new RuleError('redirect_uri_last', 'a client must keep at least one redirect URI')
    if (redirectUris.length > client.redirectUris.length) checkRedirectUriCount(redirectUris.length)
    const [updated] = await tx
      .update(clients)
      .set({
        redirectUris,
        ...(name !== undefined && { name }),
        ...(changes.status !== undefined && { status: changes.status }),
        ...(changes.minAge !== undefined && { minAge: changes.minAge }),
        ...(changes.verificationLimit !== undefined && { verificationLimit: changes.verificationLimit }),
        ...(changes.faceBuffer !== undefined && { faceBuffer: changes.faceBuffer }),
        ...(methods !== undefined && { methods }),
        ...(homeUrl !== undefined && { homeUrl }),
        ...(changes.requirePkce !== undefined && { requirePkce: changes.requirePkce }),
        ...(changes.requirePushedRequests !== undefined && { requirePushedRequests: changes.requirePushedRequests }),
      })
      .where(eq(clients.id, clientId))
      .returning()
    return updated
  })
}

/** A gated host's callback leaves the redirect URIs with its host (src/gate/gate-settings.ts), never alone. */
async function refuseRemovingGateCallbacks(tx: Executor, clientId: string, uris: string[]): Promise<void> {
  if (uris.length === 0) return
  const gated = await tx.select({ origin: gateHosts.origin }).from(gateHosts).where(eq(gateHosts.clientId, clientId))
  const callback = uris.find((uri) => gated.some(({ origin }) => uri === `${origin}/.ofage/callback`))
  if (callback) throw new RuleError('redirect_uri_of_gate', `${callback} is the callback of a gated host: remove the gate host instead`)
}

/**
 * Where a visitor at a dead end (a failed check, too many attempts) goes back to: the client's registered
 * home address, else the origin of the session's redirect URI. Both were registered by the operator, so
 * the link never carries anything from the request, and never the code or state.
 */
export function siteHomeUrl(client: Pick<Client, 'homeUrl'>, redirectUri: string): string {
  return client.homeUrl ?? `${new URL(redirectUri).origin}/`
}

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

/**
 * Authenticates a client from an `Authorization: Basic` header (SPEC.md §5). Unknown id and wrong secret
 * are the same `invalid_client`; a suspended client that proves its secret learns `client_suspended`.
 * With `limits`, failures are counted per address and per client id from that address, and an address past
 * its limit gets 429 before any secret is checked. Not per client id alone: anyone could then lock a site
 * out of its own API by failing on purpose, and a 256-bit secret is not guessed by trying.
 */
export async function authenticateClient(
  deps: ClientDeps,
  authorization: string | undefined,
  limits?: { address: string; authFailures: Limit },
  body?: PostedCredentials,
): Promise<Client> {
  const addressKey = limits && `auth:${limits.address}`
  const credentials = presentedCredentials(authorization, body)
  const clientKey = limits && credentials && `auth:${limits.address}:${sha256Hex(credentials.clientId).slice(0, 32)}`
  const limitKeys = clientKey ? [addressKey!, clientKey] : [addressKey!]
  // The failure counters are read with the client, in one statement; without a client row to read them
  // beside (no credentials, an unknown id), on their own.
  const found = credentials && (await findClientWithFailures(deps, credentials.clientId, limits && { keys: limitKeys, limit: limits.authFailures }))
  if (limits) {
    if (found) refuseAtLimit(found.failures, limits.authFailures, deps.clock.now())
    else await refuseIfLimited(deps, limitKeys, limits.authFailures)
  }
  try {
    if (!credentials) throw new OAuthError('invalid_client', 'Client authentication failed: send HTTP Basic client_id:client_secret, or client_id and client_secret in the form')
    const client = found?.client
    // Hash even for an unknown id so both failures take the same time.
    const presented = hashSecret(deps.keys, credentials.secret)
    if (!client || !(constantTimeEqual(presented, client.secretHash) || acceptsPreviousSecret(client, presented, deps.clock.now()))) {
      throw new OAuthError('invalid_client', 'Client authentication failed')
    }
    if (client.status !== 'active') throw new OAuthError('client_suspended', 'This client is suspended')
    return client
  } catch (cause) {
    if (limits && cause instanceof OAuthError && cause.code === 'invalid_client') {
      await recordHit(deps, addressKey!, limits.authFailures)
      if (clientKey) await recordHit(deps, clientKey, limits.authFailures)
    }
    throw cause
  }
}

/** During a rotation's overlap, the secret it replaced. */
function acceptsPreviousSecret(client: Client, presented: string, now: Date): boolean {
  const { previousSecretHash, previousSecretExpiresAt } = client
  return previousSecretHash !== null && previousSecretExpiresAt !== null && now < previousSecretExpiresAt && constantTimeEqual(presented, previousSecretHash)
}

/** `client_id` and `client_secret` as a form body may carry them (RFC 6749 §2.3.1, client_secret_post). */
export type PostedCredentials = { client_id?: string | undefined; client_secret?: string | undefined }

/**
 * The credentials a request presents: HTTP Basic (SPEC.md §5) or, where the route reads a body, the
 * body's `client_id` and `client_secret`. RFC 6749 §2.3: "The client MUST NOT use more than one
 * authentication method in each request", so both at once is `invalid_request`; a `client_id` beside
 * Basic credentials must name the same client.
 */
function presentedCredentials(authorization: string | undefined, body: PostedCredentials | undefined): { clientId: string; secret: string } | undefined {
  const posted = body?.client_secret !== undefined
  if (authorization !== undefined && posted) throw new OAuthError('invalid_request', 'Use one client authentication method: HTTP Basic or client_secret_post, not both')
  if (posted) return body!.client_id ? { clientId: body!.client_id, secret: body!.client_secret! } : undefined
  const basic = parseBasicAuthorization(authorization)
  if (basic && body?.client_id !== undefined && body.client_id !== basic.clientId) {
    throw new OAuthError('invalid_request', 'client_id in the body differs from the client of the Authorization header')
  }
  return basic
}

/**
 * Splits an HTTP Basic header. RFC 6749 §2.3.1: client id and secret are form-urlencoded before they
 * are joined with ":" and base64-encoded, so each part is decoded after the split ("+" is a space).
 */
export function parseBasicAuthorization(header: string | undefined): { clientId: string; secret: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header ?? '')
  if (!match) return undefined
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon <= 0) return undefined
  try {
    const clientId = formDecode(decoded.slice(0, colon))
    const secret = formDecode(decoded.slice(colon + 1))
    return secret ? { clientId, secret } : undefined
  } catch {
    return undefined
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replaceAll('+', ' '))
}

function hashSecret(keys: ServerKeys, secret: string): string {
  return hmacHex(keys.clientSecretKey, secret)
}

/** A client's redirect URIs are a short list an operator reads, not a store: bounded, so no form can grow a row without end. */
export const MAX_REDIRECT_URIS = 50

function checkRedirectUriCount(count: number): void {
  if (count > MAX_REDIRECT_URIS) throw new RuleError('redirect_uris_too_many', `a client has at most ${MAX_REDIRECT_URIS} redirect URIs`)
}

/** RFC 6749 §3.1.2: an absolute URI without a fragment; compared later as an exact string. */
export function checkRedirectUri(uri: string): void {
  readHttpUrl('redirect URI', uri)
}

/**
 * Shown as a link on the page: the same rules as a redirect URI, since both send the visitor to the site.
 * Kept as the URL parser writes it, so no stray whitespace or unescaped character reaches the href.
 */
function readHomeUrl(url: string | null | undefined): string | null | undefined {
  if (url == null) return url
  return readHttpUrl('home URL', url).href
}

function checkMinAge(minAge: number | null | undefined): void {
  if (minAge != null && !(Number.isInteger(minAge) && minAge >= 1 && minAge <= 99)) {
    throw new RuleError('min_age_range', 'min_age must be an integer from 1 to 99')
  }
}

function checkLimit(limit: number | null | undefined): void {
  if (limit != null && !(Number.isInteger(limit) && limit >= 0)) {
    throw new RuleError('limit_range', 'verification_limit must be a whole number of verifications, or none')
  }
}

function checkFaceBuffer(buffer: number | null | undefined): void {
  if (buffer != null && !(Number.isInteger(buffer) && buffer >= 0 && buffer <= 30)) {
    throw new RuleError('face_buffer_range', 'face_buffer must be a whole number of years from 0 to 30, or none')
  }
}

/**
 * A client's face buffer may only raise the default (face-policy.ts `minimumClientFaceBuffer`): for every
 * threshold it may ask for, from its minimum age, and never under the deployment's FACE_AGE_BUFFER.
 */
function checkFaceBufferFloor(buffer: number | null, minAge: number | null, deploymentBuffer: number | undefined): void {
  if (buffer === null) return
  const least = minimumClientFaceBuffer(minAge, deploymentBuffer)
  if (buffer >= least.years) return
  const range = minAge === null ? 'without a minimum age it may ask for any age from 1 (set min_age to narrow that)' : `its minimum age is ${minAge}`
  throw new RuleError(
    'face_buffer_under_floor',
    `face_buffer ${buffer} is under the default of ${least.years} years for age ${least.threshold}, which this client may ask for (${range}): a client may only raise it`,
  )
}
