import type { Config } from './config.ts'
import { describeReaderIdentity, loadReaderIdentity } from './credentials/trust/reader-identity.ts'
import { loadTrustList } from './credentials/trust/trust-list.ts'
import { createTrustStore, TRUST_CHANNEL } from './credentials/trust/trust-store.ts'
import { openDatabase } from './db/client.ts'
import type { OnStatement } from './db/statement-log.ts'
import { migrateDatabase, type MigrationReport } from './db/migrate.ts'
import { ensureDemoClient } from './demo/demo-client.ts'
import type { AppDeps } from './deps.ts'
import { createAgeEstimator } from './estimator/pool.ts'
import { GateDirectory } from './gate/gate-directory.ts'
import type { AgeEstimator } from './estimator/types.ts'
import { loadServerKeys } from './keys/server-keys.ts'
import { loadVerifierKey } from './keys/verifier-key.ts'
import { systemClock, type Clock } from './lib/clock.ts'
import { jsonLogger, type Logger } from './lib/log.ts'
import { createSmtpOutbox } from './mail/outbox.ts'
import { createMetrics } from './ops/metrics.ts'
import { RevocationCache } from './oauth/revocations.ts'

/**
 * `migrations`: what opening the database applied (`ofage migrate` says it; the server logs it at start);
 * absent where a test builds services around a database it migrated itself.
 */
export type Services = { deps: AppDeps; migrations?: MigrationReport; close(): Promise<void> }

/**
 * Starts the face estimator's workers. The models load in the background: /readyz answers 503 until they
 * have, and a failure to load says so in one log line (the server keeps serving the other methods).
 */
function startEstimator(config: Config, log: Logger): AgeEstimator {
  const estimator = createAgeEstimator({ workers: config.face.workers, maxQueue: config.face.queue, nice: config.face.nice })
  // A server stopped while the models still load has nothing wrong to report.
  let closing = false
  estimator.ready.then(
    () => {
      const runtime = estimator.modelRuntime
      log.info('face_check_ready', { workers: config.face.workers, model_runtime: runtime?.name })
      // The face check still works, at more than twice the cost a frame.
      if (runtime?.name === 'tfjs-wasm') log.error('face_check_slow_runtime', { message: runtime.reason, hint: 'onnxruntime could not load: the face models run on WebAssembly (docs/deploy.md)' })
    },
    (cause) =>
      closing || log.error('face_check_unavailable', { message: String(cause instanceof Error ? cause.message : cause), hint: 'set FACE_CHECK=0 to run without the face check' }),
  )
  return {
    ready: estimator.ready,
    get modelRuntime() {
      return estimator.modelRuntime
    },
    analyze: (image, views) => estimator.analyze(image, views),
    close: () => {
      closing = true
      return estimator.close()
    },
  }
}

/**
 * Opens the database, applies migrations and loads the keys: what the server, the CLI and the tests
 * all need before they can call a service. Anything that fails closes what was opened.
 */
export async function startServices(
  config: Config,
  options: {
    clock?: Clock
    log?: Logger
    holder?: string
    estimator?: boolean
    pickChallenge?: AppDeps['pickChallenge']
    /** False: fail (ConfigError) rather than generate the signing key when the database holds none yet. */
    createSigningKey?: boolean
    /**
     * True (the default) for a server, and for a test standing for one: its signing key must be the
     * deployment's key in force (the first server puts its own in force), and it follows rotations. False
     * for a CLI command that opens the database itself: it never signs, so it only reads the key in force.
     */
    serve?: boolean
    /**
     * True for the server: the demo client follows this PUBLIC_URL. Otherwise (a CLI command opening the
     * database itself) it is only created when missing, never pointed at the shell's address.
     */
    syncDemoClient?: boolean
    /** Hears every statement sent to the database (src/db/statement-log.ts): tests and the bench count them. */
    onStatement?: OnStatement
  } = {},
): Promise<Services> {
  const clock = options.clock ?? systemClock
  // Read before the database is opened: a bad file stops start-up with nothing to undo.
  const trustList = config.credentials && loadTrustList(config.credentials.trustListFile, { production: config.production })
  const identity = config.credentials && (await loadReaderIdentity(config.credentials, clock.now()))
  // Each of the server's processes gets its share of DATABASE_POOL.
  const maxConnections = Math.max(2, Math.ceil(config.databasePool / config.workers))
  const open = await openDatabase(config.database, { holder: options.holder ?? 'the ofage server', maxConnections, onStatement: options.onStatement })
  try {
    const migrations = await migrateDatabase(open)
    const log = options.log ?? jsonLogger()
    const serve = options.serve ?? true
    const keys = await loadServerKeys(open.db, { signingKeyFile: config.signingKeyFile, clock, log, serve, createSigningKey: options.createSigningKey })
    if (serve) await keys.signing.listen(open)
    const revocations = new RevocationCache()
    await revocations.listen(open)
    const gate = new GateDirectory(open.db, clock)
    await gate.listen(open)
    const deps: AppDeps = { config, db: open.db, keys, clock, log, metrics: createMetrics(), gate, revocations, pickChallenge: options.pickChallenge }
    if (trustList && identity) {
      const verifier = identity.requestSigning ?? (await loadVerifierKey(open.db, { appUrl: config.appUrl }, clock.now()))
      const trust = createTrustStore(deps, { file: config.credentials!.trustListFile, production: config.production, initial: trustList })
      // A change of imported trust is heard at once; whatever was read before listening (re)started may be stale.
      await open.listen(TRUST_CHANNEL, () => trust.invalidate(), () => trust.invalidate())
      deps.credentials = { trust, verifier, readerAuth: identity.readerAuth }
      if (identity.readerAuth || identity.requestSigning) deps.log.info('credential_certificates', describeReaderIdentity(identity))
    }
    // No connection until the first email: a CLI command that sends none never reaches the SMTP server.
    if (config.mail) deps.outbox = createSmtpOutbox(config.mail, deps.log)
    if (config.demo) await ensureDemoClient(deps, { sync: options.syncDemoClient ?? false })
    // Only the server runs the face check; CLI commands never load its models.
    if (options.estimator && config.face.enabled) deps.estimator = startEstimator(config, deps.log)
    return {
      deps,
      migrations,
      async close() {
        // What the last requests asked to send goes out before the database it is composed from closes.
        await deps.outbox?.close()
        await deps.estimator?.close()
        await open.close()
      },
    }
  } catch (cause) {
    await open.close().catch(() => {})
    throw cause
  }
}
