import type { Database, OpenDatabase } from '../db/client.ts'
import type { Clock } from '../lib/clock.ts'
import type { Logger } from '../lib/log.ts'
import { reportInstance, type InstanceIdentity } from './instance-reports.ts'
import { claimKeyInForce, readStoredKeys, SIGNING_KEY_CHANNEL, type KeyInForce, type StoredKeys } from './key-in-force.ts'
import { loadOwnKey, notTheKeyInForce, readOwnKey } from './own-key.ts'
import { publicKeyFromJwk, type PublicKeyForms, type SigningKey } from './signing-key.ts'

/** However quiet the channel, the key in force is read again before signing after this: a bound on a missed notice. */
export const MAX_AGE_MS = 30_000
/** After a failed read, the next one waits this long (a database that is down is not asked per request). */
const RETRY_MS = 5_000

/** This instance does not hold the key every instance signs with, or could not confirm it lately: it must not sign. */
export class SigningKeyNotInForceError extends Error {
  constructor(reason: string) {
    super(`not signing: ${reason}`)
    this.name = 'SigningKeyNotInForceError'
  }
}

export type SigningKeysOptions = { signingKeyFile: string | undefined; clock: Clock; log: Logger }

type InForce = PublicKeyForms & { record: KeyInForce | undefined }

/**
 * One instance's view of the deployment's key (key-in-force.ts): the key to publish, the keys a token of
 * ours may be signed with, and the private key, held only while this instance's own key (its
 * SIGNING_KEY_FILE, or the database's) is the one in force. A server that starts with another key is
 * refused (ConfigError); a running one hears a rotation by NOTIFY and follows it, re-reading its file, or
 * stops signing (and /readyz says so) rather than split the deployment. Without a notice the record is
 * read again before signing once it is 30 s old.
 */
export class SigningKeys {
  private previous: { key: PublicKeyForms; until: number } | undefined
  private ownKey: string | undefined
  private complainedAbout: string | undefined
  private retryAt = 0
  private reading: Promise<void> | undefined
  private instance: InstanceIdentity | undefined
  private readonly publishedListeners = new Set<(key: PublicKeyForms) => void>()

  private constructor(
    private readonly db: Database,
    private readonly options: SigningKeysOptions,
    /** A server (or a test standing for one): it follows the key in force. A CLI command only shows it. */
    private readonly serving: boolean,
    private inForce: InForce,
    private signerKey: SigningKey | undefined,
    private checkedAt: number,
  ) {
    this.ownKey = signerKey?.thumbprint
  }

  /**
   * A server's keys: its own key, which must be the one in force (the first server on a database puts its
   * key in force). A command's (`serve: false`) never claims: with a key in force it needs no private key;
   * before any server it loads the key as a server would, generating it only if `create` is not false.
   */
  static async load(db: Database, options: SigningKeysOptions & { serve: boolean; create?: boolean }): Promise<SigningKeys> {
    const now = options.clock.now()
    const stored = await readStoredKeys(db)
    if (!options.serve && stored.inForce) return new SigningKeys(db, options, false, await inForceOf(stored.inForce), undefined, now.getTime()).withPrevious(stored.inForce)
    const own = await loadOwnKey(db, { file: options.signingKeyFile, stored, create: options.create !== false, now })
    if (!options.serve) return new SigningKeys(db, options, false, { ...own, record: undefined }, own, now.getTime())
    let record = stored.inForce
    if (!record) {
      const file = options.signingKeyFile
      await claimKeyInForce(db, { thumbprint: own.thumbprint, n: own.jwk.n, e: own.jwk.e, source: file ? 'file' : 'database', ...(file && { file }), since: now.toISOString() })
      record = (await readStoredKeys(db)).inForce!
    }
    if (record.thumbprint !== own.thumbprint) throw notTheKeyInForce(own, record, options.signingKeyFile)
    return new SigningKeys(db, options, true, { ...own, record }, own, now.getTime()).withPrevious(record)
  }

  /** The private key to sign with; {@link SigningKeyNotInForceError} when this instance must not sign. */
  async signer(): Promise<SigningKey> {
    await this.fresh()
    if (!this.signerKey) throw new SigningKeyNotInForceError(`this instance does not hold the key in force (${this.inForce.thumbprint})`)
    const age = this.options.clock.now().getTime() - this.checkedAt
    if (age >= MAX_AGE_MS) throw new SigningKeyNotInForceError(`the key in force could not be read for ${Math.round(age / 1000)} s`)
    return this.signerKey
  }

  /** The key in force, as the key set and the PEM endpoint publish it. */
  async published(): Promise<PublicKeyForms> {
    await this.fresh().catch((cause) => this.options.log.error('signing_key_read_failed', { message: String(cause) }))
    return this.inForce
  }

  /**
   * Calls `listener` with the key in force each time it changes, before the read that found it reports this
   * instance (so `keys rotate`, which waits for the reports, returns once every instance publishes the new
   * key). The server's static key routes follow it (src/keys/routes.ts). Returns the unsubscriber.
   */
  onPublished(listener: (key: PublicKeyForms) => void): () => void {
    this.publishedListeners.add(listener)
    return () => this.publishedListeners.delete(listener)
  }

