import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc, { type Arbitrary } from 'fast-check'
import { setClientLogo, updateBranding } from '../../src/branding/branding.ts'
import { logoVersion } from '../../src/branding/page-branding.ts'
import { createDevIssuer, issueDevCredential, type DevCredentialFormat } from '../../src/credentials/dev/issuer.ts'
import { answerRequest, createDevWallet, presentToVerifier } from '../../src/credentials/dev/wallet.ts'
import { ageQuery } from '../../src/credentials/queries.ts'
import { preSessionCsrfToken, sessionCsrfToken } from '../../src/dashboard/csrf.ts'
import { createDashboardSession } from '../../src/dashboard/sessions.ts'
import { createDashboardUser, issuePasswordLink, setPasswordWithToken } from '../../src/dashboard/users.ts'
import { DEMO_CLIENT_ID, demoRedirectUri } from '../../src/demo/demo-client.ts'
import { errorStatus, type ErrorCode } from '../../src/errors.ts'
import { EstimatorBusyError, ImageDecodeError, type AgeEstimator, type FaceObservation } from '../../src/estimator/types.ts'
import type { Logger } from '../../src/lib/log.ts'
import { randomToken } from '../../src/lib/crypto.ts'
import { sealGateFlow, sealGatePass } from '../../src/gate/gate-cookie.ts'
import { updateGate } from '../../src/gate/gate-settings.ts'
import { s256 } from '../../src/oauth/pkce.ts'
import { webhookDeliveries } from '../../src/db/schema.ts'
import { addWebhookEndpoint, findClientEndpoint, listWebhookEndpoints } from '../../src/webhooks/endpoints.ts'
import { enqueueTestEvent } from '../../src/webhooks/events.ts'
import { eq } from 'drizzle-orm'
import { createTestContext, freePort, ISSUER, PUBLIC_URL, REDIRECT_URI } from '../helpers.ts'
import { testBrowser } from '../verification/browser.ts'

/**
 * A property-based fuzzer over every route the app serves (issue 10): requests that mix real values (a
 * client's credentials, a live session with its browser cookie and CSRF token, a fresh code, a wallet
 * request, real credential presentations) with hostile ones, and the property every answer must keep:
 * no 5xx, JSON in the spec's shape under /api/, HTML pages with their CSP elsewhere.
 */

// ---------------------------------------------------------------------------------------------------
// Values: a piece of text in a request, printed short in a counterexample even when it is a megabyte.

/** Values of the fixture, looked up when the request is sent (a code or a wallet request is used once). */
export type Real =
  | 'clientId' | 'secret' | 'redirectUri' | 'state' | 'code' | 'token' | 'session' | 'csrf' | 'browser' | 'agePass'
  | 'walletState' | 'requestId' | 'answeredRequestId' | 'challenge' | 'demoState' | 'demoCode' | 'metricsToken' | 'sdJwt' | 'mdoc'
  | 'dashboardSession' | 'dashboardCsrf' | 'dashboardForm' | 'dashboardFormCsrf' | 'dashboardEmail' | 'dashboardPassword' | 'passwordToken' | 'transactionId'
  | 'gatePass' | 'gateFlow' | 'gateCode' | 'gateClient' | 'webhookEndpoint' | 'webhookDelivery'
  | 'logoVersion' | 'logoFile'

export type Piece =
  | string
  /** A real value, optionally edited: at `at % length`, `drop` characters replaced by `insert`. */
  | { real: Real; edit?: [at: number, drop: number, insert: string] }
  | { repeat: string; bytes: number }
  /** `[[[…]]]`, `depth` deep: raw JSON in a JSON body, plain text elsewhere. */
  | { nested: number }
  | { concat: Piece[] }

/** A JSON member's value: a piece as a JSON string, or raw JSON text. */
export type JsonValue = Piece | { json: string }

const protoKeys = ['__proto__', 'constructor', 'toString', 'prototype', 'hasOwnProperty', 'valueOf', '__defineGetter__']
const nastyWords = [
  ...protoKeys, '', ' ', '\u0000', 'a\u0000b', '%', '%ff', '%c0%af', '%00', '%%', '%2', '%e2%82', '%u0041', '\ud800', '\udfff\ud800',
  '😀', '\u202e', '\ufeff', '..', '../../etc/passwd', '%2e%2e%2f', 'null', 'undefined', 'true', '0', '-1', '1e309', 'NaN',
  '9999-12-31', '0000-01-01', '2026-02-30', '+275760-09-13', '2026-11-22T25:00:00Z', '<script>alert(1)</script>', "' or '1'='1",
  '\r\n', '\t', 'a=b&c=d', ';', ',', '"', '\\', '[]', '{}', 'a[b]', '__proto__[x]', 'a.b', '=', '&', '#', '?', '/',
]

/** Pieces that are not what the route expects: the core of every request's hostile half. */
export function hostilePiece(hugeBytes: number): Arbitrary<Piece> {
  const word = fc.constantFrom(...nastyWords)
  const text = fc.oneof(
    { weight: 4, arbitrary: word },
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
    { weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 8 }) },
    { weight: 2, arbitrary: fc.array(word, { minLength: 2, maxLength: 4 }).map((words) => words.join('')) },
  )
  // Huge and deep values are rare: they are slow to send and refused early, and the rest must be reached too.
  const huge = fc.record({ repeat: fc.constantFrom('a', '%', '\u0000', 'é', '😀', '%ff', '[', '{"a":', 'a=b&'), bytes: fc.integer({ min: 1024, max: hugeBytes }) })
  const nested = fc.record({ nested: fc.integer({ min: 64, max: 10_000 }) })
  return fc.oneof({ weight: 40, arbitrary: text }, { weight: 1, arbitrary: huge }, { weight: 1, arbitrary: nested })
}

// ---------------------------------------------------------------------------------------------------
// Requests: what the fuzzer generates (plain data, so fast-check can print and shrink it).

export type HeaderValue = Piece | { basic: Piece[] }
type Part = { name: Piece; filename?: Piece; type?: string; data: Piece }
export type Body =
  | { json: [Piece, JsonValue][] }
  | { form: [Piece, Piece][] }
  | { multipart: Part[]; oddity: 'none' | 'no-end' | 'lf' | 'wrong-boundary' | 'no-boundary' }
  | { text: Piece }

export type RequestSpec = {
  route: string
  method: string
  /** Which live session `session`, `csrf` and `browser` name: a sandbox client's or a production client's. */
  session: 'sandbox' | 'production'
  path: Piece[]
  query: [Piece, Piece][]
  /** Path, query and form pieces inserted as they are (`%`, `%ff` stay malformed), not percent-encoded. */
  rawUrl: boolean
  headers: [string, HeaderValue][]
  cookies: [Piece, Piece][]
  contentType?: Piece
  contentLength?: string
  body?: Body
  /** The body's text sent as Latin-1 bytes: `\xff` in a JSON string is then invalid UTF-8. */
  latin1: boolean
}

type Fields = Record<string, Arbitrary<Piece>>
type BodyFields = Record<string, Arbitrary<JsonValue>>
type BodyType = 'json' | 'form' | 'multipart'

/** What a route takes: its method and path, and the fields, headers and cookies a real caller sends. */
type Shape = {
  /** `METHOD /path (variant)`; without the variant, the route's pattern unless `pattern` says otherwise. */
  name: string
  pattern?: string
  method: string
  /** The method the app registers the route under, where it is not `method`: `ALL` for a route taking any. */
  served?: string
  path: (string | Arbitrary<Piece>)[]
  session?: 'sandbox' | 'production'
  query?: Fields
  body?: { type: BodyType; fields: BodyFields; files?: boolean; file?: { name: string; data: Arbitrary<Piece> } }
  headers?: Record<string, Arbitrary<HeaderValue>>
  cookies?: Fields
}

/**
 * Every route of the app, as a real caller would call it. `strict`: only real values (deep paths need every
 * gate passed at once: the method, the session, its cookie, its token, the content type); else each value
 * is hostile one time in five.
 */
