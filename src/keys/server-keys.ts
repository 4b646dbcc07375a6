import type { Database } from '../db/client.ts'
import { randomToken } from '../lib/crypto.ts'
import { getOrCreateSecret } from './server-secrets.ts'
import { SigningKeys, type SigningKeysOptions } from './signing-keys.ts'

/** Every key the services need, loaded once at start and passed in explicitly. */
export type ServerKeys = {
  /** The deployment's one signing key, as this instance follows it (signing-keys.ts). */
  signing: SigningKeys
  /** HMAC key for client secrets: they are stored only as HMAC-SHA-256 under this key. */
  clientSecretKey: Uint8Array
  /** HMAC key that derives pairwise `sub` values, unlinkable across clients. */
  subjectKey: Uint8Array
  /** HMAC key (HS256) that signs age-pass cookies. */
  agePassKey: Uint8Array
  /** HMAC key for the dashboard's CSRF tokens (src/dashboard/csrf.ts): derived, never stored. */
  dashboardKey: Uint8Array
  /** HMAC key for the gate's cookies on gated hosts (src/gate/gate-cookie.ts). */
  gateKey: Uint8Array
}

/**
 * `serve`: a server (or a test standing for one), whose signing key must be the deployment's key in force.
 * A command (`serve: false`) only reads it, and generates none when `createSigningKey` is false.
 */
export async function loadServerKeys(db: Database, options: SigningKeysOptions & { serve: boolean; createSigningKey?: boolean }): Promise<ServerKeys> {
  const now = options.clock.now()
  const secret = async (name: string) =>
    Buffer.from(await getOrCreateSecret(db, name, () => randomToken(32), now), 'base64url')
  return {
    signing: await SigningKeys.load(db, { ...options, create: options.createSigningKey }),
    clientSecretKey: await secret('client_secret_hmac_key'),
    subjectKey: await secret('subject_hmac_key'),
    agePassKey: await secret('age_pass_hmac_key'),
    dashboardKey: await secret('dashboard_hmac_key'),
    gateKey: await secret('gate_hmac_key'),
  }
}
