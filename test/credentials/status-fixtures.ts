import 'reflect-metadata'
import { X509Certificate } from 'node:crypto'
import { deflateSync } from 'node:zlib'
import * as x509 from '@peculiar/x509'
import { digest, ES256, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { encode, Tag } from 'cbor2'
import { importJWK, SignJWT, type JWK } from 'jose'
import type { DevIssuer } from '../../src/credentials/dev/issuer.ts'
import type { Revocation } from '../../src/credentials/status/revocation.ts'
import { createCrlChecker } from '../../src/credentials/trust/crl.ts'

/**
 * Status lists, CRLs and the server that hands them out, made here with other code than the verifier's:
 * lists packed from draft-ietf-oauth-status-list §4.1 and compressed with node:zlib, signed with jose (JWT) or
 * cbor2 and WebCrypto (CWT); CRLs with @peculiar/x509's X509CrlGenerator. Reused by the browser tests.
 */

export type Keys = { publicKey: JWK; privateKey: JWK }

/** §4.1: statuses packed `bits` at a time, from the least significant bit of each byte. */
export function packStatuses(statuses: number[], bits: 1 | 2 | 4 | 8): Uint8Array {
  const bytes = new Uint8Array(Math.ceil((statuses.length * bits) / 8))
  statuses.forEach((status, index) => {
    const bit = index * bits
    bytes[bit >> 3]! |= status << (bit & 7)
  })
  return bytes
}

export type ListClaims = {
  statuses: number[]
  bits?: 1 | 2 | 4 | 8
  sub: string
  /** Seconds since the epoch. */
  iat: number
  exp?: number
  ttl?: number
  /** The compressed list as it goes out, instead of `statuses` packed and deflated (a zip bomb, garbage). */
  lst?: Uint8Array
}

const compressed = (claims: ListClaims) => claims.lst ?? deflateSync(packStatuses(claims.statuses, claims.bits ?? 2), { level: 9 })

/** A Status List Token in JWT form (§5.1), signed ES256 with `key`; `header` names the key (kid, x5c). */
export async function signStatusListJwt(claims: ListClaims, key: JWK, header: Record<string, unknown> = {}): Promise<string> {
  const payload = {
    sub: claims.sub,
    iat: claims.iat,
    ...(claims.exp !== undefined && { exp: claims.exp }),
    ...(claims.ttl !== undefined && { ttl: claims.ttl }),
    status_list: { bits: claims.bits ?? 2, lst: Buffer.from(compressed(claims)).toString('base64url') },
  }
  return new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ: 'statuslist+jwt', ...header }).sign(await importJWK(key, 'ES256'))
}

/**
 * A JWT Status List Token signed by a dev issuer's document signer, its certificate in `x5c` (the chain the
 * verifier follows to the dev root in its trust list, as it does for the issuer's credentials).
 */
export function signDevStatusList(issuer: DevIssuer, claims: ListClaims): Promise<string> {
  return signStatusListJwt(claims, issuer.signerKey, { x5c: [Buffer.from(derOf(issuer.signerCertificate)).toString('base64')] })
}

/**
 * A Status List Token in CWT form (§5.2): COSE_Sign1_Tagged (18), protected { alg: ES256, typ:
 * application/statuslist+cwt }, the signer's certificates in x5chain (unprotected, as an mdoc's issuerAuth has them).
 */
export async function signStatusListCwt(claims: ListClaims, key: JWK, x5chain: Uint8Array[]): Promise<Uint8Array> {
  const protectedHeader = encode(new Map<number, unknown>([[1, -7], [16, 'application/statuslist+cwt']]))
  const cwtClaims = new Map<number, unknown>([
    [2, claims.sub],
    [6, claims.iat],
    ...(claims.exp !== undefined ? [[4, claims.exp] as [number, unknown]] : []),
    ...(claims.ttl !== undefined ? [[65534, claims.ttl] as [number, unknown]] : []),
    [65533, { bits: claims.bits ?? 2, lst: new Uint8Array(compressed(claims)) }],
  ])
  const payload = encode(cwtClaims)
  const signingKey = await crypto.subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: key.x, y: key.y, d: key.d }, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign'])
  const toBeSigned = new Uint8Array(encode(['Signature1', protectedHeader, new Uint8Array(), payload]))
  const signature = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, signingKey, toBeSigned))
  const unprotected = new Map<number, unknown>([[33, x5chain.length === 1 ? new Uint8Array(x5chain[0]!) : x5chain.map((der) => new Uint8Array(der))]])
  return encode(new Tag(18, [protectedHeader, unprotected, payload, signature]))
}