function shapes(hostile: Arbitrary<Piece>, strict: boolean): Shape[] {
  const mix = <T extends JsonValue | HeaderValue>(...valid: Arbitrary<T>[]): Arbitrary<T | Piece> =>
    strict ? fc.oneof(...valid) : fc.oneof({ weight: 4, arbitrary: fc.oneof(...valid) }, { weight: 1, arbitrary: hostile })
  const real = (name: Real) => fc.constant<Piece>({ real: name })
  const words = (...values: string[]) => fc.constantFrom(...values)
  const edited = (name: Real) =>
    fc.oneof(real(name), fc.record({ real: fc.constant(name), edit: fc.tuple(fc.nat(4000), fc.nat(8), fc.constantFrom('', 'A', '~', '"', '\u0000', '.', 'ey')) }))
  const basic = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(mix(real('clientId')), mix(real('secret'))).map((basic) => ({ basic })) },
    { weight: 1, arbitrary: fc.array(hostile, { maxLength: 6 }).map((basic) => ({ basic })) },
    { weight: 1, arbitrary: words('Basic', 'Basic %%%', 'Basic ====', 'basic Y2w6', 'Basic Og==', 'Basic AA==', 'Bearer x', 'Basic  Y2w6eA==', 'Basic Y2w6eA== extra') },
  )
  const pageCookies = { ofage_browser: mix(real('browser')), ofage_pass: mix(real('agePass')) }
  const dashboardCookies = { ofage_dashboard: mix(real('dashboardSession')), ofage_dashboard_form: mix(real('dashboardForm')) }
  const origin = fc.oneof({ weight: 4, arbitrary: words(PUBLIC_URL, 'null') }, { weight: strict ? 0 : 1, arbitrary: words('https://evil.example', PUBLIC_URL.toUpperCase()) })
  const csrfHeader = { 'x-csrf-token': mix(real('csrf')), accept: mix(words('application/json', 'text/html')), origin: mix(origin) }
  const sessionId = mix(real('session'))
  const form = (session: 'sandbox' | 'production', path: (string | Arbitrary<Piece>)[], fields: BodyFields, type: BodyType = 'form', method?: string): Shape => ({
    name: `POST /${path.map((p) => (typeof p === 'string' ? p : p === sessionId ? ':id' : (method ?? ':method'))).join('/')} (${session})`,
    pattern: `/${path.map((p) => (typeof p === 'string' ? p : p === sessionId ? ':id' : ':method')).join('/')}`,
    method: 'POST',
    path,
    session,
    query: { lang: mix(words('en', 'de')) },
    body: { type, fields: { csrf: mix(real('csrf')), ...fields }, files: type === 'multipart' },
    headers: csrfHeader,
    cookies: pageCookies,
  })
  const vpToken = (id: string, name: Real) => fc.record({ concat: fc.tuple(fc.constant(`{"${id}":["`), edited(name), fc.constant('"]}')) })
  const vpTokens = fc.oneof(vpToken('pid_sd_jwt', 'sdJwt'), vpToken('age_verification_mdoc', 'mdoc'), vpToken('mdl', 'mdoc'))
  const b64 = fc.oneof(fc.base64String({ maxLength: 64 }).map((s) => s.replace(/[+/=]/g, 'A') || 'AA'), hostile)
  const assertion = fc
    .record({ id: b64, rawId: b64, type: mix(words('public-key')), clientDataJSON: b64, authenticatorData: b64, signature: b64, attestationObject: b64, userHandle: fc.option(b64) })
    .map(({ id, rawId, type, ...response }) => ({ json: JSON.stringify({ id, rawId, type, response, clientExtensionResults: {} }) }))
  const passkey = (path: string, fields: Record<string, Arbitrary<JsonValue>>) => form('sandbox', ['s', sessionId, ...path.split('/')], fields, 'json')
  const sessions = (['sandbox', 'production'] as const).flatMap((kind) => [
    { name: `GET /s/:id (${kind})`, method: 'GET', path: ['s', sessionId], session: kind, query: { lang: mix(words('en', 'de')) }, cookies: pageCookies, headers: { 'accept-language': mix(words('de', 'de-DE,en;q=0.5', '*', 'en;q=abc')) } },
    form(kind, ['s', sessionId, 'continue'], {}),
    form(kind, ['s', sessionId, 'forget'], {}),
    form(kind, ['s', sessionId, 'methods', mix(words('face', 'sandbox', 'credential')), 'challenge'], {}),
  ])
  const lang = { lang: mix(words('en', 'de')) }
  const auditQuery = {
    ...lang,
    transaction_id: mix(real('transactionId'), words('', '00000000-0000-4000-8000-000000000000')),
    from: mix(words('', '2026-11-01', '2026-02-30')),
    to: mix(words('', '2026-11-30', '1970-01-01')),
    method_class: mix(words('', 'age_only', 'biometric')),
    level: mix(words('', 'first_verification', 're_verification')),
  }
  const dashboardGet = (path: string[], query: Fields = lang, pattern?: string): Shape => ({
    name: `GET /${path.map((p) => (typeof p === 'string' ? p : ':transaction_id')).join('/')}`,
    pattern,
    method: 'GET',
    path,
    query,
    cookies: dashboardCookies,
    headers: { 'accept-language': mix(words('de', 'en;q=0.5', '*')) },
  })
  const dashboardPost = (path: string, fields: BodyFields, csrf: Real): Shape => ({
    name: `POST /dashboard/${path}`,
    method: 'POST',
    path: ['dashboard', ...path.split('/')],
    query: lang,
    body: { type: 'form', fields: { csrf: mix(real(csrf)), ...fields } },
    headers: { origin: mix(origin), 'x-forwarded-for': mix(words('198.51.100.7', '2001:db8::1')) },
    cookies: dashboardCookies,
  })
  const dashboardJson = (path: string, fields: BodyFields, csrf: Real): Shape => {
    const shape = dashboardPost(path, fields, csrf)
    return { ...shape, body: { type: 'json', fields: shape.body!.fields } }
  }
  const password = mix(real('dashboardPassword'), words('short', 'x'.repeat(300)))
  const dashboard: Shape[] = [
    dashboardGet(['dashboard']),
    dashboardGet(['dashboard', 'sign-in'], { ...lang, notice: mix(words('signed_out', 'signed_out_everywhere', 'password_set')) }),
    dashboardGet(['dashboard', 'set-password'], { ...lang, token: mix(edited('passwordToken')) }),
    dashboardGet(['dashboard', 'audit'], { ...auditQuery, before: mix(words('2026-11-22T12:00:00.000Z_ffffffff-ffff-4fff-bfff-ffffffffffff')) }),
    dashboardGet(['dashboard', 'audit.csv'], auditQuery),
    dashboardGet(['dashboard', 'usage']),
    { ...dashboardGet(['dashboard', 'audit', '']), name: 'GET /dashboard/audit/:transaction_id', path: ['dashboard', 'audit', mix(edited('transactionId'))] },
    dashboardPost('sign-in', { email: mix(real('dashboardEmail')), password }, 'dashboardFormCsrf'),
    dashboardPost('set-password', { token: mix(edited('passwordToken')), password, confirm: password, remove_passkeys: mix(words('1', '', 'on')) }, 'dashboardFormCsrf'),
    dashboardGet(['dashboard', 'forgot-password'], { ...lang, notice: mix(words('sent', 'SENT')) }),
    dashboardPost('forgot-password', { email: mix(real('dashboardEmail'), words('nobody@shop.example', '')) }, 'dashboardFormCsrf'),
    dashboardPost('sign-out', {}, 'dashboardCsrf'),
    dashboardGet(['dashboard', 'sign-out-everywhere']),
    dashboardPost('sign-out-everywhere', { remove_passkeys: mix(words('1', '', 'on')) }, 'dashboardCsrf'),
    dashboardGet(['dashboard', 'settings'], { ...lang, notice: mix(words('redirect_uri_added', 'redirect_uri_removed', 'site_saved', 'methods_saved', 'branding_saved', 'logo_saved')) }),
    dashboardGet(['dashboard', 'webhooks'], { ...lang, notice: mix(words('endpoint_added', 'endpoint_removed', 'test_sent', 'replayed', 'x')) }),
    {
      ...dashboardGet(['dashboard', 'webhooks', ''], { ...lang, notice: mix(words('test_sent', 'replayed')), before: mix(words('2026-11-22T12:00:00.000Z_msg_ffffffffffffffffffffffff', '2026-02-30T12:00:00.000Z_msg_a')) }),
      name: 'GET /dashboard/webhooks/:endpoint_id',
      path: ['dashboard', 'webhooks', mix(edited('webhookEndpoint'))],
    },
    dashboardPost('webhooks/add', {
      url: mix(words('https://hooks.fuzz.example/in', 'http://hooks.fuzz.example/in', 'https://10.0.0.1/x', 'https://[::1]/x', 'javascript:alert(1)', 'https://a.example/#f', '')),
      'event_verification.approved': mix(words('on', '', 'off')),
      'event_code.replayed': mix(words('on', '')),
    }, 'dashboardCsrf'),
    dashboardPost('webhooks/remove', { endpoint_id: mix(real('webhookEndpoint'), words('we_doesnotexist', '')) }, 'dashboardCsrf'),
    dashboardPost('webhooks/test', { endpoint_id: mix(edited('webhookEndpoint')) }, 'dashboardCsrf'),
    dashboardPost('webhooks/replay', { delivery_id: mix(edited('webhookDelivery'), words('msg_doesnotexist', '')) }, 'dashboardCsrf'),
    dashboardPost('settings/redirect-uris/add', { redirect_uri: mix(words('https://added.example/cb', 'http://localhost:8080/cb?x=1', 'javascript:alert(1)', 'https://a.example/#f', 'https://a.example/ b', '')) }, 'dashboardCsrf'),
    dashboardPost('settings/redirect-uris/remove', { redirect_uri: mix(real('redirectUri'), words('https://added.example/cb', 'https://never.example/')) }, 'dashboardCsrf'),
    dashboardPost('settings/site', { min_age: mix(words('', '18', '0', '100', '1e1', '-1', '０')), home_url: mix(words('', 'https://shop.example/', 'ftp://x', 'https://u:p@x.example/')) }, 'dashboardCsrf'),
    dashboardPost('settings/methods', { method_face: mix(words('on', '', 'off', 'yes')), method_credential: mix(words('on', '')), method_passkey: mix(words('on', '1')), method_age_pass: mix(words('on', '')) }, 'dashboardCsrf'),
    dashboardPost('settings/gate-hosts/add', { gate_host: mix(words('gated-too.example', 'https://gated.example', 'http://plain.example', 'a.example/b', '', '[::1]')) }, 'dashboardCsrf'),
    dashboardPost('settings/gate-hosts/remove', { gate_host: mix(words('gated-too.example', 'https://never.example', '')) }, 'dashboardCsrf'),
    dashboardPost('settings/gate', { gate_age: mix(words('', '18', '0', '100', '1e1')), gate_ttl: mix(words('3600', '2592000', '5', '')) }, 'dashboardCsrf'),
    dashboardPost('settings/branding', {
      display_name: mix(words('', 'Fuzz & <Co>', 'x'.repeat(81), 'a\u202eb')),
      accent_colour: mix(words('', '#14632c', '#767676', 'red', '#1d4ed8;}')),
      privacy_url: mix(words('', 'https://shop.example/privacy', 'http://shop.example/p', 'javascript:alert(1)')),
    }, 'dashboardCsrf'),
    {
      ...dashboardPost('settings/branding/logo', {}, 'dashboardCsrf'),
      body: { type: 'multipart', fields: { csrf: mix(real('dashboardCsrf')) }, files: true, file: { name: 'logo', data: mix(real('logoFile'), words('<svg onload=alert(1)>', 'GIF89a', '\x89PNG\r\n\x1a\n')) } },
    },
    dashboardPost('settings/branding/logo/remove', {}, 'dashboardCsrf'),
    dashboardPost('settings/rotate-secret', { overlap: mix(words('0', '3600', '2592000', '99', '')), password }, 'dashboardCsrf'),
    dashboardJson('passkeys/options', { purpose: mix(words('register', 'verify')), password }, 'dashboardCsrf'),
    dashboardJson('passkeys', { response: assertion }, 'dashboardCsrf'),
    dashboardPost('passkeys/delete', { credential_id: mix(words('AAAA', '', 'x'.repeat(1500))) }, 'dashboardCsrf'),
    dashboardJson('sign-in/passkey/options', { purpose: mix(words('verify', 'register')) }, 'dashboardFormCsrf'),
    dashboardJson('sign-in/passkey', { response: assertion }, 'dashboardFormCsrf'),
  ]
  // The gate, as a proxy in front of gated.example forwards to it (docs/gate.md).
  // The client the proxy's configuration names: on /gate/auth in its address, on /.ofage/ in X-Ofage-Client.
  const gateClient = mix(real('gateClient'), words('cl_nobody', ''))
  const gateHeaders = {
    'x-forwarded-host': mix(words(GATED_HOST, `${GATED_HOST}:443`, 'GATED.example', `${GATED_HOST}:80`, 'unknown.example', '')),
    'x-forwarded-proto': mix(words('https', 'http', 'HTTPS', 'https, http', '')),
    'x-original-uri': mix(words('/page?x=1', '/.ofage/start', '//evil.example')),
  }
  const pageHeaders = { ...gateHeaders, 'x-ofage-client': gateClient }
  const gateCookies = { '__Host-ofage_gate': mix(real('gatePass')), '__Host-ofage_gate_flow': mix(real('gateFlow')) }
  const rd = mix(words('/', '/a/b?c=d', '//evil.example', 'https://evil.example', '/\\evil.example', `https://${GATED_HOST}/x`))
  const gate: Shape[] = [
    {
      name: 'GET /gate/auth',
      served: 'ALL',
      method: 'GET',
      path: ['gate', 'auth'],
      query: { redirect: mix(words('1', 'true', '0')), client: gateClient },
      headers: { ...gateHeaders, 'x-forwarded-uri': mix(words('/', '/a?b=c&d=e', '//evil.example')), 'x-forwarded-method': mix(words('GET', 'HEAD', 'POST')) },
      cookies: gateCookies,
    },
    { name: 'GET /.ofage/start', served: 'ALL', method: 'GET', path: ['.ofage', 'start'], query: { rd, lang: mix(words('en', 'de')) }, headers: pageHeaders, cookies: gateCookies },
    {
      name: 'GET /.ofage/callback',
      method: 'GET',
      path: ['.ofage', 'callback'],
      query: { code: mix(real('gateCode')), state: mix(words(GATE_STATE)), iss: mix(words(ISSUER, 'https://evil.example')) },
      headers: pageHeaders,
      cookies: gateCookies,
    },
    { name: 'GET /.ofage/forget', served: 'ALL', method: 'GET', path: ['.ofage', 'forget'], query: { rd }, headers: pageHeaders, cookies: gateCookies },
    { name: 'GET /.ofage/unavailable', served: 'ALL', method: 'GET', path: ['.ofage', 'unavailable'], query: { lang: mix(words('en', 'de')) } },
    { name: 'GET /.ofage/ofage.css', method: 'GET', path: ['.ofage', 'ofage.css'] },
  ]
  return [
    {
      name: 'POST /api/oauth/token',
      method: 'POST',
      path: ['api', 'oauth', 'token'],
      headers: { authorization: basic },
      body: { type: 'json', fields: { grant_type: mix(words('authorization_code')), code: mix(edited('code')), redirect_uri: mix(real('redirectUri')), state: mix(real('state')) } },
    },
    {
      name: 'POST /api/oauth/token (form, client_secret_post, PKCE)',
      method: 'POST',
      path: ['api', 'oauth', 'token'],
      body: {
        type: 'form',
        fields: { grant_type: mix(words('authorization_code')), code: mix(edited('code')), redirect_uri: mix(real('redirectUri')), client_id: mix(real('clientId')), client_secret: hostile, code_verifier: mix(words('x'.repeat(43), 'a'.repeat(128))) },
      },
    },
    {
      name: 'POST /api/oauth/par',
      method: 'POST',
      path: ['api', 'oauth', 'par'],
      headers: { authorization: basic },
      body: {
        type: 'form',
        fields: { response_type: mix(words('code', 'token')), redirect_uri: mix(real('redirectUri')), state: mix(words('st')), age_required: mix(words('18', '21', '0')), code_challenge: mix(words('x'.repeat(43))), code_challenge_method: mix(words('S256', 'plain')) },
      },
    },
    { name: 'GET /.well-known/oauth-authorization-server', method: 'GET', path: ['.well-known', 'oauth-authorization-server'] },
    { name: 'GET /api/.well-known/oauth-authorization-server', method: 'GET', path: ['api', '.well-known', 'oauth-authorization-server'] },
    { name: 'GET /api/verify/token/:access_token', method: 'GET', path: ['api', 'verify', 'token', mix(edited('token'))] },
    { name: 'GET /api/verify/token/', method: 'GET', path: ['api', 'verify', 'token', ''] },
    { name: 'POST /api/oauth/validate', method: 'POST', path: ['api', 'oauth', 'validate'], headers: { authorization: basic }, body: { type: 'json', fields: { token: mix(edited('token')) } } },
    { name: 'POST /api/oauth/validate (form)', method: 'POST', path: ['api', 'oauth', 'validate'], body: { type: 'form', fields: { token: mix(edited('token')) } } },
    { name: 'GET /api/verify/public-key', method: 'GET', path: ['api', 'verify', 'public-key'], headers: { 'if-none-match': mix(words('*', '"x"', '"x", *')) } },
    { name: 'GET /api/.well-known/jwks.json', method: 'GET', path: ['api', '.well-known', 'jwks.json'], headers: { 'if-none-match': mix(words('*', '""')) } },
    { name: 'GET /api/openapi.json', method: 'GET', path: ['api', 'openapi.json'] },
    {
      name: 'GET /api/oauth/usage',
      method: 'GET',
      path: ['api', 'oauth', 'usage'],
      headers: { authorization: basic },
      query: { period: mix(words('day', 'month', 'all')), start_date: mix(words('2026-11-01', '2026-11-01T00:00:00Z', '1970-01-01')), end_date: mix(words('2026-11-30', '9999-12-31', '2026-11-22T12:00:00+14:00')) },
    },
    { name: 'GET /api/oid4vp/requests/:state', method: 'GET', path: ['api', 'oid4vp', 'requests', mix(edited('walletState'))], session: 'production' },
    // OpenID4VP 1.0 §5.10: the same request by POST, with the wallet's metadata (JSON in a form field) and nonce.
    {
      name: 'POST /api/oid4vp/requests/:state',
      method: 'POST',
      path: ['api', 'oid4vp', 'requests', mix(edited('walletState'))],
      session: 'production',
      body: {
        type: 'form',
        fields: {
          wallet_metadata: mix(
            words(
              '{"vp_formats_supported":{"mso_mdoc":{"issuerauth_alg_values":[-7]},"dc+sd-jwt":null},"response_modes_supported":["direct_post.jwt"]}',
              '{"request_object_signing_alg_values_supported":["ES256"],"client_id_prefixes_supported":["x509_hash"]}',
              '{"jwks":{"keys":[]}}',
              '{"vp_formats_supported":[],"__proto__":{"jwks":1}}',
            ),
          ),
          wallet_nonce: mix(words('kxbJ//QQ/qheqcBnVzjZPg==', 'qPmxiNFCR3QTm19POc8u')),
        },
      },
    },
    {
      name: 'POST /api/oid4vp/responses',
      method: 'POST',
      path: ['api', 'oid4vp', 'responses'],
      session: 'production',
      body: { type: 'form', fields: { state: mix(real('walletState')), vp_token: mix(vpTokens), error: fc.oneof(hostile, words('access_denied')), error_description: hostile } },
    },
    // The EU age verification app's response URI (Annex A §A.5): the request's state in the path, `direct_post` in the clear.
    {
      name: 'POST /api/oid4vp/av/:state',
      method: 'POST',
      path: ['api', 'oid4vp', 'av', mix(edited('walletState'))],
      session: 'production',
      body: { type: 'form', fields: { vp_token: mix(fc.oneof(vpToken('proof_of_age', 'mdoc'), vpTokens)), response: hostile, error: fc.oneof(hostile, words('access_denied')), error_description: hostile } },
    },
    { name: 'GET /healthz', method: 'GET', path: ['healthz'] },
    { name: 'GET /readyz', method: 'GET', path: ['readyz'] },
    { name: 'GET /metrics', method: 'GET', path: ['metrics'], headers: { authorization: mix(real('metricsToken').map((token) => ({ concat: ['Bearer ', token] }))) } },
    { name: 'GET /assets/:file', method: 'GET', path: ['assets', mix(words('ofage.css', 'face-capture.js', 'passkey.js', 'credential.js'))] },
    { name: 'GET /favicon.ico', method: 'GET', path: ['favicon.ico'] },
    // The shop has a logo and an accent colour (createFuzzTarget).
    { name: 'GET /branding/:client_id/logo.png', method: 'GET', path: ['branding', mix(real('clientId'), words('cl_nobody')), 'logo.png'], query: { v: mix(real('logoVersion'), words('', '0')) } },
    { name: 'GET /branding/:client_id/theme.css', method: 'GET', path: ['branding', mix(real('clientId'), words('cl_nobody')), 'theme.css'], query: { v: mix(words('14632c', '')) } },
    {
      name: 'GET /',
      method: 'GET',
      path: [''],
      query: {
        client_id: mix(real('clientId')),
        redirect_uri: mix(real('redirectUri')),
        state: mix(words('st')),
        age_required: mix(words('18', '21', '99', '1')),
        lang: mix(words('en', 'de')),
        response_type: mix(words('code', 'token')),
        code_challenge: mix(words('x'.repeat(43))),
        code_challenge_method: mix(words('S256', 'plain')),
        request_uri: mix(words('urn:ietf:params:oauth:request_uri:x', 'https://evil.example/')),
      },
      headers: { 'accept-language': mix(words('de', 'de-DE,en;q=0.5', '*', 'en;q=abc', '__proto__,de;q=0.1')) },
      cookies: pageCookies,
    },
    ...sessions,
    form('sandbox', ['s', sessionId, 'methods', mix(words('sandbox'))], { age: mix(words('30', '12', '99', '150')), method_class: mix(words('age_only', 'biometric')) }, 'form', 'sandbox'),
    // One, two, four or six frames: as many as one of these phases lists names, a quarter of the time.
    form('production', ['s', sessionId, 'methods', mix(words('face'))], { challenge: mix(real('challenge')), phases: mix(words('0', '0,1', '0,0,1,1', '0,0,1,1,2,2')) }, 'multipart', 'face'),
    form('production', ['s', sessionId, 'methods', mix(words('credential'))], { request: mix(real('requestId'), real('answeredRequestId')) }, 'form', 'credential'),
    form('production', ['s', sessionId, 'methods', 'credential', 'start'], {}),
    { name: 'GET /s/:id/methods/credential/status', method: 'GET', path: ['s', sessionId, 'methods', 'credential', 'status'], session: 'production', query: { request: mix(real('requestId')) }, cookies: pageCookies },
    form('production', ['s', sessionId, 'methods', 'credential', 'dc-response'], {
      request: mix(real('requestId')),
      response: mix(vpTokens.map((token) => ({ concat: ['{"protocol":"openid4vp","data":{"vp_token":', token, '}}'] }))),
    }),
    passkey('passkey/options', { purpose: mix(words('register', 'verify', 'delete')) }),
    passkey('passkey/register', { response: mix(assertion) }),
    passkey('passkey', { response: mix(assertion) }),
    passkey('passkey/delete', { response: mix(assertion) }),
    ...dashboard,
    ...gate,
    { name: 'GET /demo', method: 'GET', path: ['demo'] },
    { name: 'GET /demo/start', method: 'GET', path: ['demo', 'start'], query: { age: mix(words('18', '21')) } },
    { name: 'GET /demo/callback', method: 'GET', path: ['demo', 'callback'], query: { code: mix(real('demoCode')), state: mix(real('demoState')) }, cookies: { ofage_demo_state: mix(real('demoState')) } },
  ]
}

