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
