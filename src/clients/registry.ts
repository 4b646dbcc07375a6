import { asc, eq, sql } from 'drizzle-orm'
import type { Database, Executor } from '../db/client.ts'
import { builtOnce } from '../db/prepared.ts'
import { clients, gateHosts } from '../db/schema.ts'
import { RuleError } from '../errors.ts'
import { randomToken } from '../lib/crypto.ts'
import { readHttpUrl, refuseCleartextUrl } from '../lib/http-url.ts'
import type { Limit } from '../config.ts'
import { hitsInWindow, windowHits, windowStart } from '../ratelimit/limits.ts'
import { readClientMethods, type ClientMethod } from './methods.ts'
import { isClientIdShape, type Client, type ClientChanges, type ClientDeps, type ClientRules, type NewClient } from './model.ts'
import { checkFaceBuffer, checkFaceBufferFloor, checkLimit, checkMinAge, checkRedirectUri, checkRedirectUriCount, readHomeUrl } from './rules.ts'
import { hashSecret } from './secrets.ts'

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
export async function findClientWithFailures(deps: ClientDeps, clientId: string, failures: { keys: string[]; limit: Limit } | undefined) {
  if (!isClientIdShape(clientId)) return undefined
  const keys = failures?.keys ?? []
  // Every client authentication runs this: with the one or two keys it has, Drizzle builds it once.
  if (failures && (keys.length === 1 || keys.length === 2)) {
    const start = windowStart(failures.limit, deps.clock.now())
    const [row] = await clientLookup(deps.db).execute({ clientId, key1: keys[0], key2: keys[1] ?? keys[0], start })
    return row
  }
  const [row] = await deps.db
    .select({ client: clients, failures: failures ? windowHits(keys, failures.limit, deps.clock.now()) : sql<null>`null` })
    .from(clients)
    .where(eq(clients.id, clientId))
  return row
}

/** {@link findClientWithFailures}'s statement, with the one or two keys an authentication counts. */
const clientLookup = builtOnce((db) => {
  const failures = hitsInWindow([sql.placeholder('key1'), sql.placeholder('key2')], sql.placeholder('start'))
  return db.select({ client: clients, failures }).from(clients).where(eq(clients.id, sql.placeholder('clientId'))).prepare('client_with_failures')
})

export async function findClient(db: Database, clientId: string): Promise<Client | undefined> {
  if (!isClientIdShape(clientId)) return undefined
  const [client] = await db.select().from(clients).where(eq(clients.id, clientId))
  return client
}

export async function listClients(db: Database): Promise<Client[]> {
  return db.select().from(clients).orderBy(asc(clients.createdAt), asc(clients.id))
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
