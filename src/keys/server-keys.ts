import type { Database } from '../db/client.ts'
import { randomToken } from '../lib/crypto.ts'
import { getOrCreateSecret } from './server-secrets.ts'
import { loadSigningKey, type SigningKey } from './signing-key.ts'

/** Every key the services need, loaded once at start and passed in explicitly. */
export type ServerKeys = {
  signing: SigningKey
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

export async function loadServerKeys(db: Database, signingKeyFile: string | undefined, now: Date, options: { createSigningKey?: boolean } = {}): Promise<ServerKeys> {
  const secret = async (name: string) =>
    Buffer.from(await getOrCreateSecret(db, name, () => randomToken(32), now), 'base64url')
  return {
    signing: await loadSigningKey(db, signingKeyFile, now, { create: options.createSigningKey }),
    clientSecretKey: await secret('client_secret_hmac_key'),
    subjectKey: await secret('subject_hmac_key'),
    agePassKey: await secret('age_pass_hmac_key'),
    dashboardKey: await secret('dashboard_hmac_key'),
    gateKey: await secret('gate_hmac_key'),
  }
}