/** A CRL of the issuer `issuerPem`, signed with its key, listing `revoked` serial numbers (hex). */
export async function createCrl(options: { issuerPem: string; signingKey: CryptoKey; revoked?: string[]; thisUpdate: Date; nextUpdate?: Date }): Promise<Uint8Array> {
  const issuer = new x509.X509Certificate(options.issuerPem)
  const crl = await x509.X509CrlGenerator.create({
    issuer: issuer.subject,
    thisUpdate: options.thisUpdate,
    ...(options.nextUpdate && { nextUpdate: options.nextUpdate }),
    entries: (options.revoked ?? []).map((serialNumber) => ({ serialNumber, revocationDate: options.thisUpdate })),
    signingKey: options.signingKey,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  })
  return new Uint8Array(crl.rawData)
}

/** A route's answer: a response, or a function that makes one (and may count, wait or drip). */
export type StatusRoute = Response | ((request: Request) => Response | Promise<Response>)

export type StatusServer = {
  /** `http://127.0.0.1:<port>` + path. */
  url: (path: string) => string
  /** Requests per path, so a test can say nothing was fetched. */
  hits: Map<string, number>
  /** Sets (or replaces) what a path answers. */
  route: (path: string, answer: StatusRoute | Uint8Array | string) => void
  stop: () => void
}

/** A status list and CRL server on 127.0.0.1 (`port`, or any free one); an unknown path is 404. */
export function startStatusServer(routes: Record<string, StatusRoute | Uint8Array | string> = {}, port = 0): StatusServer {
  const table = new Map<string, StatusRoute>()
  const hits = new Map<string, number>()
  const route = (path: string, answer: StatusRoute | Uint8Array | string) =>
    table.set(path, typeof answer === 'string' || answer instanceof Uint8Array ? () => new Response(answer as BodyInit) : answer)
  for (const [path, answer] of Object.entries(routes)) route(path, answer)
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port,
    idleTimeout: 30,
    fetch: (request) => {
      const path = new URL(request.url).pathname
      hits.set(path, (hits.get(path) ?? 0) + 1)
      const answer = table.get(path)
      if (!answer) return new Response('not found', { status: 404 })
      return typeof answer === 'function' ? answer(request) : answer.clone()
    },
  })
  return { url: (path) => `http://127.0.0.1:${server.port}${path}`, hits, route, stop: () => void server.stop(true) }
}

/**
 * A Revocation for credentials that name no status list and certificates without CRL distribution points:
 * a status check fails the test (nothing may be fetched), the CRL check is the real one (it finds nothing to fetch).
 */
export function offlineRevocation(now: Date): Revocation {
  return {
    status: async (reference) => {
      throw new Error(`no status check expected, was asked for ${reference.uri}`)
    },
    certificates: createCrlChecker({ now: () => now, fetch: { allowLoopback: false, timeoutMs: 1 } }),
  }
}

/**
 * An SD-JWT VC age presentation (PID-like, `age_equal_or_over` disclosed for 18) whose issuer-signed part names
 * `status`, as an EUDI PID does: `{ status_list: { idx, uri } }`. Made with @sd-jwt/sd-jwt-vc, as a wallet would.
 */
export async function presentSdJwtWithStatus(options: {
  issuer: Keys
  holder: Keys
  header: Record<string, unknown>
  status?: unknown
  now: number
  nonce: string
  audience: string
  vct?: string
}): Promise<string> {
  const instance = new SDJwtVcInstance({
    signer: await ES256.getSigner(options.issuer.privateKey),
    signAlg: 'ES256',
    kbSigner: await ES256.getSigner(options.holder.privateKey),
    kbSignAlg: 'ES256',
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: generateSalt,
  })
  const credential = await instance.issue(
    {
      iss: 'https://pid.example',
      iat: options.now - 86_400,
      exp: options.now + 86_400 * 365,
      vct: options.vct ?? 'urn:eudi:pid:1',
      cnf: { jwk: options.holder.publicKey },
      ...(options.status !== undefined && { status: options.status as never }),
      age_equal_or_over: { '18': true, '21': false },
    },
    { age_equal_or_over: { _sd: ['18', '21'] } } as never,
    { header: options.header },
  )
  return instance.present(credential, { age_equal_or_over: { '18': true } } as never, {
    kb: { payload: { iat: options.now, aud: options.audience, nonce: options.nonce } },
  })
}

/** A certificate's DER, from PEM. */
export function derOf(pem: string): Uint8Array {
  return new Uint8Array(new X509Certificate(pem).raw)
}
