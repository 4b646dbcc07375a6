import type { ErrorCode } from '../errors.ts'
import type { Language } from '../pages/i18n.ts'

/** What a dashboard user reads, per language. Functions take values that callers escape when rendering. */
export type DashboardMessages = {
  dashboard: string
  mainNav: string
  auditLog: string
  usage: string
  signOut: string
  signOutEverywhere: string
  signedInAs: (email: string) => string
  sandboxNotice: string

  signInTitle: string
  email: string
  password: string
  signIn: string
  /** The one answer to a wrong email, a wrong password or an account without one: no account enumeration. */
  signInFailed: string
  signedOut: string
  signedOutEverywhere: string
  passwordSaved: string
  signOutEverywhereIntro: string
  /** The offer, on the set-password page and before signing out everywhere, to remove the account's passkeys too. */
  removePasskeys: (count: number) => string
  removePasskeysHelp: string

  setPasswordTitle: string
  setPasswordIntro: (email: string) => string
  newPassword: string
  repeatPassword: string
  passwordRule: (min: number) => string
  savePassword: string
  passwordTooShort: (min: number) => string
  passwordTooLong: string
  passwordsDiffer: string
  linkInvalid: string

  auditIntro: string
  filters: string
  transactionId: string
  from: string
  to: string
  methodClass: string
  level: string
  any: string
  classes: Record<'age_only' | 'biometric', string>
  levels: Record<'first_verification' | 're_verification', string>
  search: string
  clearFilters: string
  caption: string
  columns: { time: string; transactionId: string; methodClass: string; level: string; ageOver: string; method: string; revoked: string }
  yes: string
  no: string
  noRows: string
  older: string
  newest: string
  downloadCsv: string

  verification: string
  kept: string
  keptIntro: string
  fields: {
    transactionId: string
    createdAt: string
    clientId: string
    subject: string
    methodClass: string
    level: string
    ageOver: string
    method: string
    ageBuffer: string
    revokedAt: string
  }
  subjectExplained: string
  ageOverValue: (age: number) => string
  ageBufferValue: (years: number) => string
  none: string
  notRevoked: string
  revokedExplained: string
  notKept: string
  notKeptItems: string[]
  backToAudit: string

  usageIntro: (month: string) => string
  usageCounts: string
  counts: { total: string; ageOnly: string; biometric: string; reverification: string }
  plan: string
  usedOfLimit: (used: number, limit: number) => string
  percentOfLimit: (percent: string) => string
  unlimited: (used: number) => string
  limitReached: string
  perDay: string
  chartLabel: (month: string, days: number, max: number) => string
  chartBar: (day: string, total: number) => string
  chartMax: (max: number) => string
  showTable: string
  dayTableCaption: string
  day: string

  settings: string
  settingsIntro: string
  statusHeading: string
  statusLabel: string
  statusActive: string
  statusSuspended: string
  clientIdLabel: string
  modeLabel: string
  modeSandbox: string
  modeLive: string
  redirectUrisHeading: string
  redirectRules: string[]
  redirectUrisCaption: string
  redirectUriLabel: string
  addRedirectUri: string
  removeRedirectUri: (uri: string) => string
  remove: string
  lastRedirectUri: string
  siteHeading: string
  minAgeLabel: string
  minAgeHelp: string
  homeUrlLabel: string
  homeUrlHelp: (fallback: string) => string
  /** A live client's http addresses from before https was required (oauth/clients.ts `cleartextAddresses`). */
  needsHttps: (addresses: string) => string
  saveSite: string
  methodsHeading: string
  methodsIntro: string
  methodNames: Record<'face' | 'credential' | 'passkey' | 'age_pass', string>
  methodHelp: Record<'face' | 'credential' | 'passkey' | 'age_pass', string>
  saveMethods: string
  secretHeading: string
  secretIntro: string
  overlapActive: (until: string) => string
  overlapLabel: string
  overlapOptions: Record<string, string>
  overlapHelp: string
  yourPassword: string
  rotateSecret: string
  newSecretHeading: string
  newSecretShownOnce: string
  previousSecretUntil: (until: string) => string
  previousSecretEnded: string
  integrationHeading: string
  integrationIntro: string
  environmentCaption: string
  codeCaption: string
  secretPlaceholder: string
  integrationMore: string
  settingsNotices: Record<'redirect_uri_added' | 'redirect_uri_removed' | 'site_saved' | 'methods_saved' | 'passkey_added' | 'passkey_removed' | 'gate_host_added' | 'gate_host_removed' | 'gate_saved', string>
  settingsProblems: {
    redirectUri: string
    redirectUriKnown: string
    redirectUriUnknown: string
    redirectUriLast: string
    redirectUriTooMany: (max: number) => string
    minAge: string
    homeUrl: string
    overlap: string
    password: string
    demoSecret: string
    methods: string
    /** A lower minimum age would let the client ask for thresholds its own face buffer (set by the operator) is too small for. */
    minAgeUnderBuffer: string
    gateHost: string
    gateHostTaken: string
    gateHostLast: string
    gateAge: string
    gateTtl: string
  }
  /** The age gate (src/gate/, docs/gate.md): the hosts this client gates through a reverse proxy. */
  gate: {
    heading: string
    intro: string
    hostsCaption: string
    noHosts: string
    hostLabel: string
    hostHelp: string
    addHost: string
    removeHost: (host: string) => string
    ageLabel: string
    ageHelp: (fallback: number) => string
    ttlLabel: string
    ttlHelp: string
    save: string
  }

  passkeysHeading: string
  passkeysIntro: string
  noPasskeys: string
  passkeysCaption: string
  passkeyAddedOn: string
  passkeyAddedFrom: string
  passkeyOriginUnknown: string
  passkeyLastUsed: string
  passkeyPassword: string
  passkeyNeverUsed: string
  addPasskey: string
  removePasskey: (created: string) => string
  signInWithPasskey: string
  orWithPassword: string
  passkeyScript: { working: string; cancelled: string; failed: string }
  passkeyOutcomes: { signInFailed: string; wrongPassword: string; challengeExpired: string; invalid: string; alreadySaved: string; tooMany: (max: number) => string }

  errorTitle: string
  errors: Partial<Record<ErrorCode, string>>
  errorCode: string
}