  /**
   * The keys a token of ours may be signed with now: the key in force, then the one it replaced during its
   * overlap. Without a promise while the key in force was read recently enough, which is every validation
   * but one each 30 s (three async calls a validation were 1.5 µs of its CPU).
   */
  verificationKeys(): CryptoKey[] | Promise<CryptoKey[]> {
    const keysAt = (now: number) => [this.inForce.publicKey, ...(this.previous && now < this.previous.until ? [this.previous.key.publicKey] : [])]
    const now = this.options.clock.now().getTime()
    if (!this.due(now)) return keysAt(now)
    return this.published().then(() => keysAt(this.options.clock.now().getTime()))
  }

  /** What signs with the key (OpenSSL, or WebCrypto where it is not there), while this instance signs: for the start-up log. */
  get signsWith(): string | undefined {
    return this.signerKey?.signsWith
  }

  /** Whether this instance signs: for /readyz and the instance's report. */
  get canSign(): boolean {
    return this.signerKey !== undefined
  }

  /** Reads the key in force now (a notice, a rotation in this process, the server's timer). */
  refresh(): Promise<void> {
    const before = this.reading
    const read: Promise<void> = (async () => {
      await before?.catch(() => {})
      await this.read()
    })()
    this.reading = read
    read.then(
      () => this.reading === read && (this.reading = undefined),
      () => this.reading === read && (this.reading = undefined),
    )
    return read
  }

  /** Hears rotations; whatever was announced while not listening is read when listening (re)starts. */
  async listen(database: Pick<OpenDatabase, 'listen'>): Promise<void> {
    const reread = () => void this.refresh().catch((cause) => this.options.log.error('signing_key_read_failed', { message: String(cause) }))
    await database.listen(SIGNING_KEY_CHANNEL, reread, reread)
  }

  /** From now on, each read of the key in force also reports this instance's key (`keys show`, `keys rotate`). */
  reportAs(instance: InstanceIdentity): Promise<void> {
    this.instance = instance
    return this.refresh()
  }

  private withPrevious(record: KeyInForce): Promise<this> {
    return this.takePrevious(record).then(() => this)
  }

  private async takePrevious(record: KeyInForce): Promise<void> {
    const previous = record.previous
    if (!previous) this.previous = undefined
    else if (this.previous?.key.thumbprint !== previous.thumbprint) this.previous = { key: await publicKeyFromJwk(previous), until: Date.parse(previous.until) }
  }

  /**
   * Reads the key in force if it is due. A read already under way is shared, but one that began before this
   * became due (it may have read a file since fixed) leaves it due: then one more read follows it.
   */
  private async fresh(): Promise<void> {
    while (this.due(this.options.clock.now().getTime())) {
      const reading = this.reading
      if (!reading) return this.refresh()
      await reading
    }
  }

  /** Whether the key in force should be read again before it is used: read over MAX_AGE_MS ago, and no failed read in the last RETRY_MS. */
  private due(now: number): boolean {
    return now - this.checkedAt >= MAX_AGE_MS && now >= this.retryAt
  }

  private async read(): Promise<void> {
    const now = this.options.clock.now().getTime()
    let stored: StoredKeys
    try {
      stored = await readStoredKeys(this.db)
    } catch (cause) {
      this.retryAt = now + RETRY_MS
      throw cause
    }
    const record = stored.inForce
    if (record) {
      if (record.thumbprint !== this.inForce.thumbprint || record.since !== this.inForce.record?.since) {
        const changed = record.thumbprint !== this.inForce.thumbprint
        this.inForce = await inForceOf(record)
        if (changed) for (const listener of this.publishedListeners) listener(this.inForce)
      }
      await this.takePrevious(record)
      // An instance that does not sign reads its file again each time: fixing the file heals it without a restart.
      if (this.serving && this.signerKey?.thumbprint !== record.thumbprint) await this.follow(record, stored)
    }
    this.checkedAt = now
    await this.report()
  }

  /** Takes the key in force if this instance holds it (its file, re-read, or the database's); else stops signing. */
  private async follow(record: KeyInForce, stored: StoredKeys): Promise<void> {
    const was = this.signerKey
    let own: SigningKey | undefined
    let problem = ''
    try {
      own = await readOwnKey(this.options.signingKeyFile, record, stored)
      this.ownKey = own.thumbprint
    } catch (cause) {
      problem = (cause as Error).message
    }
    if (own?.thumbprint === record.thumbprint) {
      this.signerKey = own
      this.complainedAbout = undefined
      this.options.log.info('signing_key_switched', { key_in_force: record.thumbprint, replaced: was?.thumbprint ?? null })
      return
    }
    this.signerKey = undefined
    if (this.complainedAbout === record.thumbprint) return
    this.complainedAbout = record.thumbprint
    const message = own ? notTheKeyInForce(own, record, this.options.signingKeyFile).message : problem
    this.options.log.error('signing_key_not_in_force', { key_in_force: record.thumbprint, this_key: this.ownKey ?? null, message })
  }

  private async report(): Promise<void> {
    if (!this.instance) return
    const report = { ...this.instance, source: this.options.signingKeyFile ? ('file' as const) : ('database' as const), key: this.ownKey ?? null, signing: this.canSign }
    await reportInstance(this.db, report, this.options.clock.now()).catch((cause) => this.options.log.error('instance_report_failed', { message: String(cause) }))
  }
}

async function inForceOf(record: KeyInForce): Promise<InForce> {
  return { ...(await publicKeyFromJwk(record)), record }
}