const otherMethods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'PROPFIND', 'get']
const contentTypes: Record<BodyType, string> = { json: 'application/json', form: 'application/x-www-form-urlencoded', multipart: 'multipart/form-data' }
const oddContentTypes = [
  'text/plain', 'application/json; charset=utf-16', 'APPLICATION/JSON', 'application/x-www-form-urlencoded;charset=ISO-8859-1',
  'multipart/form-data', 'multipart/form-data; boundary=', 'application/json, text/html', 'application/jsonx', 'text/html', ';', '',
]

/** A request for one route: its real shape, each part of it hostile some of the time unless `strict`. */
function requestFor(shape: Shape, hostile: Arbitrary<Piece>, strict: boolean): Arbitrary<RequestSpec> {
  const vary = <T, U>(valid: Arbitrary<T>, odd: Arbitrary<U>, weight = 8): Arbitrary<T | U> => (strict ? valid : fc.oneof({ weight, arbitrary: valid }, { weight: 1, arbitrary: odd }))
  const present = <T>(arbitrary: Arbitrary<T>) => (strict ? arbitrary : fc.option(arbitrary, { nil: undefined, freq: 8 }))
  const pairs = <T>(fields: Record<string, Arbitrary<T>> = {}, names: Arbitrary<Piece> = fc.oneof(fc.constantFrom(...protoKeys, ...Object.keys(fields)), hostile)) => {
    const own = fc.tuple(...Object.entries(fields).map(([key, value]) => present(value).map((v) => (v === undefined ? [] : [[key, v] as [Piece, T]]))))
    // Extras: prototype keys, hostile names, and the route's own names again (duplicates).
    const extra = fc.array(fc.tuple(names, hostile), { maxLength: strict ? 0 : 3 })
    return fc.tuple(own, extra).map(([own, extra]): [Piece, T | Piece][] => [...own.flat(), ...extra])
  }
  // Header names must be tokens (a client cannot send others); their values are hostile instead.
  const headerNames = fc.constantFrom('accept-language', 'x-forwarded-for', 'x-request-id', 'sec-fetch-site', 'origin', 'accept', 'content-encoding', 'if-none-match', 'authorization', 'x-csrf-token', 'cookie')
  const bodyType = shape.body?.type ?? 'form'
  const body: Arbitrary<Body | undefined> = vary(fc.constant(bodyType), fc.constantFrom<BodyType | 'text' | 'none'>('json', 'form', 'multipart', 'text', 'none')).chain((type): Arbitrary<Body | undefined> => {
    if (type === 'none' || (!shape.body && type === bodyType && shape.method === 'GET')) return fc.constant(undefined)
    if (type === 'text') return hostile.map((text) => ({ text }))
    const fields = pairs(shape.body?.fields ?? {})
    if (type === 'json') return fields.map((json) => ({ json }))
    if (type === 'form') return fields.map((members) => ({ form: members.map(([k, v]) => [k, typeof v === 'object' && 'json' in v ? v.json : v] as [Piece, Piece]) }))
    const file = shape.body?.file
    const frame = fc.record({
      name: vary(fc.constant(file?.name ?? 'frame'), hostile),
      filename: vary(fc.constant(file ? `${file.name}.png` : 'frame.jpg'), fc.option(hostile, { nil: undefined })),
      type: vary(fc.constant(file ? 'image/png' : 'image/jpeg'), fc.constantFrom('image/png', 'text/plain', '', undefined)),
      data: vary(file?.data ?? fc.uint8Array({ minLength: 24, maxLength: 48 }).map((bytes) => `\xff\xd8\xff${String.fromCharCode(...bytes)}`), hostile, 4),
    })
    const count = file ? vary(fc.constant(1), fc.nat(3)) : shape.body?.files ? vary(fc.constantFrom(1, 2, 4, 6), fc.nat(13)) : vary(fc.constant(0), fc.nat(2))
    return fc.record({
      multipart: fc.tuple(fields, count.chain((n) => fc.array(frame, { minLength: n, maxLength: n }))).map(([members, files]) => [
        ...members.map(([name, value]) => ({ name, data: typeof value === 'object' && 'json' in value ? value.json : value })),
        ...files,
      ]),
      oddity: vary(fc.constant('none' as const), fc.constantFrom('no-end', 'lf', 'wrong-boundary', 'no-boundary'), 3),
    })
  })
  const cookieName = fc.oneof(fc.constantFrom('ofage_browser', 'ofage_pass', 'ofage_demo_state', 'ofage_dashboard', 'ofage_dashboard_form', ...protoKeys), hostile)
  return fc.record({
    route: fc.constant(shape.name),
    method: vary(fc.constant(shape.method), fc.constantFrom(...otherMethods), 12),
    session: fc.constant(shape.session ?? 'sandbox'),
    path: fc
      .tuple(...shape.path.map((part) => (typeof part === 'string' ? fc.constant<Piece>(part) : part)), vary(fc.constant([]), fc.array(hostile, { minLength: 1, maxLength: 3 }), 10))
      .map((parts) => [...(parts.slice(0, -1) as Piece[]), ...(parts.at(-1) as Piece[])]),
    query: pairs(shape.query),
    rawUrl: fc.boolean(),
    headers: pairs(shape.headers, headerNames).map((headers) => headers.map(([k, v]) => [k as string, v])),
    cookies: pairs(shape.cookies, cookieName),
    contentType: vary(fc.constant(contentTypes[bodyType]), fc.oneof(fc.constantFrom(...oddContentTypes, undefined), hostile), 4),
    contentLength: vary(fc.constant('exact'), fc.constantFrom(undefined, '-1', 'abc', '0', '1', '99999999999', '1e3', '16385', ' 10', '25165825'), 4),
    body,
    latin1: vary(fc.constant(false), fc.constant(true)),
  }) as Arbitrary<RequestSpec>
}