const en: DashboardMessages = {
  dashboard: 'Dashboard',
  mainNav: 'Dashboard',
  auditLog: 'Audit log',
  usage: 'Usage',
  signOut: 'Sign out',
  signOutEverywhere: 'Sign out everywhere',
  signedInAs: (email) => `Signed in as ${email}`,
  sandboxNotice: 'Test mode: this is a sandbox client. Its verifications are tests, not real checks.',

  signInTitle: 'Sign in to your dashboard',
  email: 'Email',
  password: 'Password',
  signIn: 'Sign in',
  signInFailed: 'The email or the password is not right.',
  signedOut: 'You are signed out.',
  signedOutEverywhere: 'You are signed out on every device.',
  passwordSaved: 'Your password is saved. Sign in with it now.',
  signOutEverywhereIntro: 'This ends every session of your account, on every device, this one included.',
  removePasskeys: (count) => `Also remove the ${count} ${count === 1 ? 'passkey' : 'passkeys'} of this account`,
  removePasskeysHelp: 'A passkey signs in without the password. Keep this ticked unless you recognise every passkey below as your own: you can add yours again afterwards.',

  setPasswordTitle: 'Choose your password',
  setPasswordIntro: (email) => `Choose the password for ${email}. Every device signed in to this account is signed out.`,
  newPassword: 'New password',
  repeatPassword: 'Repeat the password',
  passwordRule: (min) => `At least ${min} characters. A phrase of a few words is easy to remember and hard to guess.`,
  savePassword: 'Save password',
  passwordTooShort: (min) => `The password needs at least ${min} characters.`,
  passwordTooLong: 'The password is too long.',
  passwordsDiffer: 'The two passwords are not the same.',
  linkInvalid: 'This link is not valid: it was used already, has expired, or was replaced by a newer one. Ask your operator for a new link.',

  auditIntro: 'Every approved verification leaves one row here. Search for the transaction_id your site received, or narrow the list by date and kind.',
  filters: 'Search and filter',
  transactionId: 'Transaction ID',
  from: 'From (UTC date)',
  to: 'To (UTC date, included)',
  methodClass: 'Method class',
  level: 'Level',
  any: 'Any',
  classes: { age_only: 'Age only (age_only)', biometric: 'Biometric (biometric)' },
  levels: { first_verification: 'First verification (first_verification)', re_verification: 'Re-verification (re_verification)' },
  search: 'Search',
  clearFilters: 'Clear filters',
  caption: 'Verifications, newest first',
  columns: { time: 'Time (UTC)', transactionId: 'Transaction ID', methodClass: 'Class', level: 'Level', ageOver: 'Age over', method: 'Method', revoked: 'Revoked' },
  yes: 'Yes',
  no: 'No',
  noRows: 'No verification matches.',
  older: 'Older verifications',
  newest: 'Back to the newest',
  downloadCsv: 'Download these verifications as CSV',

  verification: 'Verification',
  kept: 'What we keep',
  keptIntro: 'This is everything the service stores about this verification.',
  fields: {
    transactionId: 'Transaction ID (transaction_id)',
    createdAt: 'Approved at (UTC)',
    clientId: 'Client ID',
    subject: 'Pseudonymous user ID (sub)',
    methodClass: 'Method class',
    level: 'Verification level',
    ageOver: 'Age threshold proven',
    method: 'Method that approved it',
    ageBuffer: 'Face check safety buffer',
    revokedAt: 'Revoked at (UTC)',
  },
  subjectExplained: 'The same person has the same ID at your site, and an unrelated one at any other site.',
  ageOverValue: (age) => `${age} or older`,
  ageBufferValue: (years) => `${years} years above the threshold`,
  none: 'None',
  notRevoked: 'Not revoked',
  revokedExplained: 'Its code was used twice, so the tokens issued from it no longer validate.',
  notKept: 'What we do not keep',
  notKeptItems: [
    'No picture or video of a face: the face check’s frames are used for the estimate and deleted at once.',
    'No age estimate: only whether the face looked clearly older than the threshold.',
    'No credential: not the digital ID, its salts, digests or issuer.',
    'No document data: no name, birth date, address or document number.',
  ],
  backToAudit: 'Back to the audit log',

  usageIntro: (month) => `Approved verifications of ${month} (UTC), counted as the usage API counts them (GET /api/oauth/usage, period=month).`,
  usageCounts: 'This month',
  counts: { total: 'Total', ageOnly: 'Age only (age_only)', biometric: 'Biometric (biometric)', reverification: 'Re-verifications' },
  plan: 'Plan limit',
  usedOfLimit: (used, limit) => `${used} of ${limit} verifications used`,
  percentOfLimit: (percent) => `${percent} of the monthly limit`,
  unlimited: (used) => `${used} verifications used; your plan has no monthly limit.`,
  limitReached: 'The limit is reached: new verifications are refused (payment_required) until the next month starts (UTC) or your plan is raised.',
  perDay: 'Verifications per day',
  chartLabel: (month, days, max) => `Bar chart: verifications per day in ${month}, ${days} days so far, at most ${max} on one day. The table below lists the same numbers.`,
  chartBar: (day, total) => `${day}: ${total}`,
  chartMax: (max) => `max ${max}`,
  showTable: 'Show the numbers per day as a table',
  dayTableCaption: 'Verifications per day (UTC)',
  day: 'Day (UTC)',

  settings: 'Settings',
  settingsIntro: 'How your site connects to the service. Changes apply to the next request at once.',
  statusHeading: 'Status',
  statusLabel: 'Status',
  statusActive: 'Active: your visitors can verify and your backend can exchange codes.',
  statusSuspended: 'Suspended by your operator: the page refuses your visitors and the token endpoint refuses your secret (client_suspended). Ask your operator why.',
  clientIdLabel: 'Client ID (client_id)',
  modeLabel: 'Mode',
  modeSandbox: 'Test (sandbox): tokens say sandbox: true and prove nothing.',
  modeLive: 'Live: real checks.',
  redirectUrisHeading: 'Redirect URIs',
  redirectRules: [
    'A request’s redirect_uri must equal one of these exactly, character for character: scheme, host, port, path and query.',
    'No wildcards and no prefixes: https://shop.example/cb and https://shop.example/cb/ are different addresses, and so are http and https.',
    'An absolute http(s) address, without a #fragment, a user name or password, spaces or control characters. A live site must use https (RFC 9700 §2.6): http only on your own machine (http://localhost, http://127.0.0.1, http://[::1]).',
  ],
  redirectUrisCaption: 'Registered redirect URIs',
  redirectUriLabel: 'New redirect URI',
  addRedirectUri: 'Add redirect URI',
  removeRedirectUri: (uri) => `Remove ${uri}`,
  remove: 'Remove',
  lastRedirectUri: 'A client keeps at least one redirect URI: add another before removing this one.',
  siteHeading: 'Your site',
  minAgeLabel: 'Minimum age (min_age)',
  minAgeHelp: 'A whole number from 1 to 99, or empty for none. A code proving a lower age than this is refused at the exchange (age_requirement_not_met), whatever the page’s URL asked for.',
  homeUrlLabel: 'Home address',
  homeUrlHelp: (fallback) => `Where the page’s “Back to site” link leads. Empty: ${fallback}`,
  needsHttps: (addresses) => `These addresses use plain http, which a live site may no longer register: ${addresses}. They keep working; add the https address, then remove the http one.`,
  saveSite: 'Save',
  methodsHeading: 'Ways to verify',
  methodsIntro: 'The ways your visitors may prove their age. The page offers only these, and the token does not say which was used: this choice is what guarantees it to you. Rules for the riskiest services (the EU’s guidelines under the DSA) ask for verification, not estimation: then accept only the digital ID.',
  methodNames: { face: 'Face check', credential: 'Digital ID', passkey: 'Passkey', age_pass: 'Age pass (this browser, 30 days)' },
  methodHelp: {
    face: 'Estimates the age from a live capture, with a safety buffer. Screening, not proof.',
    credential: 'A wallet shows a signed “over 18” from an ID issuer (EU digital identity, mobile driving licence).',
    passkey: 'A passkey saved after an earlier check; it counts only if you accept the way of that check.',
    age_pass: 'A browser checked recently skips the check; it counts only if you accept the way of that check.',
  },
  saveMethods: 'Save ways',
  secretHeading: 'Client secret',
  secretIntro: 'The service keeps only a hash of your secret, so it cannot show it again. If it is lost or may have leaked, rotate it: you get a new one, shown once.',
  overlapActive: (until) => `The previous secret also works until ${until} (UTC).`,
  overlapLabel: 'Keep the current secret working for',
  overlapOptions: { '0': 'No time: it stops working now (a leaked secret)', '3600': '1 hour', '86400': '1 day', '604800': '7 days', '2592000': '30 days' },
  overlapHelp: 'Long enough to deploy the new secret without an outage. Rotating again ends any earlier overlap.',
  yourPassword: 'Your password',
  rotateSecret: 'Rotate secret',
  newSecretHeading: 'Your new client secret',
  newSecretShownOnce: 'Copy it now: it is shown only this once. Put it in OFAGE_CLIENT_SECRET.',
  previousSecretUntil: (until) => `The previous secret also works until ${until} (UTC). Both are accepted until then.`,
  previousSecretEnded: 'The previous secret no longer works.',
  integrationHeading: 'Integration',
  integrationIntro: 'Ready to copy: your backend’s environment and the two functions of an age check with our client library (npm package ofage, ofage/client).',
  environmentCaption: 'Environment of your backend',
  codeCaption: 'age-check.ts',
  secretPlaceholder: 'your-client-secret',
  integrationMore: 'The same flow with curl, a standard OAuth library or Python, and every error explained: docs/integration.md and docs/errors.md in the ofage repository.',
  settingsNotices: { redirect_uri_added: 'The redirect URI is added.', redirect_uri_removed: 'The redirect URI is removed.', site_saved: 'Your site settings are saved.', methods_saved: 'The ways to verify are saved.', passkey_added: 'Your passkey is added: sign in with it next time.', passkey_removed: 'The passkey is removed.', gate_host_added: 'The host is gated: set up its proxy as docs/gate.md shows.', gate_host_removed: 'The host is no longer gated.', gate_saved: 'The gate settings are saved.' },
  settingsProblems: {
    redirectUri: 'This is not a redirect URI we can register: see the rules above.',
    redirectUriKnown: 'This redirect URI is registered already.',
    redirectUriUnknown: 'This redirect URI is not registered.',
    redirectUriLast: 'A client keeps at least one redirect URI: add another before removing this one.',
    redirectUriTooMany: (max) => `A client has at most ${max} redirect URIs: remove one first.`,
    minAge: 'The minimum age is a whole number from 1 to 99, or empty.',
    homeUrl: 'The home address must be an absolute http(s) address without a #fragment, a user name or password, spaces or control characters; a live site’s must use https, except on your own machine (localhost).',
    overlap: 'Choose one of the listed times.',
    password: 'The password is not right. The secret was not rotated.',
    demoSecret: 'The demo client’s secret is derived by the server from its keys, so that /demo can always exchange its codes: it is not rotated here.',
    methods: 'Tick at least one way.',
    minAgeUnderBuffer: 'This minimum age would let your site ask for ages that need a larger face check buffer than yours. Ask the operator to raise the buffer first (clients update --face-buffer), or keep the minimum age.',
    gateHost: 'Enter a host name such as shop.example, or an origin such as https://shop.example:8443, without a path; a live site’s must use https, except on your own machine (localhost).',
    gateHostTaken: 'This host is gated by another client already. A host is gated by one client only.',
    gateHostLast: 'A client keeps at least one redirect URI: add one before removing its last gated host.',
    gateAge: 'The gate’s age is a whole number from 1 to 99, not under your minimum age, or empty.',
    gateTtl: 'Choose one of the listed times.',
  },
  gate: {
    heading: 'Age gate',
    intro: 'Age-gate a whole site without code: its reverse proxy (nginx, Caddy, Traefik) asks this service before each request and sends visitors who have not proven their age through the check. docs/gate.md has the configuration to copy.',
    hostsCaption: 'Gated hosts',
    noHosts: 'No host is gated yet.',
    hostLabel: 'Host to gate',
    hostHelp: 'Its callback, https://host/.ofage/callback, is added to your redirect URIs.',
    addHost: 'Gate this host',
    removeHost: (host) => `Stop gating ${host}`,
    ageLabel: 'Age the gate asks for',
    ageHelp: (fallback) => `Empty: your minimum age, else 18 (now ${fallback}). Raising it sends visitors back to the check.`,
    ttlLabel: 'Let a visitor in for',
    ttlHelp: 'After this, the visitor confirms their age again. A shorter time sends visitors with older cookies back to the check.',
    save: 'Save the gate',
  },

  passkeysHeading: 'Your passkeys',
  passkeysIntro: 'Sign in with your phone’s or computer’s screen lock instead of your password. Each passkey is yours alone; your password keeps working. Adding one asks for your password again.',
  noPasskeys: 'You have no passkey yet.',
  passkeysCaption: 'Your passkeys',
  passkeyAddedOn: 'Added (UTC)',
  passkeyAddedFrom: 'Added from',
  passkeyOriginUnknown: 'Not recorded',
  passkeyLastUsed: 'Last used (UTC)',
  passkeyPassword: 'Your password, to add a passkey',
  passkeyNeverUsed: 'Never',
  addPasskey: 'Add a passkey',
  removePasskey: (created) => `Remove the passkey added ${created}`,
  signInWithPasskey: 'Sign in with a passkey',
  orWithPassword: 'Or with your email and password:',
  passkeyScript: { working: 'Waiting for your passkey…', cancelled: 'No passkey was used. You can try again.', failed: 'That did not work. Try again, or use your password.' },
  passkeyOutcomes: {
    signInFailed: 'This passkey does not sign in to the dashboard. Use another, or your email and password.',
    wrongPassword: 'The password is not right. No passkey was added.',
    challengeExpired: 'This took too long or was already used. Try again.',
    invalid: 'Your device’s answer could not be checked. Try again.',
    alreadySaved: 'This passkey is added already.',
    tooMany: (max) => `You have ${max} passkeys, the most an account keeps: remove one first.`,
  },

  errorTitle: 'This page cannot be shown',
  errors: {
    invalid_request: 'The address or the form is not valid. Check the values and try again.',
    forbidden: 'This form was not sent from this dashboard, or it has expired. Go back, reload the page and try again.',
    not_found: 'There is nothing at this address.',
    too_many_requests: 'Too many sign-in attempts. Please wait a few minutes and try again.',
    server_error: 'Something went wrong on our side. Please try again in a moment.',
  },
  errorCode: 'Error code',
}

