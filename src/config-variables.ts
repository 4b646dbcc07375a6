import { FLAGS, NUMBERS, TEXT_DEFAULTS, type NumberRule } from './config.ts'
import { defaultFaceBuffer } from './clients/face-buffer.ts'

/**
 * Every environment variable that src/config.ts reads, described once: the configuration tables of README.md
 * and docs/deploy.md are written from this list (`bun .ci/config-table.ts --write`), and
 * test/config-table.test.ts fails when a table, or this list, no longer matches what config.ts reads. The
 * defaults and bounds are config.ts's own (NUMBERS, FLAGS, TEXT_DEFAULTS, defaultFaceBuffer), not copies.
 * Links are written from the repository's root (`docs/deploy.md#…`); each table's file gets them relative.
 */
export type ConfigVariable = {
  /** One variable, or a pair that is set together. */
  names: readonly string[]
  group: ConfigGroup
  /** Markdown: what it does, and what to set it to. */
  meaning: string
  /** Markdown: what holds when it is unset. */
  default: string
  /** Shown in the README's short table too: what a first deployment sets or must know. */
  essential?: true
}

const code = (value: string | number) => `\`${value}\``
const flag = (name: keyof typeof FLAGS) => code(FLAGS[name] ? 'on' : 'off')
const number = (name: keyof typeof NUMBERS) => {
  const rule: NumberRule = NUMBERS[name]
  if (rule.fallback === undefined) throw new Error(`${name} has no fixed default: describe it in words`)
  return code(rule.fallback)
}
/** A whole number's bounds, as config.ts checks them. */
const range = (name: keyof typeof NUMBERS) => `${NUMBERS[name].min}–${NUMBERS[name].max >= 1_000_000 ? NUMBERS[name].max.toLocaleString('en-US') : NUMBERS[name].max}`

export type ConfigGroup = keyof typeof CONFIG_GROUPS

/** The sections of docs/deploy.md's reference, in order, with a sentence that holds for every row. */
export const CONFIG_GROUPS = {
  server: { title: 'Server and addresses', intro: '' },
  database: { title: 'Database and keys', intro: '' },
  metrics: { title: 'Metrics', intro: '' },
  face: { title: 'The face check', intro: '' },
  credentials: { title: 'Digital ID', intro: 'The digital ID method is on when `CREDENTIAL_TRUST_LIST` is set; every file is read and checked at start ([going live](docs/deploy.md#going-live-with-apple-and-google)).' },
  limits: {
    title: 'Abuse limits',
    intro:
      `Each a whole number (${range('RATE_LIMIT_CHECKS')}), counted per address (and key) in the database, so that every instance shares the count; past it, 429 with \`Retry-After\`. Behind a proxy, set \`TRUST_PROXY=1\`, or every visitor shares the proxy's address.`,
  },
  mail: { title: 'Email', intro: 'See [Email ("Forgot password?")](docs/deploy.md#email-forgot-password).' },
  outbound: { title: 'Outbound requests', intro: '' },
} as const

/** defaultFaceBuffer in words: the buffer of each run of thresholds from 1 to 99, e.g. "11 for 16–20". */
export function describeFaceBufferDefaults(): string {
  const runs: { from: number; to: number; years: number }[] = []
  for (let threshold = 1; threshold <= 99; threshold++) {
    const years = defaultFaceBuffer(threshold)
    const last = runs.at(-1)
    if (last?.years === years) last.to = threshold
    else runs.push({ from: threshold, to: threshold, years })
  }
  return runs
    .map(({ from, to, years }) => (from === 1 ? `${years} under ${to + 1}` : to === 99 ? `${years} from ${from}` : `${years} for ${from}–${to}`))
    .join(', ')
}

/** Switches: readFlag takes on/off, 1/0, true/false and yes/no (the tables' files say so once). */
const FLAG_WORDS = '`on`/`off`'