/** Requests to paths the app does not serve, under /api/ and elsewhere, long ones included. */
function unknownPaths(hostile: Arbitrary<Piece>): Arbitrary<RequestSpec> {
  const segment = fc.oneof(fc.constantFrom('api', 's', 'oauth', 'verify', 'token', 'assets', 'demo', 'dashboard', 'audit', ''), hostile)
  return fc.record({
    route: fc.constant('unknown path'),
    method: fc.constantFrom(...otherMethods),
    session: fc.constant('sandbox' as const),
    path: fc.tuple(fc.constantFrom('api', 's', 'x', ''), fc.array(segment, { maxLength: 5 })).map(([first, rest]) => [first, ...rest]),
    query: fc.array(fc.tuple(hostile, hostile), { maxLength: 3 }),
    rawUrl: fc.boolean(),
    headers: fc.constant([]),
    cookies: fc.constant([]),
    latin1: fc.constant(false),
  })
}

/** `METHOD /pattern` of every route the fuzzer calls, to compare with the routes the app serves. */
export function fuzzedRoutes(): string[] {
  const shapesOf = shapes(fc.constant(''), true)
  return [...new Set(shapesOf.map((shape) => `${shape.served ?? shape.method} ${shape.pattern ?? shape.name.replace(/^\S+ /, '').replace(/ \(.*\)$/, '')}`))]
}