const de: DashboardMessages = {
  dashboard: 'Dashboard',
  mainNav: 'Dashboard',
  auditLog: 'Prüfprotokoll',
  usage: 'Nutzung',
  signOut: 'Abmelden',
  signOutEverywhere: 'Überall abmelden',
  signedInAs: (email) => `Angemeldet als ${email}`,
  sandboxNotice: 'Testmodus: Dies ist ein Sandbox-Client. Seine Verifizierungen sind Tests, keine echten Prüfungen.',

  signInTitle: 'Beim Dashboard anmelden',
  email: 'E-Mail',
  password: 'Passwort',
  signIn: 'Anmelden',
  signInFailed: 'Die E-Mail-Adresse oder das Passwort stimmt nicht.',
  signedOut: 'Sie sind abgemeldet.',
  signedOutEverywhere: 'Sie sind auf allen Geräten abgemeldet.',
  passwordSaved: 'Ihr Passwort ist gespeichert. Melden Sie sich jetzt damit an.',
  signOutEverywhereIntro: 'Damit enden alle Sitzungen Ihres Kontos auf allen Geräten, auch diese.',
  removePasskeys: (count) => `Auch ${count === 1 ? 'den 1 Passkey' : `die ${count} Passkeys`} dieses Kontos entfernen`,
  removePasskeysHelp: 'Mit einem Passkey meldet man sich ohne Passwort an. Lassen Sie das Häkchen gesetzt, außer Sie erkennen jeden Passkey unten als Ihren eigenen: Ihre können Sie danach wieder hinzufügen.',

  setPasswordTitle: 'Passwort festlegen',
  setPasswordIntro: (email) => `Legen Sie das Passwort für ${email} fest. Alle Geräte, die mit diesem Konto angemeldet sind, werden abgemeldet.`,
  newPassword: 'Neues Passwort',
  repeatPassword: 'Passwort wiederholen',
  passwordRule: (min) => `Mindestens ${min} Zeichen. Ein Satz aus einigen Wörtern ist leicht zu merken und schwer zu erraten.`,
  savePassword: 'Passwort speichern',
  passwordTooShort: (min) => `Das Passwort braucht mindestens ${min} Zeichen.`,
  passwordTooLong: 'Das Passwort ist zu lang.',
  passwordsDiffer: 'Die beiden Passwörter stimmen nicht überein.',
  linkInvalid: 'Dieser Link ist ungültig: Er wurde schon verwendet, ist abgelaufen oder wurde durch einen neueren ersetzt. Bitten Sie Ihren Betreiber um einen neuen Link.',

  auditIntro: 'Jede bestätigte Verifizierung hinterlässt hier eine Zeile. Suchen Sie nach der transaction_id, die Ihre Website erhalten hat, oder grenzen Sie die Liste nach Datum und Art ein.',
  filters: 'Suchen und filtern',
  transactionId: 'Transaktions-ID',
  from: 'Von (UTC-Datum)',
  to: 'Bis (UTC-Datum, einschließlich)',
  methodClass: 'Methodenklasse',
  level: 'Stufe',
  any: 'Alle',
  classes: { age_only: 'Nur Alter (age_only)', biometric: 'Biometrisch (biometric)' },
  levels: { first_verification: 'Erstverifizierung (first_verification)', re_verification: 'Wiederholte Verifizierung (re_verification)' },
  search: 'Suchen',
  clearFilters: 'Filter zurücksetzen',
  caption: 'Verifizierungen, neueste zuerst',
  columns: { time: 'Zeit (UTC)', transactionId: 'Transaktions-ID', methodClass: 'Klasse', level: 'Stufe', ageOver: 'Alter ab', method: 'Methode', revoked: 'Widerrufen' },
  yes: 'Ja',
  no: 'Nein',
  noRows: 'Keine Verifizierung passt.',
  older: 'Ältere Verifizierungen',
  newest: 'Zurück zu den neuesten',
  downloadCsv: 'Diese Verifizierungen als CSV herunterladen',

  verification: 'Verifizierung',
  kept: 'Was wir speichern',
  keptIntro: 'Das ist alles, was der Dienst über diese Verifizierung speichert.',
  fields: {
    transactionId: 'Transaktions-ID (transaction_id)',
    createdAt: 'Bestätigt am (UTC)',
    clientId: 'Client-ID',
    subject: 'Pseudonyme Nutzer-ID (sub)',
    methodClass: 'Methodenklasse',
    level: 'Verifizierungsstufe',
    ageOver: 'Nachgewiesene Altersgrenze',
    method: 'Bestätigende Methode',
    ageBuffer: 'Sicherheitsabstand der Gesichtsprüfung',
    revokedAt: 'Widerrufen am (UTC)',
  },
  subjectExplained: 'Dieselbe Person hat bei Ihrer Website dieselbe ID und bei jeder anderen Website eine unabhängige.',
  ageOverValue: (age) => `mindestens ${age}`,
  ageBufferValue: (years) => `${years} Jahre über der Altersgrenze`,
  none: 'Keiner',
  notRevoked: 'Nicht widerrufen',
  revokedExplained: 'Ihr Code wurde zweimal verwendet, daher sind die daraus ausgestellten Tokens nicht mehr gültig.',
  notKept: 'Was wir nicht speichern',
  notKeptItems: [
    'Kein Bild und kein Video eines Gesichts: Die Bilder der Gesichtsprüfung werden für die Schätzung verwendet und sofort gelöscht.',
    'Keine Altersschätzung: nur, ob das Gesicht deutlich älter als die Altersgrenze aussah.',
    'Keinen Nachweis: weder den digitalen Ausweis noch seine Salts, Digests oder Aussteller.',
    'Keine Ausweisdaten: keinen Namen, kein Geburtsdatum, keine Adresse und keine Ausweisnummer.',
  ],
  backToAudit: 'Zurück zum Prüfprotokoll',

  usageIntro: (month) => `Bestätigte Verifizierungen im ${month} (UTC), gezählt wie von der Nutzungs-API (GET /api/oauth/usage, period=month).`,
  usageCounts: 'Dieser Monat',
  counts: { total: 'Gesamt', ageOnly: 'Nur Alter (age_only)', biometric: 'Biometrisch (biometric)', reverification: 'Wiederholte Verifizierungen' },
  plan: 'Tariflimit',
  usedOfLimit: (used, limit) => `${used} von ${limit} Verifizierungen verbraucht`,
  percentOfLimit: (percent) => `${percent} des Monatslimits`,
  unlimited: (used) => `${used} Verifizierungen verbraucht; Ihr Tarif hat kein Monatslimit.`,
  limitReached: 'Das Limit ist erreicht: Neue Verifizierungen werden abgelehnt (payment_required), bis der nächste Monat beginnt (UTC) oder Ihr Tarif erhöht wird.',
  perDay: 'Verifizierungen pro Tag',
  chartLabel: (month, days, max) => `Balkendiagramm: Verifizierungen pro Tag im ${month}, bisher ${days} Tage, höchstens ${max} an einem Tag. Die Tabelle darunter enthält dieselben Zahlen.`,
  chartBar: (day, total) => `${day}: ${total}`,
  chartMax: (max) => `max. ${max}`,
  showTable: 'Die Zahlen pro Tag als Tabelle zeigen',
  dayTableCaption: 'Verifizierungen pro Tag (UTC)',
  day: 'Tag (UTC)',

  settings: 'Einstellungen',
  settingsIntro: 'Wie Ihre Website mit dem Dienst verbunden ist. Änderungen gelten sofort ab der nächsten Anfrage.',
  statusHeading: 'Status',
  statusLabel: 'Status',
  statusActive: 'Aktiv: Ihre Besucher können sich verifizieren und Ihr Backend kann Codes einlösen.',
  statusSuspended: 'Von Ihrem Betreiber gesperrt: Die Seite weist Ihre Besucher ab und der Token-Endpunkt Ihr Secret (client_suspended). Fragen Sie Ihren Betreiber nach dem Grund.',
  clientIdLabel: 'Client-ID (client_id)',
  modeLabel: 'Modus',
  modeSandbox: 'Test (Sandbox): Tokens enthalten sandbox: true und beweisen nichts.',
  modeLive: 'Live: echte Prüfungen.',
  redirectUrisHeading: 'Redirect-URIs',
  redirectRules: [
    'Die redirect_uri einer Anfrage muss einer dieser Adressen genau gleichen, Zeichen für Zeichen: Schema, Host, Port, Pfad und Query.',
    'Keine Platzhalter und keine Präfixe: https://shop.example/cb und https://shop.example/cb/ sind verschiedene Adressen, ebenso http und https.',
    'Eine absolute http(s)-Adresse ohne #Fragment, Benutzername oder Passwort, Leer- oder Steuerzeichen. Eine Live-Website muss https verwenden (RFC 9700 §2.6): http nur auf Ihrem eigenen Rechner (http://localhost, http://127.0.0.1, http://[::1]).',
  ],
  redirectUrisCaption: 'Registrierte Redirect-URIs',
  redirectUriLabel: 'Neue Redirect-URI',
  addRedirectUri: 'Redirect-URI hinzufügen',
  removeRedirectUri: (uri) => `${uri} entfernen`,
  remove: 'Entfernen',
  lastRedirectUri: 'Ein Client behält mindestens eine Redirect-URI: Fügen Sie eine weitere hinzu, bevor Sie diese entfernen.',
  siteHeading: 'Ihre Website',
  minAgeLabel: 'Mindestalter (min_age)',
  minAgeHelp: 'Eine ganze Zahl von 1 bis 99, oder leer für keines. Ein Code, der ein niedrigeres Alter nachweist, wird beim Einlösen abgelehnt (age_requirement_not_met), egal was die Adresse der Seite verlangte.',
  homeUrlLabel: 'Startadresse',
  homeUrlHelp: (fallback) => `Wohin der Link „Zurück zur Website“ der Seite führt. Leer: ${fallback}`,
  needsHttps: (addresses) => `Diese Adressen verwenden unverschlüsseltes http, das eine Live-Website nicht mehr registrieren kann: ${addresses}. Sie funktionieren weiter; fügen Sie die https-Adresse hinzu und entfernen Sie dann die http-Adresse.`,
  saveSite: 'Speichern',
  methodsHeading: 'Wege der Prüfung',
  methodsIntro: 'Die Wege, auf denen Ihre Besucher ihr Alter nachweisen dürfen. Die Seite bietet nur diese an, und das Token sagt nicht, welcher genutzt wurde: Diese Wahl garantiert es Ihnen. Regeln für die riskantesten Dienste (die EU-Leitlinien zum DSA) verlangen eine Verifikation, keine Schätzung: Akzeptieren Sie dann nur den digitalen Ausweis.',
  methodNames: { face: 'Prüfung mit dem Gesicht', credential: 'Digitaler Ausweis', passkey: 'Passkey', age_pass: 'Altersnachweis (dieser Browser, 30 Tage)' },
  methodHelp: {
    face: 'Schätzt das Alter aus einer Live-Aufnahme, mit Sicherheitspuffer. Eine Vorprüfung, kein Nachweis.',
    credential: 'Eine Wallet zeigt ein signiertes „über 18“ eines Ausstellers (EU-Identitätswallet, mobiler Führerschein).',
    passkey: 'Ein nach einer früheren Prüfung gespeicherter Passkey; er zählt nur, wenn Sie den Weg jener Prüfung akzeptieren.',
    age_pass: 'Ein kürzlich geprüfter Browser überspringt die Prüfung; das zählt nur, wenn Sie den Weg jener Prüfung akzeptieren.',
  },
  saveMethods: 'Wege speichern',
  secretHeading: 'Client-Secret',
  secretIntro: 'Der Dienst speichert nur einen Hash Ihres Secrets und kann es daher nicht erneut anzeigen. Wenn es verloren ist oder bekannt geworden sein könnte, erneuern Sie es: Sie erhalten ein neues, das einmal angezeigt wird.',
  overlapActive: (until) => `Das vorherige Secret funktioniert noch bis ${until} (UTC).`,
  overlapLabel: 'Das jetzige Secret weiter gelten lassen für',
  overlapOptions: { '0': 'Keine Zeit: Es gilt ab sofort nicht mehr (ein bekannt gewordenes Secret)', '3600': '1 Stunde', '86400': '1 Tag', '604800': '7 Tage', '2592000': '30 Tage' },
  overlapHelp: 'Lange genug, um das neue Secret ohne Ausfall einzusetzen. Eine weitere Erneuerung beendet eine frühere Übergangszeit.',
  yourPassword: 'Ihr Passwort',
  rotateSecret: 'Secret erneuern',
  newSecretHeading: 'Ihr neues Client-Secret',
  newSecretShownOnce: 'Kopieren Sie es jetzt: Es wird nur dieses eine Mal angezeigt. Tragen Sie es in OFAGE_CLIENT_SECRET ein.',
  previousSecretUntil: (until) => `Das vorherige Secret funktioniert noch bis ${until} (UTC). Bis dahin werden beide akzeptiert.`,
  previousSecretEnded: 'Das vorherige Secret funktioniert nicht mehr.',
  integrationHeading: 'Integration',
  integrationIntro: 'Zum Kopieren: die Umgebung Ihres Backends und die zwei Funktionen einer Altersprüfung mit unserer Client-Bibliothek (npm-Paket ofage, ofage/client).',
  environmentCaption: 'Umgebung Ihres Backends',
  codeCaption: 'age-check.ts',
  secretPlaceholder: 'ihr-client-secret',
  integrationMore: 'Derselbe Ablauf mit curl, einer Standard-OAuth-Bibliothek oder Python und jeder Fehler erklärt: docs/integration.md und docs/errors.md im ofage-Repository.',
  settingsNotices: { redirect_uri_added: 'Die Redirect-URI ist hinzugefügt.', redirect_uri_removed: 'Die Redirect-URI ist entfernt.', site_saved: 'Ihre Website-Einstellungen sind gespeichert.', methods_saved: 'Die Wege der Prüfung sind gespeichert.', passkey_added: 'Ihr Passkey ist hinzugefügt: Melden Sie sich nächstes Mal damit an.', passkey_removed: 'Der Passkey ist entfernt.', gate_host_added: 'Der Host ist geschützt: Richten Sie seinen Proxy ein, wie docs/gate.md es zeigt.', gate_host_removed: 'Der Host ist nicht mehr geschützt.', gate_saved: 'Die Einstellungen der Altersschranke sind gespeichert.' },
  settingsProblems: {
    redirectUri: 'Diese Redirect-URI können wir nicht registrieren: Siehe die Regeln oben.',
    redirectUriKnown: 'Diese Redirect-URI ist bereits registriert.',
    redirectUriUnknown: 'Diese Redirect-URI ist nicht registriert.',
    redirectUriLast: 'Ein Client behält mindestens eine Redirect-URI: Fügen Sie eine weitere hinzu, bevor Sie diese entfernen.',
    redirectUriTooMany: (max) => `Ein Client hat höchstens ${max} Redirect-URIs: Entfernen Sie zuerst eine.`,
    minAge: 'Das Mindestalter ist eine ganze Zahl von 1 bis 99, oder leer.',
    homeUrl: 'Die Startadresse muss eine absolute http(s)-Adresse ohne #Fragment, Benutzername oder Passwort, Leer- oder Steuerzeichen sein; die einer Live-Website muss https verwenden, außer auf Ihrem eigenen Rechner (localhost).',
    overlap: 'Wählen Sie eine der angebotenen Zeiten.',
    password: 'Das Passwort stimmt nicht. Das Secret wurde nicht erneuert.',
    demoSecret: 'Das Secret des Demo-Clients leitet der Server aus seinen Schlüsseln ab, damit /demo seine Codes immer einlösen kann: Es wird hier nicht erneuert.',
    methods: 'Wählen Sie mindestens einen Weg.',
    minAgeUnderBuffer: 'Mit diesem Mindestalter könnte Ihre Website Alter abfragen, die einen größeren Puffer der Prüfung mit dem Gesicht brauchen als Ihren. Bitten Sie den Betreiber, den Puffer zuerst zu erhöhen (clients update --face-buffer), oder behalten Sie das Mindestalter.',
    gateHost: 'Geben Sie einen Hostnamen wie shop.example oder einen Ursprung wie https://shop.example:8443 ein, ohne Pfad; eine Live-Website braucht https, außer auf Ihrem eigenen Rechner (localhost).',
    gateHostTaken: 'Diesen Host schützt schon ein anderer Client. Ein Host gehört zu genau einem Client.',
    gateHostLast: 'Ein Client behält mindestens eine Redirect-URI: Fügen Sie eine hinzu, bevor Sie seinen letzten geschützten Host entfernen.',
    gateAge: 'Das Alter der Schranke ist eine ganze Zahl von 1 bis 99, nicht unter Ihrem Mindestalter, oder leer.',
    gateTtl: 'Wählen Sie eine der angebotenen Zeiten.',
  },
  gate: {
    heading: 'Altersschranke',
    intro: 'Schützen Sie eine ganze Website ohne Code: Ihr Reverse Proxy (nginx, Caddy, Traefik) fragt diesen Dienst vor jeder Anfrage und schickt Besucher, die ihr Alter noch nicht nachgewiesen haben, durch die Prüfung. docs/gate.md enthält die Konfiguration zum Kopieren.',
    hostsCaption: 'Geschützte Hosts',
    noHosts: 'Noch ist kein Host geschützt.',
    hostLabel: 'Zu schützender Host',
    hostHelp: 'Sein Callback, https://host/.ofage/callback, wird Ihren Redirect-URIs hinzugefügt.',
    addHost: 'Diesen Host schützen',
    removeHost: (host) => `${host} nicht mehr schützen`,
    ageLabel: 'Alter, das die Schranke verlangt',
    ageHelp: (fallback) => `Leer: Ihr Mindestalter, sonst 18 (jetzt ${fallback}). Ein höheres Alter schickt Besucher erneut durch die Prüfung.`,
    ttlLabel: 'Besucher einlassen für',
    ttlHelp: 'Danach bestätigen Besucher ihr Alter erneut. Eine kürzere Zeit schickt Besucher mit älteren Cookies erneut durch die Prüfung.',
    save: 'Schranke speichern',
  },

  passkeysHeading: 'Ihre Passkeys',
  passkeysIntro: 'Melden Sie sich mit der Bildschirmsperre Ihres Telefons oder Computers statt mit dem Passwort an. Jeder Passkey gehört nur Ihnen; Ihr Passwort funktioniert weiter. Zum Hinzufügen fragen wir noch einmal nach Ihrem Passwort.',
  noPasskeys: 'Sie haben noch keinen Passkey.',
  passkeysCaption: 'Ihre Passkeys',
  passkeyAddedOn: 'Hinzugefügt (UTC)',
  passkeyAddedFrom: 'Hinzugefügt von',
  passkeyOriginUnknown: 'Nicht erfasst',
  passkeyLastUsed: 'Zuletzt verwendet (UTC)',
  passkeyPassword: 'Ihr Passwort, um einen Passkey hinzuzufügen',
  passkeyNeverUsed: 'Nie',
  addPasskey: 'Passkey hinzufügen',
  removePasskey: (created) => `Den am ${created} hinzugefügten Passkey entfernen`,
  signInWithPasskey: 'Mit einem Passkey anmelden',
  orWithPassword: 'Oder mit E-Mail-Adresse und Passwort:',
  passkeyScript: { working: 'Warten auf Ihren Passkey …', cancelled: 'Es wurde kein Passkey verwendet. Sie können es erneut versuchen.', failed: 'Das hat nicht geklappt. Versuchen Sie es erneut oder verwenden Sie Ihr Passwort.' },
  passkeyOutcomes: {
    signInFailed: 'Mit diesem Passkey können Sie sich nicht beim Dashboard anmelden. Verwenden Sie einen anderen oder E-Mail-Adresse und Passwort.',
    wrongPassword: 'Das Passwort stimmt nicht. Es wurde kein Passkey hinzugefügt.',
    challengeExpired: 'Das hat zu lange gedauert oder wurde schon verwendet. Versuchen Sie es erneut.',
    invalid: 'Die Antwort Ihres Geräts konnte nicht geprüft werden. Versuchen Sie es erneut.',
    alreadySaved: 'Dieser Passkey ist bereits hinzugefügt.',
    tooMany: (max) => `Sie haben ${max} Passkeys, die meisten, die ein Konto behält: Entfernen Sie zuerst einen.`,
  },

  errorTitle: 'Diese Seite kann nicht angezeigt werden',
  errors: {
    invalid_request: 'Die Adresse oder das Formular ist ungültig. Prüfen Sie die Angaben und versuchen Sie es erneut.',
    forbidden: 'Dieses Formular wurde nicht von diesem Dashboard gesendet oder ist abgelaufen. Gehen Sie zurück, laden Sie die Seite neu und versuchen Sie es erneut.',
    not_found: 'Unter dieser Adresse gibt es nichts.',
    too_many_requests: 'Zu viele Anmeldeversuche. Bitte warten Sie einige Minuten und versuchen Sie es erneut.',
    server_error: 'Bei uns ist etwas schiefgelaufen. Bitte versuchen Sie es gleich noch einmal.',
  },
  errorCode: 'Fehlercode',
}

export const dashboardLanguages: Record<Language, DashboardMessages> = { en, de }
