import { createHmac } from 'node:crypto'
import { constantTimeEqual } from '../lib/crypto.ts'

/**
 * The gate's two cookies on a gated host, each a JSON payload and its HMAC-SHA-256, base64url, joined by a
 * dot. The MAC covers a purpose label too, so a value made for one cookie is never read as the other. Their
 * contents are not secret from the visitor (whose browser holds them), only unforgeable.
 */

/** Lets a browser through the gate: proof of an approved check for one client, host and age. */
export const GATE_COOKIE = 'ofage_gate'
/** Carries one start of the gate's authorization request to its callback: state, PKCE verifier, return path. */
export const GATE_FLOW_COOKIE = 'ofage_gate_flow'

/** Longer values are not ours: read no further (a cookie header is the visitor's to fill). */
const MAX_VALUE_LENGTH = 1024

export type GatePass = {
  clientId: string
  /** The gated origin it was made for. */
  origin: string
  /** The threshold the check proved (the token's `age_over`). */
  ageOver: number
  /** The verification behind it (the token's `verification_id`, the audit row's `transaction_id`). */
  verificationId: string
  /** Seconds since the epoch: when the check was approved, and when the cookie stops counting. */
  issuedAt: number
  expiresAt: number
}

export type GateFlow = { origin: string; state: string; codeVerifier: string; returnTo: string; expiresAt: number }

export function sealGatePass(key: Uint8Array, pass: GatePass): string {
  return seal(key, 'pass', { c: pass.clientId, o: pass.origin, a: pass.ageOver, v: pass.verificationId, i: pass.issuedAt, e: pass.expiresAt })
}

/** The pass a cookie value carries, when its MAC holds and its fields have their shapes; expiry is the caller's. */
export function openGatePass(key: Uint8Array, value: string): GatePass | undefined {
  const p = open(key, 'pass', value)
  if (!p || !isText(p.c) || !isText(p.o) || !isText(p.v) || !Number.isInteger(p.a) || !Number.isInteger(p.i) || !Number.isInteger(p.e)) return undefined
  return { clientId: p.c, origin: p.o, ageOver: p.a as number, verificationId: p.v, issuedAt: p.i as number, expiresAt: p.e as number }
}

export function sealGateFlow(key: Uint8Array, flow: GateFlow): string {
  return seal(key, 'flow', { o: flow.origin, s: flow.state, v: flow.codeVerifier, r: flow.returnTo, e: flow.expiresAt })
}

export function openGateFlow(key: Uint8Array, value: string): GateFlow | undefined {
  const p = open(key, 'flow', value)
  if (!p || !isText(p.o) || !isText(p.s) || !isText(p.v) || !isText(p.r) || !Number.isInteger(p.e)) return undefined
  return { origin: p.o, state: p.s, codeVerifier: p.v, returnTo: p.r, expiresAt: p.e as number }
}

function seal(key: Uint8Array, purpose: string, payload: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url')
  return `${body}.${mac(key, purpose, body)}`
}

function open(key: Uint8Array, purpose: string, value: string): Record<string, unknown> | undefined {
  if (value.length > MAX_VALUE_LENGTH) return undefined
  const dot = value.indexOf('.')
  if (dot <= 0) return undefined
  const body = value.slice(0, dot)
  if (!constantTimeEqual(value.slice(dot + 1), mac(key, purpose, body))) return undefined
  try {
    const payload: unknown = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'))
    return typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? (payload as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

function mac(key: Uint8Array, purpose: string, body: string): string {
  return createHmac('sha256', key).update(`ofage-gate-${purpose}\u0000${body}`).digest('base64url')
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0
}

/**
 * The values a `Cookie` header gives a name, in order (a browser sends several when paths differ). Read by
 * hand: the gate's check runs on every request of a gated site and needs nothing else from the header.
 */
export function cookieValues(header: string | null, name: string): string[] {
  if (!header) return []
  const values: string[] = []
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim())
  }
  return values
}

/**
 * A `Set-Cookie` value for a gated host: HttpOnly, SameSite=Lax, Path=/, and over https Secure with the
 * `__Host-` prefix, so no sibling subdomain of the site can set or shadow it (RFC 6265bis §4.1.3.2).
 */
export function gateCookieHeader(origin: string, name: string, value: string, maxAgeSeconds: number): string {
  const secure = origin.startsWith('https:')
  return `${gateCookieName(origin, name)}=${value}; Max-Age=${maxAgeSeconds}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
}

export function gateCookieName(origin: string, name: string): string {
  return origin.startsWith('https:') ? `__Host-${name}` : name
}