/**
 * `perRoute` requests to every route as a real caller sends them, each route's drawn from its own
 * generator with `seed`: what one route's requests are does not move when another route is added (a shared
 * sequence does), so the run reaches every route's own work whatever else changes. Run first, as examples.
 */
export function realRequests(options: { hugeBytes: number; seed: number; perRoute: number }): RequestSpec[] {
  const hostile = hostilePiece(options.hugeBytes)
  return shapes(hostile, true).flatMap((shape) => fc.sample(requestFor(shape, hostile, true), { seed: options.seed, numRuns: options.perRoute }))
}

/**
 * Every route, weighted alike, a quarter of the time as a real caller sends it and otherwise with hostile
 * parts, plus unknown paths. `hugeBytes` bounds the huge values (keep it small in the quick run).
 */
export function requestArbitrary(options: { hugeBytes: number }): Arbitrary<RequestSpec> {
  const hostile = hostilePiece(options.hugeBytes)
  const real = shapes(hostile, true).map((shape) => requestFor(shape, hostile, true))
  const mixed = shapes(hostile, false).map((shape) => requestFor(shape, hostile, false))
  return fc.oneof({ weight: 1, arbitrary: fc.oneof(...real) }, { weight: 3, arbitrary: fc.oneof(...mixed, unknownPaths(hostile)) })
}

