import { availableParallelism } from 'node:os'
import { BlockList, isIP } from 'node:net'
import { ConfigError } from './errors.ts'

/**
 * The only reader of the environment. Every variable is validated once, at start; a bad value stops
 * start-up with a {@link ConfigError} that names the variable (DESIGN.md, "Configuration").
 */

export type DatabaseTarget =
  | { kind: 'pglite'; dataDir: string }
  | { kind: 'memory' }
  | { kind: 'postgres'; url: string }

/** argon2id's memory (KiB) and passes for a new dashboard password hash. */
export type PasswordCost = { memoryCost: number; timeCost: number }

export type Config = {
  /** PASSWORD_HASH_MEMORY_KIB: what hashing a dashboard password costs. */
  passwordHash: PasswordCost
  port: number
  /** The address the server binds (HOST): 127.0.0.1 behind a proxy on the same machine. */
  host: string
  database: DatabaseTarget
  dataDir: string
  /** `{base_url}`: the API address, without a trailing slash. */
  publicUrl: string
  /** `{app_url}`: the hosted page's address, without a trailing slash. */
  appUrl: string
  /** `{issuer_url}`: the `iss` claim, exactly as configured. */
  issuerUrl: string
  signingKeyFile: string | undefined
  /** Whether start-up creates the sandbox demo client and serves `/demo`. */
  demo: boolean
  face: FaceConfig
  /**
   * Server processes sharing the port (WORKERS, `reusePort`): by default one per core, each with its face
   * estimator threads at a lower priority (FACE_NICE); always 1 on the embedded database.
   */
  workers: number
  /** Postgres connections of the whole server (DATABASE_POOL), split between its processes. */
  databasePool: number
  /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
  metricsToken: string | undefined
  /** METRICS_PUBLIC=1: GET /metrics without a token (a private network in front). Off: no token, no metrics. */
  metricsPublic: boolean
  /** The digital credential method (class `age_only`): on when CREDENTIAL_TRUST_LIST names a trust list. */
  credentials: CredentialConfig | undefined
  /** Published lists of issuers' roots (`ofage trust import`): whom their signatures must chain to, how often they are read again. */
  trust: TrustSourcesConfig
  /** Abuse limits per address (and client id), shared by every instance through the database. */
  limits: RateLimitConfig
  /** TRUST_PROXY=1: the last X-Forwarded-For entry is the visitor's address (one reverse proxy in front). */
  trustProxy: boolean
  /** HSTS_INCLUDE_SUBDOMAINS=1: the HSTS header sent over https also binds every subdomain of the service's host. */
  hstsIncludeSubDomains: boolean
  /** NODE_ENV=production: the dev issuer and wallet commands, and a dev issuer in the trust list, are refused. */
  production: boolean
  /**
   * Where every outbound request (webhooks, status lists, CRLs, trust lists) may connect beyond public
   * addresses: loopback outside production, and the networks of OUTBOUND_ALLOWED_NETWORKS (src/lib/address-policy.ts).
   */
  outbound: { allowLoopback: boolean; allowedNetworks: readonly string[] }
  /** SMTP_URL and SMTP_FROM: the dashboard's "Forgot password?" emails; unset, the operator resets passwords. */
  mail: MailConfig | undefined
}

/** Where the service's emails go out: an SMTP submission server and the sender they come from. */
export type MailConfig = {
  /** `smtps:` TLS from the first byte (port 465 by default); `smtp:` STARTTLS whenever the server offers it (587). */
  secure: boolean
  host: string
  port: number
  /** The account SMTP_URL names, percent-decoded; its password is never logged, nor echoed by an error. */
  auth: { user: string; pass: string } | undefined
  /** SMTP_FROM: `address` or `Name <address>`. */
  from: string
}

/** How many hits a key may take per window. */
export type Limit = { max: number; windowMs: number }