export const CONFIG_VARIABLES: readonly ConfigVariable[] = [
  // Server and addresses
  { names: ['PORT'], group: 'server', essential: true, meaning: `listen port (${range('PORT')})`, default: number('PORT') },
  {
    names: ['HOST'],
    group: 'server',
    essential: true,
    meaning: 'the address to bind: `127.0.0.1` when a proxy on the same machine fronts the service ([systemd and nginx](docs/deploy.md#systemd-behind-a-tls-reverse-proxy))',
    default: `${code(TEXT_DEFAULTS.HOST)}: every interface`,
  },
  {
    names: ['PUBLIC_URL'],
    group: 'server',
    essential: true,
    meaning: 'the public API address (`{base_url}`), e.g. `https://age.example.com`; with `https://`, cookies get `Secure` and `__Host-`, and every answer carries HSTS',
    default: '`http://localhost:$PORT`',
  },
  { names: ['APP_URL'], group: 'server', essential: true, meaning: "the hosted page's address (`{app_url}`); served by the same process at `/`", default: '`PUBLIC_URL`' },
  { names: ['ISSUER_URL'], group: 'server', essential: true, meaning: "the tokens' `iss`, kept exactly as written; integrators pin it", default: '`PUBLIC_URL`' },
  {
    names: ['TRUST_PROXY'],
    group: 'server',
    essential: true,
    meaning: `${FLAG_WORDS}: one reverse proxy in front, which appends the visitor's address to \`X-Forwarded-For\` (nginx: \`$proxy_add_x_forwarded_for\`); its entry, the last, is the address abuse limits count. Set it behind a proxy, or every visitor shares the proxy's address; never without one, or a visitor picks their own`,
    default: `${flag('TRUST_PROXY')}: the socket's address`,
  },
  {
    names: ['HSTS_INCLUDE_SUBDOMAINS'],
    group: 'server',
    meaning: `${FLAG_WORDS}: the HSTS header (a year, sent when \`PUBLIC_URL\` or \`APP_URL\` is https) also covers every subdomain of that host; only if all of them serve https`,
    default: flag('HSTS_INCLUDE_SUBDOMAINS'),
  },
  {
    names: ['NODE_ENV'],
    group: 'server',
    essential: true,
    meaning: '`production`: the test issuer in the trust list and the `dev` commands are refused, and outbound requests may not reach loopback. Anything else changes nothing',
    default: 'unset',
  },
  {
    names: ['WORKERS'],
    group: 'server',
    essential: true,
    meaning: `server processes sharing the port (\`reusePort\`), ${range('WORKERS')}; above 1 needs Postgres. Each counts its own \`/metrics\``,
    default: 'one per core (the face threads run beside them at `FACE_NICE`); `1` on the embedded database',
  },
  { names: ['OFAGE_DEMO'], group: 'server', meaning: `${FLAG_WORDS}: create the sandbox demo client and serve \`/demo\``, default: 'on with the embedded database, off with Postgres' },

  // Database and keys
  {
    names: ['DATABASE_URL'],
    group: 'database',
    essential: true,
    meaning: '`postgres://user:password@host:5432/db` (production), or `memory:` for an in-memory embedded database (tests)',
    default: 'the embedded database (PGlite) in `DATA_DIR`',
  },
  { names: ['DATA_DIR'], group: 'database', essential: true, meaning: 'the embedded database, its lock file and admin socket (unused with Postgres)', default: code(TEXT_DEFAULTS.DATA_DIR) },
  {
    names: ['DATABASE_POOL'],
    group: 'database',
    essential: true,
    meaning: `Postgres connections of the whole server, split between its \`WORKERS\` (${range('DATABASE_POOL')})`,
    default: number('DATABASE_POOL'),
  },
  {
    names: ['SIGNING_KEY_FILE'],
    group: 'database',
    essential: true,
    meaning: 'PKCS#8 PEM RSA private key, 2048 bits or more; the same key on every instance (another one stops start-up) ([Keys](docs/deploy.md#keys))',
    default: 'a key generated on first start and kept in the database, shared by every instance',
  },

  // Metrics
  {
    names: ['METRICS_TOKEN'],
    group: 'metrics',
    essential: true,
    meaning:
      'when set, `GET /metrics` needs `Authorization: Bearer <token>`. Each process answers with its own counts: scrape every instance, not the balancer ([Alerts and a dashboard](docs/deploy.md#alerts-and-a-dashboard))',
    default: '`/metrics` is off (404) unless `METRICS_PUBLIC` is on',
  },
  { names: ['METRICS_PUBLIC'], group: 'metrics', meaning: `${FLAG_WORDS}: \`GET /metrics\` without a token; only behind a private network`, default: flag('METRICS_PUBLIC') },

  // The face check
  {
    names: ['FACE_CHECK'],
    group: 'face',
    essential: true,
    meaning: `${FLAG_WORDS}: offer the face check to production clients (loads the models at start; readiness waits for them)`,
    default: flag('FACE_CHECK'),
  },
  {
    names: ['FACE_AGE_BUFFER'],
    group: 'face',
    meaning: `years the face estimate must exceed the threshold by, for every threshold (${range('FACE_AGE_BUFFER')}); a client's \`--face-buffer\` may only raise it`,
    default: `measured per threshold: ${describeFaceBufferDefaults()} ([docs/accuracy.md](docs/accuracy.md))`,
  },
  {
    names: ['FACE_WORKERS'],
    group: 'face',
    meaning: `estimator threads per process (${range('FACE_WORKERS')}); each holds its own copy of the models and uses one core, peak RSS about 250 MiB under load`,
    default: number('FACE_WORKERS'),
  },
  {
    names: ['FACE_NICE'],
    group: 'face',
    meaning: `the estimator threads' nice value (${range('FACE_NICE')}; Linux sets it per thread): above HTTP's 0, face checks take the cores HTTP leaves, and a face-check burst slows the API less. \`0\` shares the cores equally`,
    default: number('FACE_NICE'),
  },
  { names: ['FACE_QUEUE'], group: 'face', meaning: `frames that may wait for a thread before the answer is "busy, try again" (${range('FACE_QUEUE')})`, default: number('FACE_QUEUE') },
  {
    names: ['FACE_UPLOAD'],
    group: 'face',
    meaning: `${FLAG_WORDS}: the face form also takes a still photo from a file picker. Weak: a still photo of any adult passes an upload, since no live challenge reaches it`,
    default: flag('FACE_UPLOAD'),
  },
  {
    names: ['FACE_UPLOAD_SECONDS'],
    group: 'face',
    meaning: `how long a face post's body may take to arrive before it is refused and its place freed (${range('FACE_UPLOAD_SECONDS')})`,
    default: number('FACE_UPLOAD_SECONDS'),
  },

  // Digital ID
  {
    names: ['CREDENTIAL_TRUST_LIST'],
    group: 'credentials',
    essential: true,
    meaning: 'a file of PEM root certificates and/or a JWK set of issuer keys: turns on the digital ID method; an edit is read again within a minute',
    default: 'no digital ID',
  },
  {
    names: ['CREDENTIAL_VERIFIER_KEY_FILE', 'CREDENTIAL_VERIFIER_CERT_FILE'],
    group: 'credentials',
    meaning: "the request-signing key (EC P-256, PKCS#8 PEM) and certificate chain (PEM, leaf first): Google's, or the access certificate of the EU relying-party registration",
    default: 'a key and self-signed certificate generated once, kept in the database',
  },
  {
    names: ['CREDENTIAL_VERIFIER_RP_METADATA'],
    group: 'credentials',
    meaning: "Google Wallet's `gw_rp_metadata_bytes` (base64url) for the certificate in `CREDENTIAL_VERIFIER_CERT_FILE`",
    default: 'unset',
  },
  {
    names: ['CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE'],
    group: 'credentials',
    meaning:
      "the relying party's registration certificate (the JWT `rc-wrp+jwt` of ETSI TS 119 475, or the registrar's JSON file holding it), sent in `verifier_info` of signed requests ([registration](docs/deploy.md#eu-relying-party-registration-access-and-registration-certificates))",
    default: 'no `verifier_info`',
  },
  {
    names: ['CREDENTIAL_VERIFIER_ROOTS_FILE'],
    group: 'credentials',
    meaning: "PEM CA certificates that the access certificate chain and the registration certificate's signer must end at",
    default: 'each chain is checked in itself',
  },
  {
    names: ['CREDENTIAL_READER_KEY_FILE', 'CREDENTIAL_READER_CERT_FILE'],
    group: 'credentials',
    meaning: "the readerAuth key (EC P-256, PEM) and certificate chain (PEM, leaf first) of Annex C requests: Apple Wallet's certificate from Apple Business Connect",
    default: 'requests carry no readerAuth',
  },
  {
    names: ['CREDENTIAL_PLAIN_ANSWERS'],
    group: 'credentials',
    meaning: `${FLAG_WORDS}: wallets are asked for answers in the clear (\`direct_post\`, \`dc_api\`), for wallets that cannot encrypt`,
    default: `${flag('CREDENTIAL_PLAIN_ANSWERS')}: encrypted answers only (\`direct_post.jwt\`, \`dc_api.jwt\`), as HAIP 1.0 requires`,
  },
  {
    names: ['CREDENTIAL_AV_PROFILE'],
    group: 'credentials',
    meaning: `${FLAG_WORDS}: the QR panel also offers the EU age verification app's \`av://\` request (Annex A §A.5: unsigned, by value, answered \`direct_post\` in the clear over TLS; docs/security.md)`,
    default: `${flag('CREDENTIAL_AV_PROFILE')} wherever the digital ID is on`,
  },
  {
    names: ['CREDENTIAL_VICAL_SIGNER_FILE'],
    group: 'credentials',
    meaning: "PEM root(s) a VICAL's signer must chain to (AAMVA's VICAL root), for `trust import --vical`",
    default: 'VICALs are not imported',
  },
  {
    names: ['CREDENTIAL_TRUSTED_LIST_SIGNER_FILE'],
    group: 'credentials',
    meaning: 'PEM certificate(s) an ETSI trusted list must be signed with, for `trust import --etsi-tl`',
    default: 'trusted lists are not imported',
  },
  {
    names: ['CREDENTIAL_TRUST_REFRESH_HOURS'],
    group: 'credentials',
    meaning: `how often an imported list is read again, sooner when the list's next update comes first (${range('CREDENTIAL_TRUST_REFRESH_HOURS')})`,
    default: number('CREDENTIAL_TRUST_REFRESH_HOURS'),
  },
  {
    names: ['CREDENTIAL_REVOCATION_UNREACHABLE'],
    group: 'credentials',
    meaning: '`refuse`: a credential whose status list or CRL cannot be fetched is refused (no attempt spent); `accept`: verified without it',
    default: code(TEXT_DEFAULTS.CREDENTIAL_REVOCATION_UNREACHABLE),
  },

  // Abuse limits
  {
    names: ['RATE_LIMIT_AUTH_FAILURES'],
    group: 'limits',
    meaning: 'failed client authentications per address (and per client id from it) per minute',
    default: number('RATE_LIMIT_AUTH_FAILURES'),
  },
  { names: ['RATE_LIMIT_SESSIONS'], group: 'limits', meaning: 'new verification sessions per address per minute', default: number('RATE_LIMIT_SESSIONS') },
  { names: ['RATE_LIMIT_CHECKS'], group: 'limits', meaning: 'method posts (checks) per address per ten minutes', default: number('RATE_LIMIT_CHECKS') },
  {
    names: ['RATE_LIMIT_SIGNIN_ACCOUNT'],
    group: 'limits',
    meaning:
      'dashboard sign-in attempts per account (the email, whether or not it has an account) and address per fifteen minutes, refused from that address even with the right password; also a signed-in session\'s password confirmations',
    default: number('RATE_LIMIT_SIGNIN_ACCOUNT'),
  },
  {
    names: ['RATE_LIMIT_SIGNIN_ACCOUNT_CEILING'],
    group: 'limits',
    meaning:
      'failed dashboard sign-ins per account from all addresses per fifteen minutes; past it each address gets one try a window, so guessing from many addresses slows while the right password from an address that has not failed still signs in',
    default: number('RATE_LIMIT_SIGNIN_ACCOUNT_CEILING'),
  },
  { names: ['RATE_LIMIT_SIGNIN_ADDRESS'], group: 'limits', meaning: 'dashboard sign-in attempts per address per fifteen minutes', default: number('RATE_LIMIT_SIGNIN_ADDRESS') },
  {
    names: ['RATE_LIMIT_PASSWORD_RESET_EMAIL'],
    group: 'limits',
    meaning: '"Forgot password?" requests per email, known or not, from all addresses per hour (it protects the inbox, so it is not per address)',
    default: number('RATE_LIMIT_PASSWORD_RESET_EMAIL'),
  },
  { names: ['RATE_LIMIT_PASSWORD_RESET_ADDRESS'], group: 'limits', meaning: '"Forgot password?" requests per address per hour', default: number('RATE_LIMIT_PASSWORD_RESET_ADDRESS') },
  {
    names: ['PASSWORD_HASH_MEMORY_KIB'],
    group: 'server',
    meaning: `argon2id's memory for a new dashboard password hash, in KiB (${range('PASSWORD_HASH_MEMORY_KIB')}, two passes); at least 19456, OWASP's minimum, with NODE_ENV=production; a hash names its own cost, so older ones still verify`,
    default: number('PASSWORD_HASH_MEMORY_KIB'),
  },

  // Email
  {
    names: ['SMTP_URL'],
    group: 'mail',
    essential: true,
    meaning:
      "the mail server of the dashboard's \"Forgot password?\" emails: `smtps://user:password@host` (TLS, port 465 by default) or `smtp://user:password@host:587` (STARTTLS when offered); user and password percent-encoded (`@` is `%40`); never logged or echoed",
    default: 'no email; passwords are reset with `ofage users reset-password`',
  },
  { names: ['SMTP_FROM'], group: 'mail', meaning: 'the sender, `no-reply@age.example.com` or `ofage <no-reply@age.example.com>`; required with `SMTP_URL`, refused without it', default: 'unset' },

  // Outbound requests
  {
    names: ['OUTBOUND_ALLOWED_NETWORKS'],
    group: 'outbound',
    meaning:
      'comma-separated addresses and CIDR prefixes (`10.0.5.7`, `10.0.5.0/24`, `fd00:5::/64`) that outbound requests (webhooks, status lists, CRLs, trust lists) may reach although private or loopback. Any of them may then reach it, a dashboard user\'s webhook included: name the receiver\'s address, not a network ([docs/security.md](docs/security.md#outbound-requests))',
    default: 'public addresses only, and loopback outside production',
  },
]