// ---------------------------------------------------------------------------------------------------
// Sending: the real values of the moment, and the bytes of a request.

/** The real values of one request, made on first use (a code, a wallet request) and then kept for it. */
export type Reals = (name: Real) => Promise<string>

async function render(piece: Piece, reals: Reals): Promise<string> {
  if (typeof piece === 'string') return piece
  if ('repeat' in piece) return piece.repeat.repeat(Math.ceil(piece.bytes / piece.repeat.length))
  if ('nested' in piece) return '['.repeat(piece.nested) + ']'.repeat(piece.nested)
  if ('concat' in piece) return (await Promise.all(piece.concat.map((part) => render(part, reals)))).join('')
  const value = await reals(piece.real)
  if (!piece.edit) return value
  const [at, drop, insert] = piece.edit
  const where = at % (value.length + 1)
  return value.slice(0, where) + insert + value.slice(where + drop)
}

async function jsonText(value: JsonValue, reals: Reals): Promise<string> {
  if (typeof value === 'object' && 'json' in value) return value.json
  if (typeof value === 'object' && 'nested' in value) return render(value, reals)
  return JSON.stringify(await render(value, reals))
}

/** The UTF-8 text percent-encoded as a browser would; a lone surrogate (which no browser sends) becomes U+FFFD. */
function percentEncode(text: string): string {
  return encodeURIComponent(text.toWellFormed())
}

/** What an HTTP parser would hand over: UTF-8 bytes read as Latin-1, without NUL, CR and LF (no server lets those through). */
function headerSafe(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1').replace(/[\0\r\n]/g, '')
}

/** Text already of bytes (a frame) stays as it is; other text becomes its UTF-8 bytes, as a browser sends it. */
function bytesOf(text: string, latin1: boolean): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(text, latin1 || /^[\x00-\xff]*$/.test(text) ? 'latin1' : 'utf8'))
}

const BOUNDARY = 'fuzzboundary7MA4YWxk'

async function renderBody(spec: RequestSpec, body: Body, reals: Reals): Promise<Uint8Array<ArrayBuffer>> {
  const url = async (piece: Piece) => (spec.rawUrl ? render(piece, reals) : percentEncode(await render(piece, reals)))
  if ('text' in body) return bytesOf(await render(body.text, reals), spec.latin1)
  if ('form' in body) return bytesOf((await Promise.all(body.form.map(async ([k, v]) => `${await url(k)}=${await url(v)}`))).join('&'), spec.latin1)
  if ('json' in body) {
    const members = await Promise.all(body.json.map(async ([k, v]) => `${JSON.stringify(await render(k, reals))}:${await jsonText(v, reals)}`))
    return bytesOf(`{${members.join(',')}}`, spec.latin1)
  }
  const latin1 = (text: string) => Buffer.from(text, /^[\x00-\xff]*$/.test(text) ? 'latin1' : 'utf8').toString('latin1')
  const parts = await Promise.all(
    body.multipart.map(async (part) => {
      const filename = part.filename === undefined ? '' : `; filename="${latin1(await render(part.filename, reals))}"`
      const type = part.type === undefined ? '' : `\r\nContent-Type: ${part.type}`
      return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${latin1(await render(part.name, reals))}"${filename}${type}\r\n\r\n${latin1(await render(part.data, reals))}\r\n`
    }),
  )
  const text = parts.join('') + (body.oddity === 'no-end' ? '' : `--${BOUNDARY}--\r\n`)
  return bytesOf(body.oddity === 'lf' ? text.replaceAll('\r\n', '\n') : text, true)
}