export type RateLimitConfig = {
  /** Failed client authentications per address per minute (RATE_LIMIT_AUTH_FAILURES). */
  authFailures: Limit
  /** New verification sessions per address per minute (RATE_LIMIT_SESSIONS). */
  sessions: Limit
  /** Method posts (checks) per address per ten minutes (RATE_LIMIT_CHECKS). */
  checks: Limit
  /**
   * Dashboard sign-in attempts per account (email) and address per fifteen minutes (RATE_LIMIT_SIGNIN_ACCOUNT);
   * also a signed-in session's password confirmations, per session and per user and address.
   */
  signInAccount: Limit
  /**
   * Failed dashboard sign-ins per account from all addresses per fifteen minutes
   * (RATE_LIMIT_SIGNIN_ACCOUNT_CEILING); past it each address gets one try a window: guessing from many
   * addresses slows, and the right password from an address that has not failed still signs in.
   */
  signInAccountCeiling: Limit
  /** Dashboard sign-in attempts per address per fifteen minutes (RATE_LIMIT_SIGNIN_ADDRESS). */
  signInAddress: Limit
  /** "Forgot password?" requests per email, known or not, from all addresses per hour (RATE_LIMIT_PASSWORD_RESET_EMAIL). */
  passwordResetEmail: Limit
  /** "Forgot password?" requests per address per hour (RATE_LIMIT_PASSWORD_RESET_ADDRESS). */
  passwordResetAddress: Limit
}

export type CredentialConfig = {
  /** CREDENTIAL_TRUST_LIST: the file of roots and keys, read and checked at start by the trust room. */
  trustListFile: string
  /** The operator's own verifier key and certificate chain (PEM); unset, one is generated and kept. */
  verifierKeyFile: string | undefined
  verifierCertificateFile: string | undefined
  /**
   * CREDENTIAL_PLAIN_ANSWERS=1: wallets are asked to answer in the clear (`direct_post`, `dc_api`), for wallets
   * that cannot encrypt. Off by default: HAIP wallets answer only encrypted (`direct_post.jwt`, `dc_api.jwt`),
   * and an answer in the other form is refused (docs/decisions.md).
   */
  plainAnswers: boolean
  /**
   * CREDENTIAL_AV_PROFILE: the QR panel also offers the EU age verification app's `av://` request (Annex A
   * §A.5: unsigned, by value, answered `direct_post` in the clear). On by default; `off` leaves only the
   * HAIP request (docs/decisions.md).
   */
  avProfile: boolean
  /** CREDENTIAL_VERIFIER_RP_METADATA: Google's `gw_rp_metadata_bytes` (base64url) for its certificate. */
  verifierRpMetadata: string | undefined
  /**
   * CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE: the relying party's registration certificate (Implementing
   * Regulation (EU) 2025/848; ETSI TS 119 475, the JWT form), sent in `verifier_info` of signed requests.
   */
  verifierRegistrationCertificateFile: string | undefined
  /**
   * CREDENTIAL_VERIFIER_ROOTS_FILE: PEM CA certificates that the access certificate chain and the registration
   * certificate's signer must end at (the member state's access CA, its registration certificate provider).
   */
  verifierRootsFile: string | undefined
  /** CREDENTIAL_READER_KEY_FILE and _CERT_FILE: the readerAuth key and chain of Annex C requests (Apple Wallet). */
  readerKeyFile: string | undefined
  readerCertificateFile: string | undefined
}

export type TrustSourcesConfig = {
  /** CREDENTIAL_VICAL_SIGNER_FILE: PEM root(s) a VICAL's signer certificate must chain to (AAMVA's VICAL root). */
  vicalSignerFile: string | undefined
  /** CREDENTIAL_TRUSTED_LIST_SIGNER_FILE: PEM certificate(s) an ETSI trusted list must be signed with. */
  trustedListSignerFile: string | undefined
  /** CREDENTIAL_TRUST_REFRESH_HOURS: how often an imported list is read again (default 24). */
  refreshHours: number
  /**
   * CREDENTIAL_REVOCATION_UNREACHABLE: what a credential whose status list or signer's CRL cannot be fetched gets.
   * `refuse` (the default): refused, "try again in a moment", no attempt spent. `accept`: verified without it,
   * for an operator who prefers visitors never wait on an issuer's server (a revoked credential then passes).
   */
  revocationUnreachable: 'refuse' | 'accept'
}

