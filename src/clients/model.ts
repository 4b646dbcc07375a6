import type { Database } from '../db/client.ts'
import type { clients, ClientStatus } from '../db/schema.ts'
import type { Clock } from '../lib/clock.ts'
import { isCleartextUrl } from '../lib/http-url.ts'
import type { ServerKeys } from '../keys/server-keys.ts'

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

/** Client ids are printable ASCII; anything else (a NUL byte, which Postgres refuses in text) names no client. */
export function isClientIdShape(clientId: string): boolean {
  return /^[\x21-\x7e]{1,256}$/.test(clientId)
}

/**
 * Where a visitor at a dead end (a failed check, too many attempts) goes back to: the client's registered
 * home address, else the origin of the session's redirect URI. Both were registered by the operator, so
 * the link never carries anything from the request, and never the code or state.
 */
export function siteHomeUrl(client: Pick<Client, 'homeUrl'>, redirectUri: string): string {
  return client.homeUrl ?? `${new URL(redirectUri).origin}/`
}