/** The request a spec describes, or undefined where no client could send it (the URL does not parse). */
export async function buildRequest(spec: RequestSpec, reals: Reals): Promise<Request | undefined> {
  const url = async (piece: Piece) => (spec.rawUrl ? render(piece, reals) : percentEncode(await render(piece, reals)))
  const path = (await Promise.all(spec.path.map(url))).join('/')
  const query = (await Promise.all(spec.query.map(async ([k, v]) => `${await url(k)}=${await url(v)}`))).join('&')
  const headers = new Headers()
  for (const [name, value] of spec.headers) {
    const text = typeof value === 'object' && 'basic' in value ? `Basic ${Buffer.from((await Promise.all(value.basic.map((p) => render(p, reals)))).join(':')).toString('base64')}` : await render(value, reals)
    headers.append(name, headerSafe(text))
  }
  if (spec.cookies.length > 0) headers.set('cookie', headerSafe((await Promise.all(spec.cookies.map(async ([k, v]) => `${await render(k, reals)}=${await render(v, reals)}`))).join('; ')))
  const withBody = spec.body !== undefined && !['GET', 'HEAD'].includes(spec.method.toUpperCase())
  const bytes = withBody ? await renderBody(spec, spec.body!, reals) : undefined
  if (bytes && spec.contentType !== undefined) {
    let type = headerSafe(await render(spec.contentType, reals))
    const multipart = 'multipart' in spec.body! ? spec.body.oddity : undefined
    if (type === contentTypes.multipart && multipart !== undefined && multipart !== 'no-boundary') type += `; boundary=${multipart === 'wrong-boundary' ? 'other' : BOUNDARY}`
    headers.set('content-type', type)
  }
  if (bytes && spec.contentLength !== undefined) headers.set('content-length', spec.contentLength === 'exact' ? String(bytes.byteLength) : spec.contentLength)
  try {
    return new Request(`${PUBLIC_URL}/${path}${query ? `?${query}` : ''}`, { method: spec.method, headers, body: bytes })
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------------------------------------------
// The property: what every answer must be.

const pageStatuses = new Set<number>([200, 303, 304, ...Object.values(errorStatus).filter((status) => status < 500)])
const invalidToken = { success: false, valid: false, message: 'Invalid or expired token' }

/** The spec's error body (SPEC.md §7) with the status its code has, or the token validation's own 401 body (§4.3). */
function errorBodyProblem(pathname: string, status: number, body: unknown): string | undefined {
  const members = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {}
  const isInvalidToken = Object.entries(invalidToken).every(([k, v]) => members[k] === v)
  if (status === 401 && pathname.startsWith('/api/verify/token/') && isInvalidToken && Object.keys(members).length === 3) return undefined
  // The router serves `/api/oauth/validate/` too.
  if (status === 401 && pathname.replace(/\/$/, '') === '/api/oauth/validate' && isInvalidToken && members.active === false) return undefined
  const code = members.error
  const shaped = typeof code === 'string' && Object.hasOwn(errorStatus, code) && typeof members.error_description === 'string' && Object.keys(members).length === 2
  if (shaped && errorStatus[code as ErrorCode] === status) return undefined
  return `wrong_body: ${status} ${JSON.stringify(body).slice(0, 200)}`
}

/** Every way an answer breaks the property, as `kind: detail`; none for a good answer. */
export function judge(request: Request, response: Response, text: string): string[] {
  const problems: string[] = []
  const { pathname } = new URL(request.url)
  const status = response.status
  const type = response.headers.get('content-type') ?? ''
  // What the router matched: the request's own text up to its query, where a fragment (never in a real
  // request line, RFC 9112 §3.2, but a fuzzer sends one) is part of the path, and a trailing slash is the
  // same route (`/metrics/`, `/gate/auth/`, `/.ofage/unavailable/`: seed 30 sent those).
  const routed = request.url.slice(new URL(request.url).origin.length).split('?')[0]!
  const route = routed.length > 1 ? routed.replace(/\/$/, '') : routed
  // The face check says "busy, come back" when its estimator is full: the one 5xx a route documents.
  // So does the gate's page for a proxy whose gate could not answer (docs/gate.md).
  const busy = status === 503 && response.headers.has('retry-after') && (/^\/s\/[^/]+\/methods\/face$/.test(pathname) || route === '/.ofage/unavailable')
  if (status >= 500 && !busy) problems.push(`server_error: ${status}`)
  if (status === 429 && !response.headers.has('retry-after')) problems.push('no_retry_after: 429')
  // A 500 never says why (the log does): no source path or stack in any answer.
  if (/\/src\/|node_modules|\.tsx?:\d+/.test(text)) problems.push('leak: a source path in the body')
  const bodyless = request.method === 'HEAD' || status === 304
  if (pathname.startsWith('/api/')) {
    if (/html/i.test(type) || text.trimStart().startsWith('<')) problems.push(`html_on_api: ${type}`)
    if (bodyless || (status === 200 && type.startsWith('application/oauth-authz-req+jwt'))) return problems
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      return [...problems, `non_json_on_api: ${type} ${text.slice(0, 80)}`]
    }
    if (!type.startsWith('application/json')) problems.push(`non_json_on_api: ${type}`)
    if (status >= 400) {
      const problem = errorBodyProblem(pathname, status, body)
      if (problem) problems.push(problem)
      else if (status === 401 && 'error' in (body as object) && !response.headers.has('www-authenticate')) problems.push('no_www_authenticate: 401')
    }
    return problems
  }
  if (type.startsWith('text/html') && !response.headers.has('content-security-policy')) problems.push('no_csp')
  // A page's error is the error page, or JSON for the page's own scripts; /metrics answers its scraper in
  // plain text, and only 401 or 404 (issue 19: it was the visitor's page about an unregistered site).
  // `/metrics#` is no route of ours (see `route` above).
  const metrics = route === '/metrics'
  const scraperError = metrics && (status === 401 || status === 404) && type.startsWith('text/plain')
  // The gate answers its proxy in plain text: 401 (not verified), 403 (no such host, suspended), or 302 to the check.
  const gateAnswer = route === '/gate/auth' && ([401, 403].includes(status) ? type.startsWith('text/plain') : status === 302 || status === 200)
  if (status >= 400 && !bodyless && !scraperError && !gateAnswer && !/^(text\/html|application\/json)/.test(type)) problems.push(`page_error_type: ${status} ${type}`)
  if (metrics && request.method === 'GET' && (status === 401 || status === 404) && /html/i.test(type)) problems.push(`html_for_scraper: ${status}`)
  // The browser's own /favicon.ico: "no icon", without a body (issue 32, item 5).
  const noIcon = route === '/favicon.ico' && status === 204
  if (!pageStatuses.has(status) && !busy && !gateAnswer && !noIcon) problems.push(`page_status: ${status}`)
  const code = /class="code">[\s\S]*?<code>([a-z_]+)<\/code>/.exec(text)?.[1]
  if (code && status >= 400 && errorStatus[code as ErrorCode] !== status) problems.push(`page_status: ${status} for ${code}`)
  if (status === 303 && !response.headers.get('location')) problems.push('no_location: 303')
  return problems
}

// ---------------------------------------------------------------------------------------------------
// The target: an app on a real database, a fixture of real values, and one request at a time.

const NOW = new Date('2026-11-22T12:00:00.000Z')
const DEMO_STATE = 'fuzz-demo-state'
const GATED_HOST = 'gated.example'
const GATE_STATE = 'fuzz-gate-state'
const GATE_VERIFIER = 'fuzz-gate-verifier-'.padEnd(43, 'v')
const METRICS_TOKEN = 'fuzz-metrics-token'
/** Requests per live session before a fresh one: a session completes, locks or loses its methods as the fuzzer goes. */
const SESSION_USES = 6

/**
 * The face method needs an estimator: this one reads plausible numbers off the frame's bytes, refuses what
 * is not a JPEG or PNG as the real one does, and is now and then busy.
 */
function fuzzEstimator(): AgeEstimator {
  return {
    ready: Promise.resolve(),
    async analyze(image) {
      if (!(image[0] === 0xff && image[1] === 0xd8) && !(image[0] === 0x89 && image[1] === 0x50)) throw new ImageDecodeError('not a JPEG or PNG')
      const at = (i: number) => image[i % image.length] ?? 0
      if (at(3) % 17 === 1) throw new EstimatorBusyError()
      const face = (k: number): FaceObservation => ({
        age: at(4 + k) % 90,
        faceScore: at(5) / 255,
        box: { x: at(6), y: at(7), width: at(8) + 1, height: at(9) + 1 },
        sharpness: at(10) * 4,
        landmarks: { rightEye: [at(11), at(12)], leftEye: [at(13), at(14)], nose: [at(15), at(16)], mouthRight: [at(17), at(18)], mouthLeft: [at(19), at(20)] },
        pose: { yaw: at(21) - 128, pitch: at(22) / 4 - 32, roll: at(23) / 4 - 32 },
        descriptor: Array.from({ length: 8 }, (_, i) => (at(24 + i) - 128) / 512),
      })
      return { width: 640, height: 480, faces: Array.from({ length: at(2) % 3 }, (_, k) => face(k)), ms: 1 }
    },
    close: async () => {},
  }
}

export type Outcome = { request: Request; response: Response; text: string; problems: string[]; logged?: unknown }

/**
 * An app on a fresh database (Postgres when DATABASE_URL is set) with every feature on: the demo, metrics,
 * digital credentials (a test issuer's root trusted), the face check (with {@link fuzzEstimator}). Limits
 * are high: the fuzzer's thousands of requests share one address, and the limits have their own tests.
 */
export async function createFuzzTarget() {
  const issuer = await createDevIssuer(NOW)
  const dir = mkdtempSync(join(tmpdir(), 'ofage-fuzz-'))
  writeFileSync(join(dir, 'trust-list.pem'), issuer.rootCertificate)
  // What a 500 logged, by request id, so that a failure reports its cause.
  const logged = new Map<string, unknown>()
  const log: Logger = { info() {}, error: (event, fields) => void logged.set(String(fields?.request_id), { event, ...fields }) }
  const many = '1000000'
  // "Forgot password?" composes its emails for real; the SMTP server refuses the connection (nothing listens).
  const closedPort = await freePort()
  const env = {
    OFAGE_DEMO: '1', METRICS_TOKEN, CREDENTIAL_TRUST_LIST: join(dir, 'trust-list.pem'), TRUST_PROXY: '1',
    RATE_LIMIT_AUTH_FAILURES: many, RATE_LIMIT_SESSIONS: many, RATE_LIMIT_CHECKS: many, RATE_LIMIT_SIGNIN_ACCOUNT: many, RATE_LIMIT_SIGNIN_ADDRESS: many,
    RATE_LIMIT_PASSWORD_RESET_EMAIL: many, RATE_LIMIT_PASSWORD_RESET_ADDRESS: many,
    SMTP_URL: `smtp://127.0.0.1:${closedPort}`, SMTP_FROM: 'no-reply@shop.example',
  }
  const ctx = await createTestContext({ env, log, estimator: fuzzEstimator() })
  const shop = await ctx.createClient({ name: 'Fuzz shop' })
  // The shop's look: the page links its logo and colour, which the branding routes then serve.
  const logoFile = readFileSync(join(import.meta.dir, '..', 'branding', 'fixtures', 'logo-32x16.png'))
  const logo = (await setClientLogo(ctx.deps, shop.id, new Uint8Array(logoFile)))!
  await updateBranding(ctx.deps.db, shop.id, { accentColour: '#14632c', displayName: 'Fuzz & <Co>' })
  const sandbox = await ctx.createClient({ name: 'Fuzz sandbox', sandbox: true })
  const token = (await ctx.tokenFor(shop)).access_token
  // A dashboard user who signs in, and one whose password the fuzzer's real links set (again and again). Their
  // own client: the settings forms change its redirect URIs, minimum age and secret, never the shop's.
  const DASHBOARD_PASSWORD = 'fuzz dashboard password'
  const dashboardClient = await ctx.createClient({ name: 'Fuzz dashboard' })
  const dashboardUser = await createDashboardUser(ctx.deps, { clientId: dashboardClient.id, email: 'fuzz@shop.example' })
  await setPasswordWithToken(ctx.deps, { token: dashboardUser.link.token, password: DASHBOARD_PASSWORD })
  const pendingUser = (await createDashboardUser(ctx.deps, { clientId: dashboardClient.id, email: 'pending@shop.example' })).user
  const { transactionId } = await ctx.issueCode({ clientId: dashboardClient.id })
  // The sandbox client gates gated.example: the gate's routes get real cookies, a flow and its codes.
  await updateGate(ctx.deps, sandbox.id, { addHosts: [GATED_HOST] })
  const nowSeconds = Math.floor(ctx.clock.now().getTime() / 1000)

  async function walletWith(format: DevCredentialFormat) {
    const wallet = await createDevWallet()
    wallet.credentials.push(await issueDevCredential(issuer, { format, age: 30, holderPublicKey: wallet.holder.publicKey, now: NOW }))
    return wallet
  }
  /** A real presentation from a test wallet, for another nonce: it parses all the way and is then refused. */
  async function presentation(format: DevCredentialFormat): Promise<string> {
    const answer = await answerRequest(await walletWith(format), { nonce: 'fuzz-nonce', dcql_query: ageQuery(18) as never }, { clientId: 'fuzz', responseUri: `${PUBLIC_URL}/api/oid4vp/responses` }, NOW)
    return Object.values(answer)[0]![0]!
  }
  const wallet = await walletWith('sd-jwt')
  const walletFetch = ((input: string | URL | Request, init?: RequestInit) => ctx.handle(new Request(input, init))) as typeof fetch
  const fixed: Partial<Record<Real, string>> = {
    clientId: shop.id, secret: shop.secret, redirectUri: REDIRECT_URI, state: 'st', token, demoState: DEMO_STATE, metricsToken: METRICS_TOKEN,
    sdJwt: await presentation('sd-jwt'), mdoc: await presentation('av'),
    dashboardEmail: 'fuzz@shop.example', dashboardPassword: DASHBOARD_PASSWORD, transactionId,
    logoVersion: logoVersion(logo), logoFile: logoFile.toString('latin1'),
    gateClient: sandbox.id,
    gatePass: sealGatePass(ctx.deps.keys.gateKey, { clientId: sandbox.id, origin: `https://${GATED_HOST}`, ageOver: 18, verificationId: transactionId, issuedAt: nowSeconds, expiresAt: nowSeconds + 3600 }),
    gateFlow: sealGateFlow(ctx.deps.keys.gateKey, { origin: `https://${GATED_HOST}`, state: GATE_STATE, codeVerifier: GATE_VERIFIER, returnTo: '/after', expiresAt: nowSeconds + 1800 }),
  }

  type Live = { id: string; csrf: string; browser: string; uses: number }
  const live: Partial<Record<RequestSpec['session'], Live>> = {}
  async function openSession(kind: RequestSpec['session']) {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: kind === 'sandbox' ? sandbox.id : shop.id, state: 'st' })
    return { browser, page, id: /\/s\/([A-Za-z0-9_-]+)/.exec(page.html)![1]!, csrf: page.csrf!, cookie: browser.jar.get('ofage_browser')! }
  }
  async function currentSession(kind: RequestSpec['session']): Promise<Live> {
    let session = live[kind]
    if (!session || session.uses >= SESSION_USES) {
      const { id, csrf, cookie } = await openSession(kind)
      session = live[kind] = { id, csrf, browser: cookie, uses: 0 }
    }
    session.uses++
    return session
  }
  let agePass = { value: '', uses: Infinity }
  /** An age pass of a sandbox check; the fuzzer may revoke it (`/forget`), so a fresh one now and then. */
  async function currentAgePass(): Promise<string> {
    if (agePass.uses++ < 20) return agePass.value
    const { browser, page } = await openSession('sandbox')
    await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age: '30', method_class: 'age_only' })
    agePass = { value: browser.jar.get('ofage_pass') ?? '', uses: 1 }
    return agePass.value
  }

  async function reals(kind: RequestSpec['session']): Promise<Reals> {
    const session = await currentSession(kind)
    const post = async (path: string) => {
      const response = await ctx.handle(
        new Request(`${PUBLIC_URL}/s/${session.id}/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `ofage_browser=${session.browser}` },
          body: new URLSearchParams({ csrf: session.csrf }),
        }),
      )
      return response.ok ? ((await response.json()) as Record<string, string>) : {}
    }
    let started: Promise<Record<string, string>> | undefined
    const make = async (name: Real): Promise<string> => {
      switch (name) {
        case 'session': return session.id
        case 'csrf': return session.csrf
        case 'browser': return session.browser
        case 'agePass': return currentAgePass()
        case 'code': return (await ctx.issueCode({ clientId: shop.id, state: 'st' })).code
        // A fresh dashboard session per request: the fuzzer signs out now and then.
        case 'dashboardSession': return (await createDashboardSession(ctx.deps, dashboardUser.user.id)).token
        case 'dashboardCsrf': return sessionCsrfToken(ctx.deps.keys.dashboardKey, await get('dashboardSession'))
        case 'dashboardForm': return randomToken(24)
        case 'dashboardFormCsrf': return preSessionCsrfToken(ctx.deps.keys.dashboardKey, await get('dashboardForm'))
        case 'passwordToken': return (await issuePasswordLink(ctx.deps, pendingUser.id))!.token
        // The dashboard's client's endpoint (the fuzzer removes it now and then: then a new one), and a dead delivery of it.
        case 'webhookEndpoint': {
          const [endpoint] = await listWebhookEndpoints(ctx.deps.db, dashboardClient.id)
          return (endpoint ?? (await addWebhookEndpoint(ctx.deps, dashboardClient.id, { url: `https://hooks.fuzz.example/${randomToken(6)}` }))).id
        }
        case 'webhookDelivery': {
          const endpoint = await findClientEndpoint(ctx.deps.db, dashboardClient.id, await get('webhookEndpoint'))
          const id = await enqueueTestEvent(ctx.deps.db, endpoint!, ctx.clock.now())
          await ctx.deps.db.update(webhookDeliveries).set({ deadAt: ctx.clock.now(), attempts: 11, lastStatus: 503 }).where(eq(webhookDeliveries.id, id))
          return id
        }
        case 'gateCode': return (await ctx.issueCode({ clientId: sandbox.id, redirectUri: `https://${GATED_HOST}/.ofage/callback`, state: GATE_STATE, codeChallenge: s256(GATE_VERIFIER) })).code
        case 'demoCode': return (await ctx.issueCode({ clientId: DEMO_CLIENT_ID, redirectUri: demoRedirectUri(PUBLIC_URL), state: DEMO_STATE })).code
        case 'challenge': return (await post('methods/face/challenge')).challenge ?? 'no-challenge'
        case 'answeredRequestId': {
          // Answered by the test wallet as a phone would: the method's post then completes the session.
          const { request, wallet_url } = await (started ??= post('methods/credential/start'))
          if (wallet_url) await presentToVerifier(wallet, wallet_url, { now: NOW, fetcher: walletFetch })
          return request ?? 'no-request'
        }
        case 'requestId':
        case 'walletState': {
          const { request, wallet_url } = await (started ??= post('methods/credential/start'))
          if (name === 'requestId') return request ?? 'no-request'
          const requestUri = wallet_url ? new URL(wallet_url).searchParams.get('request_uri') : null
          return requestUri?.split('/').at(-1) ?? 'no-state'
        }
        default: return fixed[name]!
      }
    }
    const memo = new Map<Real, Promise<string>>()
    const get = (name: Real): Promise<string> => memo.get(name) ?? memo.set(name, make(name)).get(name)!
    return get
  }

  return {
    ctx,
    /** Sends one request and judges its answer; undefined where the spec makes no sendable request. */
    async probe(spec: RequestSpec): Promise<Outcome | undefined> {
      const request = await buildRequest(spec, await reals(spec.session))
      if (!request) return undefined
      const response = await ctx.handle(request)
      const text = await response.text()
      const id = response.headers.get('x-request-id')
      return { request, response, text, problems: judge(request, response, text), logged: id ? logged.get(id) : undefined }
    },
    close: () => ctx.close(),
  }
}

/** One line for a failed request: what was sent, what came back, and what the server logged. */
export function describeOutcome(outcome: Outcome): string {
  const { request, response, problems, logged } = outcome
  const url = request.url.length > 200 ? `${request.url.slice(0, 200)}… (${request.url.length} chars)` : request.url
  return `${request.method} ${url} → ${response.status}: ${problems.join('; ')}${logged ? `\n  logged: ${JSON.stringify(logged).slice(0, 1500)}` : ''}`
}