/** The face age check (method class `biometric`). */
export type FaceConfig = {
  enabled: boolean
  /**
   * Deployment-wide safety buffer in years (FACE_AGE_BUFFER); unset, each threshold gets the default
   * measured for it (defaultFaceBuffer). A client's own buffer overrides both.
   */
  buffer: number | undefined
  /** Estimator worker threads, and frames that may wait for one before the answer is "busy". */
  workers: number
  queue: number
  /** The estimator threads' nice value (FACE_NICE): HTTP first when both want the cores. */
  nice: number
  /**
   * Whether the form also takes a still photo from a file picker. Off unless the operator turns it on:
   * a photo of any adult passes an upload, since no live challenge reaches it.
   */
  upload: boolean
  /** How long a method post's body may take to arrive before it is refused and its upload place freed. */
  uploadSeconds: number
}

type Env = Record<string, string | undefined>

/** A whole-number variable's bounds, and its value when unset (none: the default is worked out, see its reader). */
export type NumberRule = { min: number; max: number; fallback?: number }

/**
 * Every whole-number variable: what readInt accepts and falls back to. The configuration tables of README.md
 * and docs/deploy.md are written from these (src/config-variables.ts), so a default changes in one place.
 */
export const NUMBERS = {
  PORT: { min: 1, max: 65535, fallback: 3000 },
  DATABASE_POOL: { min: 2, max: 1000, fallback: 20 },
  /** Unset: one per core on Postgres (readWorkers). */
  WORKERS: { min: 1, max: 64 },
  /** Unset: the measured default of each threshold (defaultFaceBuffer). */
  FACE_AGE_BUFFER: { min: 0, max: 30 },
  FACE_WORKERS: { min: 1, max: 16, fallback: 1 },
  FACE_QUEUE: { min: 0, max: 1000, fallback: 8 },
  FACE_NICE: { min: 0, max: 19, fallback: 5 },
  FACE_UPLOAD_SECONDS: { min: 1, max: 600, fallback: 60 },
  CREDENTIAL_TRUST_REFRESH_HOURS: { min: 1, max: 720, fallback: 24 },
  RATE_LIMIT_AUTH_FAILURES: { min: 1, max: 1_000_000, fallback: 30 },
  RATE_LIMIT_SESSIONS: { min: 1, max: 1_000_000, fallback: 120 },
  RATE_LIMIT_CHECKS: { min: 1, max: 1_000_000, fallback: 300 },
  // A person mistypes a password a few times; a guesser needs thousands of tries. An office behind one
  // address signs in a few dozen times a quarter hour at most.
  RATE_LIMIT_SIGNIN_ACCOUNT: { min: 1, max: 1_000_000, fallback: 10 },
  RATE_LIMIT_SIGNIN_ACCOUNT_CEILING: { min: 1, max: 1_000_000, fallback: 100 },
  RATE_LIMIT_SIGNIN_ADDRESS: { min: 1, max: 1_000_000, fallback: 30 },
  // Each reset request may send an email: a few an hour reach a forgetful owner, and no inbox is flooded.
  RATE_LIMIT_PASSWORD_RESET_EMAIL: { min: 1, max: 1_000_000, fallback: 3 },
  RATE_LIMIT_PASSWORD_RESET_ADDRESS: { min: 1, max: 1_000_000, fallback: 10 },
  // argon2id's memory for dashboard passwords, in KiB: Bun's default (64 MiB). Under OWASP's 19 MiB only
  // outside production, where the test suite hashes hundreds of passwords (issue 33).
  PASSWORD_HASH_MEMORY_KIB: { min: 8, max: 4_194_304, fallback: 65_536 },
} as const satisfies Record<string, NumberRule>

/** OWASP's Password Storage Cheat Sheet: argon2id with at least 19 MiB and two passes. */
export const MIN_PRODUCTION_PASSWORD_MEMORY_KIB = 19_456

/** Every on/off variable whose default does not depend on another (OFAGE_DEMO follows the database). */
export const FLAGS = {
  FACE_CHECK: true,
  FACE_UPLOAD: false,
  METRICS_PUBLIC: false,
  TRUST_PROXY: false,
  HSTS_INCLUDE_SUBDOMAINS: false,
  CREDENTIAL_PLAIN_ANSWERS: false,
  CREDENTIAL_AV_PROFILE: true,
} as const satisfies Record<string, boolean>

