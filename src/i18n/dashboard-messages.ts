import type { ErrorCode } from '../errors.ts'

/** What a dashboard user reads, per language. Functions take values that callers escape when rendering. */
export type DashboardMessages = {
  dashboard: string
  /** The dashboard's frame and the pages' shared parts on a phone (issue 24): dates, the chart's empty state. */
  layout: {
    /** Under the audit log's date filters: what a date there means. */
    datesHelp: string
    /** Above the filtered list, the filter's days in the page's own date format (the date fields show the browser's). */
    showingFrom: (day: string) => string
    showingUntil: (day: string) => string
    showingDays: (days: string) => string
    /** In place of the chart while the month has no verification. */
    chartEmpty: string
  }
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

  /** "Forgot password?" (src/dashboard/password-reset.ts): a link by email when SMTP_URL is set, else the operator's command. */
  forgotPassword: {
    link: string
    title: string
    intro: string
    send: string
    /** The one answer to every request, whether or not the email has an account. */
    sent: string
    tooMany: string
    operatorResets: string
    backToSignIn: string
    emailSubject: string
    /** The email's plain text: the set-password link, and until when it works. */
    emailBody: (uri: string, until: string) => string
  }

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
  /** `max` and `total` come formatted in the page's language (src/i18n/format.ts). */
  chartLabel: (month: string, days: number, max: string) => string
  chartBar: (day: string, total: string) => string
  showTable: string
  dayTableCaption: string
  day: string

  /** The webhooks page (/dashboard/webhooks): the client's endpoints and each one's deliveries. */
  webhooksPage: {
    nav: string
    intro: string
    endpointsCaption: string
    noEndpoints: string
    columns: { url: string; events: string; created: string; action: string }
    removeEndpoint: (uri: string) => string
    addHeading: string
    urlLabel: string
    urlHelp: string
    eventsLegend: string
    eventNames: Record<'verification.approved' | 'code.replayed' | 'plan.limit_reached' | 'client.secret_rotated', string>
    add: string
    secretHeading: string
    secretShownOnce: (uri: string) => string
    endpointTitle: string
    backToEndpoints: string
    endpointFields: { id: string; url: string; events: string; created: string }
    sendTest: string
    testHelp: string
    deliveriesHeading: string
    deliveriesIntro: string
    deliveriesCaption: string
    deliveryColumns: { event: string; created: string; status: string; attempts: string; nextAttempt: string; lastAnswer: string; action: string }
    statuses: Record<'pending' | 'delivered' | 'failed' | 'dead', string>
    noDeliveries: string
    replay: string
    replayDelivery: (created: string) => string
    older: string
    newest: string
    notices: Record<'endpoint_added' | 'endpoint_removed' | 'test_sent' | 'replayed', string>
    problems: { url: string; https: string; internal: string; known: string; tooMany: (max: number) => string; events: string; notDead: string }
  }

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
  /** A live client's http addresses from before https was required (clients/model.ts `cleartextAddresses`). */
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
    gateHostLast: string
    gateAge: string
    gateTtl: string
  }
  /** The site's look on the hosted page (src/branding/): logo, display name, accent colour, privacy policy link. */
  branding: {
    heading: string
    intro: string
    logoLabel: string
    logoHelp: string
    currentLogo: string
    noLogo: string
    uploadLogo: string
    removeLogo: string
    displayNameLabel: string
    displayNameHelp: (site: string) => string
    accentLabel: string
    accentHelp: string
    privacyUrlLabel: string
    privacyUrlHelp: string
    save: string
    notices: { saved: string; logoSaved: string; logoRemoved: string }
    problems: {
      displayName: (max: number) => string
      accentColour: string
      /** The colour's lowest contrast where it meets text, as "3.97:1". */
      accentContrast: (ratio: string) => string
      privacyUrl: string
      logoMissing: string
      logoTooLarge: string
      logoNotImage: string
      logoTooManyPixels: string
      logoAnimated: string
      logoUnreadable: string
      logoTooComplex: string
      logoBusy: string
    }
  }
  /** The age gate (src/gate/, docs/gate.md): the hosts this client gates through a reverse proxy. */
  gate: {
    heading: string
    intro: string
    hostsCaption: string
    noHosts: string
    hostLabel: string
    /** Where the proxy names this client (docs/gate.md): the client id, twice. */
    proxyNames: (clientId: string) => string
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
