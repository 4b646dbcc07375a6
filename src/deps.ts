import type { Config } from './config.ts'
import type { CertifiedKey } from './credentials/trust/reader-identity.ts'
import type { TrustStore } from './credentials/trust/trust-store.ts'
import type { VerifierKey } from './keys/verifier-key.ts'
import type { Database } from './db/client.ts'
import type { AgeEstimator } from './estimator/types.ts'
import type { ServerKeys } from './keys/server-keys.ts'
import type { Clock } from './lib/clock.ts'
import type { GateDirectory } from './gate/gate-directory.ts'
import type { Logger } from './lib/log.ts'
import type { Outbox } from './mail/outbox.ts'
import type { Challenge } from './liveness/challenge.ts'
import type { Metrics } from './ops/metrics.ts'
import type { RevocationCache } from './oauth/revocations.ts'

/** Everything the routes and services depend on, built once at start (src/index.ts) or by a test. */
export type AppDeps = {
  config: Config
  db: Database
  keys: ServerKeys
  clock: Clock
  log: Logger
  metrics: Metrics
  /** The face age estimator, when the face check is on (FACE_CHECK). */
  estimator?: AgeEstimator
  /**
   * The digital credential method, when CREDENTIAL_TRUST_LIST is set: whom we trust (the file and the imported
   * lists, read again when they change), how we sign OpenID4VP requests, and the operator's readerAuth
   * certificate for Annex C requests (CREDENTIAL_READER_*), if any.
   */
  credentials?: { trust: TrustStore; verifier: VerifierKey; readerAuth?: CertifiedKey }
  /** Every gated host and its client's gate settings, read again when any of them changes (src/gate/). */
  gate: GateDirectory
  /** The dashboard's emails ("Forgot password?"), when SMTP_URL is set. */
  outbox?: Outbox
  /** Verifications token validation found live, forgotten when any instance revokes one. */
  revocations?: RevocationCache
  /** Tests only: fixes the live challenge (poses and timing), so that a recorded clip can answer it. */
  pickChallenge?: () => Challenge
}