/** The other variables' defaults, where they have one of their own. */
export const TEXT_DEFAULTS = {
  HOST: '0.0.0.0',
  DATA_DIR: './data',
  CREDENTIAL_REVOCATION_UNREACHABLE: 'refuse',
} as const

export function loadConfig(env: Env = process.env): Config {
  const port = readInt('PORT', env.PORT)
  const dataDir = nonEmpty(env.DATA_DIR) ?? TEXT_DEFAULTS.DATA_DIR
  const database = readDatabase(env.DATABASE_URL, dataDir)
  const publicUrl = readUrl('PUBLIC_URL', env.PUBLIC_URL) ?? `http://localhost:${port}`
  const appUrl = readUrl('APP_URL', env.APP_URL) ?? publicUrl
  const issuerUrl = nonEmpty(env.ISSUER_URL) ? readIssuer(env.ISSUER_URL!) : publicUrl
  const production = env.NODE_ENV === 'production'
  const face: FaceConfig = {
    enabled: readFlag('FACE_CHECK', env.FACE_CHECK) ?? FLAGS.FACE_CHECK,
    buffer: nonEmpty(env.FACE_AGE_BUFFER) === undefined ? undefined : readInt('FACE_AGE_BUFFER', env.FACE_AGE_BUFFER),
    workers: readInt('FACE_WORKERS', env.FACE_WORKERS),
    queue: readInt('FACE_QUEUE', env.FACE_QUEUE),
    nice: readInt('FACE_NICE', env.FACE_NICE),
    upload: readFlag('FACE_UPLOAD', env.FACE_UPLOAD) ?? FLAGS.FACE_UPLOAD,
    uploadSeconds: readInt('FACE_UPLOAD_SECONDS', env.FACE_UPLOAD_SECONDS),
  }
  return {
    port,
    host: readHost(env.HOST),
    database,
    dataDir,
    publicUrl,
    appUrl,
    issuerUrl,
    signingKeyFile: nonEmpty(env.SIGNING_KEY_FILE),
    demo: readFlag('OFAGE_DEMO', env.OFAGE_DEMO) ?? database.kind !== 'postgres',
    face,
    workers: readWorkers(env, database.kind),
    databasePool: readInt('DATABASE_POOL', env.DATABASE_POOL),
    metricsToken: nonEmpty(env.METRICS_TOKEN),
    metricsPublic: readFlag('METRICS_PUBLIC', env.METRICS_PUBLIC) ?? FLAGS.METRICS_PUBLIC,
    credentials: readCredentials(env),
    trust: {
      vicalSignerFile: nonEmpty(env.CREDENTIAL_VICAL_SIGNER_FILE),
      trustedListSignerFile: nonEmpty(env.CREDENTIAL_TRUSTED_LIST_SIGNER_FILE),
      refreshHours: readInt('CREDENTIAL_TRUST_REFRESH_HOURS', env.CREDENTIAL_TRUST_REFRESH_HOURS),
      revocationUnreachable: readRevocationUnreachable(env.CREDENTIAL_REVOCATION_UNREACHABLE),
    },
    limits: {
      authFailures: { max: readInt('RATE_LIMIT_AUTH_FAILURES', env.RATE_LIMIT_AUTH_FAILURES), windowMs: 60_000 },
      sessions: { max: readInt('RATE_LIMIT_SESSIONS', env.RATE_LIMIT_SESSIONS), windowMs: 60_000 },
      checks: { max: readInt('RATE_LIMIT_CHECKS', env.RATE_LIMIT_CHECKS), windowMs: 10 * 60_000 },
      signInAccount: { max: readInt('RATE_LIMIT_SIGNIN_ACCOUNT', env.RATE_LIMIT_SIGNIN_ACCOUNT), windowMs: 15 * 60_000 },
      signInAccountCeiling: { max: readInt('RATE_LIMIT_SIGNIN_ACCOUNT_CEILING', env.RATE_LIMIT_SIGNIN_ACCOUNT_CEILING), windowMs: 15 * 60_000 },
      signInAddress: { max: readInt('RATE_LIMIT_SIGNIN_ADDRESS', env.RATE_LIMIT_SIGNIN_ADDRESS), windowMs: 15 * 60_000 },
      passwordResetEmail: { max: readInt('RATE_LIMIT_PASSWORD_RESET_EMAIL', env.RATE_LIMIT_PASSWORD_RESET_EMAIL), windowMs: 60 * 60_000 },
      passwordResetAddress: { max: readInt('RATE_LIMIT_PASSWORD_RESET_ADDRESS', env.RATE_LIMIT_PASSWORD_RESET_ADDRESS), windowMs: 60 * 60_000 },
    },
    trustProxy: readFlag('TRUST_PROXY', env.TRUST_PROXY) ?? FLAGS.TRUST_PROXY,
    hstsIncludeSubDomains: readFlag('HSTS_INCLUDE_SUBDOMAINS', env.HSTS_INCLUDE_SUBDOMAINS) ?? FLAGS.HSTS_INCLUDE_SUBDOMAINS,
    production,
    passwordHash: readPasswordCost(env, production),
    outbound: { allowLoopback: !production, allowedNetworks: readNetworks(env.OUTBOUND_ALLOWED_NETWORKS) },
    mail: readMail(env.SMTP_URL, env.SMTP_FROM),
  }
}

/**
 * SMTP_URL (`smtp://user:password@host:587` or `smtps://…`, user and password percent-encoded) and SMTP_FROM,
 * set together or not at all. An error never echoes SMTP_URL: it may hold a password.
 */
function readMail(urlValue: string | undefined, fromValue: string | undefined): MailConfig | undefined {
  const raw = nonEmpty(urlValue)
  const from = nonEmpty(fromValue)
  if (raw === undefined) {
    if (from !== undefined) throw new ConfigError('SMTP_FROM', 'needs SMTP_URL: no email is sent without it')
    return undefined
  }
  const url = URL.canParse(raw) ? new URL(raw) : undefined
  const shape = 'must be smtp://user:password@host:port or smtps://… (user and password percent-encoded), without path or query'
  if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || !url.hostname || !['', '/'].includes(url.pathname) || url.search || url.hash) {
    throw new ConfigError('SMTP_URL', shape)
  }
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part)
    } catch {
      throw new ConfigError('SMTP_URL', shape)
    }
  }
  if (from === undefined) throw new ConfigError('SMTP_FROM', 'is required with SMTP_URL: the sender of the emails, as address or Name <address>')
  // A line break would start another header: the address is one line, and looks like one.
  if (/[\p{Cc}]/u.test(from) || !/^(?:[^<>]*<)?[^\s@<>",]+@[^\s@<>",]+>?$/.test(from) || from.includes('<') !== from.endsWith('>')) {
    throw new ConfigError('SMTP_FROM', `must be an email address or Name <address>, got "${from.replace(/[\p{Cc}]/gu, '?')}"`)
  }
  const secure = url.protocol === 'smtps:'
  const port = url.port ? Number(url.port) : secure ? 465 : 587
  if (port < 1) throw new ConfigError('SMTP_URL', shape)
  return {
    secure,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port,
    auth: url.username || url.password ? { user: decode(url.username), pass: decode(url.password) } : undefined,
    from,
  }
}

/**
 * OUTBOUND_ALLOWED_NETWORKS: comma-separated addresses and CIDR prefixes that outbound requests may reach
 * although private or loopback (an internal webhook receiver, a local mirror of the lists).
 */
function readNetworks(value: string | undefined): readonly string[] {
  const entries = (nonEmpty(value) ?? '').split(',').map((entry) => entry.trim()).filter(Boolean)
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/')
    const family = isIP(address)
    const bits = prefix === undefined ? undefined : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN
    if (family === 0 || extra !== undefined || (bits !== undefined && !(bits <= (family === 4 ? 32 : 128)))) {
      throw new ConfigError('OUTBOUND_ALLOWED_NETWORKS', `"${entry}" is not an IP address or a CIDR prefix such as 10.0.5.0/24 or fd00:5::/64`)
    }
    // The form address-policy.ts reads it in: what passes here is what it can build.
    new BlockList().addSubnet(address, bits ?? (family === 4 ? 32 : 128), family === 4 ? 'ipv4' : 'ipv6')
  }
  return entries
}

/** The digital credential method is on when CREDENTIAL_TRUST_LIST names a file (read at start: loadTrustList). */
function readCredentials(env: Env): CredentialConfig | undefined {
  const trustListFile = nonEmpty(env.CREDENTIAL_TRUST_LIST)
  const readerKeyFile = nonEmpty(env.CREDENTIAL_READER_KEY_FILE)
  const readerCertificateFile = nonEmpty(env.CREDENTIAL_READER_CERT_FILE)
  if ((readerKeyFile === undefined) !== (readerCertificateFile === undefined)) {
    throw new ConfigError('CREDENTIAL_READER_KEY_FILE', 'and CREDENTIAL_READER_CERT_FILE are set together or not at all')
  }
  // A certificate obtained from Apple and silently unused would look like a wallet problem.
  if (trustListFile === undefined && readerKeyFile !== undefined) throw new ConfigError('CREDENTIAL_READER_CERT_FILE', 'needs CREDENTIAL_TRUST_LIST: the digital ID method is off without it')
  if (trustListFile === undefined) return undefined
  const verifierKeyFile = nonEmpty(env.CREDENTIAL_VERIFIER_KEY_FILE)
  const verifierCertificateFile = nonEmpty(env.CREDENTIAL_VERIFIER_CERT_FILE)
  if ((verifierKeyFile === undefined) !== (verifierCertificateFile === undefined)) {
    throw new ConfigError('CREDENTIAL_VERIFIER_KEY_FILE', 'and CREDENTIAL_VERIFIER_CERT_FILE are set together or not at all')
  }
  const verifierRpMetadata = nonEmpty(env.CREDENTIAL_VERIFIER_RP_METADATA)
  if (verifierRpMetadata !== undefined && verifierKeyFile === undefined) throw new ConfigError('CREDENTIAL_VERIFIER_RP_METADATA', 'belongs to the certificate in CREDENTIAL_VERIFIER_CERT_FILE, which is not set')
  const verifierRegistrationCertificateFile = nonEmpty(env.CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE)
  // A registration certificate is about the relying party an access certificate names; the generated one names none.
  if (verifierRegistrationCertificateFile !== undefined && verifierKeyFile === undefined) {
    throw new ConfigError('CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE', 'belongs to the access certificate in CREDENTIAL_VERIFIER_CERT_FILE, which is not set')
  }
  const verifierRootsFile = nonEmpty(env.CREDENTIAL_VERIFIER_ROOTS_FILE)
  if (verifierRootsFile !== undefined && verifierKeyFile === undefined) throw new ConfigError('CREDENTIAL_VERIFIER_ROOTS_FILE', 'checks the chain in CREDENTIAL_VERIFIER_CERT_FILE, which is not set')
  return {
    trustListFile,
    verifierKeyFile,
    verifierCertificateFile,
    verifierRpMetadata,
    verifierRegistrationCertificateFile,
    verifierRootsFile,
    readerKeyFile,
    readerCertificateFile,
    plainAnswers: readFlag('CREDENTIAL_PLAIN_ANSWERS', env.CREDENTIAL_PLAIN_ANSWERS) ?? FLAGS.CREDENTIAL_PLAIN_ANSWERS,
    avProfile: readFlag('CREDENTIAL_AV_PROFILE', env.CREDENTIAL_AV_PROFILE) ?? FLAGS.CREDENTIAL_AV_PROFILE,
  }
}

function readRevocationUnreachable(value: string | undefined): 'refuse' | 'accept' {
  const raw = nonEmpty(value) ?? TEXT_DEFAULTS.CREDENTIAL_REVOCATION_UNREACHABLE
  if (raw !== 'refuse' && raw !== 'accept') throw new ConfigError('CREDENTIAL_REVOCATION_UNREACHABLE', `must be refuse or accept, got "${raw}"`)
  return raw
}

/** A whole number within its NUMBERS bounds; unset, its fallback there (or the one given, when it is worked out). */
function readInt(variable: keyof typeof NUMBERS, value: string | undefined, fallback?: number): number {
  const range: NumberRule = NUMBERS[variable]
  const raw = nonEmpty(value)
  if (raw === undefined) {
    const chosen = fallback ?? range.fallback
    if (chosen === undefined) throw new Error(`${variable} has no default: its reader must give one`)
    return chosen
  }
  const number = Number(raw)
  if (!/^\d+$/.test(raw) || number < range.min || number > range.max) {
    throw new ConfigError(variable, `must be an integer from ${range.min} to ${range.max}, got "${value}"`)
  }
  return number
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}

function readHost(value: string | undefined): string {
  const host = nonEmpty(value)
  if (host === undefined) return TEXT_DEFAULTS.HOST
  if (!/^[A-Za-z0-9.:_-]{1,253}$/.test(host)) throw new ConfigError('HOST', `must be a host name or IP address, got "${value}"`)
  return host
}

function readDatabase(value: string | undefined, dataDir: string): DatabaseTarget {
  const url = nonEmpty(value)
  if (url === undefined) return { kind: 'pglite', dataDir }
  if (url === 'memory:') return { kind: 'memory' }
  if (/^postgres(ql)?:\/\//.test(url) && URL.canParse(url)) return { kind: 'postgres', url }
  throw new ConfigError('DATABASE_URL', 'must be a postgres:// URL or "memory:" (unset: the embedded database in DATA_DIR)')
}

/** Reads an http(s) URL and drops a trailing slash so paths can be appended. */
function readUrl(variable: string, value: string | undefined): string | undefined {
  const raw = nonEmpty(value)
  if (raw === undefined) return undefined
  const url = URL.canParse(raw) ? new URL(raw) : undefined
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new ConfigError(variable, `must be an http(s) URL without query or fragment, got "${raw}"`)
  }
  return raw.replace(/\/+$/, '')
}

/** The issuer is compared byte for byte by verifiers, so it is kept exactly as written. */
function readIssuer(value: string): string {
  readUrl('ISSUER_URL', value)
  return value.trim()
}

function readFlag(variable: string, value: string | undefined): boolean | undefined {
  const raw = nonEmpty(value)?.toLowerCase()
  if (raw === undefined) return undefined
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true
  if (['0', 'false', 'no', 'off'].includes(raw)) return false
  throw new ConfigError(variable, `must be on or off (1 or 0), got "${value}"`)
}

/**
 * WORKERS: one process per core, HTTP on every core (issue 34). The face estimator's threads no longer
 * keep a core to themselves, idle most of the time: they run at FACE_NICE, so that they take what HTTP
 * leaves and HTTP takes what they leave (docs/performance.md measures both loads at once). The embedded
 * database allows one process.
 */
function readWorkers(env: Env, databaseKind: DatabaseTarget['kind']): number {
  if (databaseKind !== 'postgres') {
    if (nonEmpty(env.WORKERS) !== undefined && env.WORKERS !== '1') throw new ConfigError('WORKERS', 'above 1 needs Postgres (DATABASE_URL): the embedded database allows one process')
    return 1
  }
  return readInt('WORKERS', env.WORKERS, Math.min(availableParallelism(), NUMBERS.WORKERS.max))
}

/** argon2id's cost for new dashboard password hashes; a hash names its own cost, so older hashes still verify. */
function readPasswordCost(env: Env, production: boolean): PasswordCost {
  const memoryCost = readInt('PASSWORD_HASH_MEMORY_KIB', env.PASSWORD_HASH_MEMORY_KIB)
  if (production && memoryCost < MIN_PRODUCTION_PASSWORD_MEMORY_KIB) {
    throw new ConfigError('PASSWORD_HASH_MEMORY_KIB', `must be at least ${MIN_PRODUCTION_PASSWORD_MEMORY_KIB} (19 MiB, OWASP's minimum for argon2id) with NODE_ENV=production, got ${memoryCost}`)
  }
  return { memoryCost, timeCost: 2 }
}
