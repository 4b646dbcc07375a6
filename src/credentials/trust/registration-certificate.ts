import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { compactVerify, decodeProtectedHeader, errors, importX509 } from 'jose'
import { ConfigError } from '../../errors.ts'
import { checkCertificateCurrent, checkChainEndsAtRoot, checkChainOrder, describeName, type Setting } from './certificate-chain.ts'
import { peculiarX509 } from './peculiar-x509.ts'

/**
 * A wallet-relying party registration certificate (WRPRC): what a member state's registrar says a relying
 * party registered (Implementing Regulation (EU) 2025/848, Art. 8 and Annex V). ETSI TS 119 475 §5.2 gives it
 * two forms, a JWT (`typ` `rc-wrp+jwt`) and a CWT (`rc-wrp+cwt`), both signed by the registration
 * certificate provider with its certificate chain in `x5c`; not an X.509 (attribute) certificate. The JWT is
 * what OpenID4VP's `verifier_info` carries and what the EUDI wallet reads (`format` `registration_cert`,
 * `data` the JWT); its `sub` is the relying party's identifier, the one its access certificate carries.
 */
export type RegistrationCertificate = {
  /** As the registrar issued it, sent as it is. */
  jwt: string
  /** `sub`: the relying party's identifier (ETSI EN 319 412-1: `VATDE-…`, `LEIXG-…`), its access certificate's. */
  relyingParty: string
  /** `name`: the name wallets show. */
  name?: string
  /** The subject of the certificate that signed it. */
  signer: string
  issuedAt: Date
  expiresAt?: Date
}

/** ETSI TS 119 475 §5.2.2: the JOSE `typ` of the JWT form. */
export const REGISTRATION_CERTIFICATE_TYP = 'rc-wrp+jwt'

/** The `verifier_info` format of a registration certificate (ETSI TS 119 472-2, as eudi-lib-jvm-openid4vp-kt reads it). */
export const REGISTRATION_CERTIFICATE_FORMAT = 'registration_cert'

/** A few kilobytes in practice (a claim list and a chain of two); it travels in every signed request. */
const MAX_BYTES = 32 * 1024

/** ETSI TS 119 182-1 §5.1.2 as TS 119 475 admits it, and EdDSA. */
const ALGORITHMS = ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA']

/** Clocks differ: an `iat` a little ahead of ours is the registrar's clock, not a certificate from the future. */
const SKEW_MS = 5 * 60_000

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

/** ETSI EN 319 412-1 §5.1.4: the relying party's identifier in its access certificate (legal person, then natural). */
const ORGANIZATION_IDENTIFIER = '2.5.4.97'
const SERIAL_NUMBER = '2.5.4.5'

/**
 * Reads and checks the registration certificate at start: the JWT form, signed by the first certificate
 * of its `x5c`, that chain in order, current, and ending at one of `roots` when the operator names some;
 * issued and not expired; and naming the relying party of `accessCertificate`. Anything else stops
 * start-up with a {@link ConfigError} naming the setting.
 */
export async function loadRegistrationCertificate(
  setting: Setting,
  access: { certificate: X509Certificate; variable: string },
  roots: { setting: Setting; certificates: X509Certificate[] } | undefined,
  now: Date,
): Promise<RegistrationCertificate> {
  const jwt = readJwt(setting)
  const fail = (message: string) => new ConfigError(setting.variable, `${message} (${setting.file})`)
  const header = readHeader(jwt, fail)
  const chain = readX5c(header.x5c, fail)
  checkChainOrder(chain, setting, 'signer chain (x5c) ')
  for (const certificate of chain) checkCertificateCurrent(certificate, setting, now, 'signer chain (x5c): ')
  if (roots) checkChainEndsAtRoot(chain, roots, setting, 'signer chain (x5c) ')

  const claims = readClaims(await verifySignature(jwt, header.alg, chain[0]!, fail), fail)
  const issuedAt = new Date(claims.iat * 1000)
  if (issuedAt.getTime() > now.getTime() + SKEW_MS) throw fail(`is not valid before ${issuedAt.toISOString()} (iat)`)
  if (claims.nbf !== undefined && claims.nbf * 1000 > now.getTime() + SKEW_MS) throw fail(`is not valid before ${new Date(claims.nbf * 1000).toISOString()} (nbf)`)
  const expiresAt = claims.exp === undefined ? undefined : new Date(claims.exp * 1000)
  if (expiresAt && expiresAt <= now) throw fail(`expired on ${expiresAt.toISOString()} (exp)`)
  await checkSameRelyingParty(claims.sub, access, fail)
  return { jwt, relyingParty: claims.sub, ...(claims.name !== undefined && { name: claims.name }), signer: describeName(chain[0]!.subject), issuedAt, ...(expiresAt && { expiresAt }) }
}

/** The payload of the JWT, once its signature verifies with the key of the signer's certificate. */
async function verifySignature(jwt: string, alg: string, signer: X509Certificate, fail: Fail): Promise<Uint8Array> {
  let key
  try {
    key = await importX509(signer.toString(), alg)
  } catch {
    throw fail(`is signed ${alg}, which the key of the first certificate of its x5c (${describeName(signer.subject)}) does not make`)
  }
  try {
    return (await compactVerify(jwt, key, { algorithms: [alg] })).payload
  } catch (error) {
    if (error instanceof errors.JWSSignatureVerificationFailed) throw fail(`signature does not verify with the first certificate of its x5c (${describeName(signer.subject)})`)
    // A `crit` header parameter jose does not process, say: the JWS is not one a wallet's JOSE library reads either.
    throw fail(`is a JWS that cannot be verified (${error instanceof errors.JOSEError ? error.code : 'unreadable'})`)
  }
}

/** The file's text as one compact JWT; the other things a registrar might hand over are named for what they are. */
function readJwt(setting: Setting): string {
  let bytes: Buffer
  try {
    bytes = readFileSync(setting.file)
  } catch (cause) {
    throw new ConfigError(setting.variable, `could not be read (${setting.file}): ${cause instanceof Error ? cause.message : cause}`)
  }
  const fail = (message: string) => new ConfigError(setting.variable, `${message} (${setting.file})`)
  if (bytes.length > MAX_BYTES) throw fail(`is ${bytes.length} bytes, more than the ${MAX_BYTES} a registration certificate needs`)
  const text = bytes.toString('utf8').trim()
  if (COMPACT_JWS.test(text)) return text
  // The German sandbox registrar hands out `registration-certificate.json`, "containing a JWT", in a shape it
  // does not document: the one JWT found in it is taken, and a file with several is refused rather than guessed at.
  if (text.startsWith('{') || text.startsWith('"')) {
    const found = [...new Set(jwtsIn(parseJson(text, fail)))]
    if (found.length === 1) return found[0]!
    throw fail(found.length === 0 ? 'is JSON with no JWT in it: it takes the registration certificate (typ rc-wrp+jwt)' : `is JSON with ${found.length} different JWTs in it: put the registration certificate alone in the file`)
  }
  if (isCwt(bytes) || isCwt(Buffer.from(text, 'base64'))) {
    throw fail('is a registration certificate in CWT form (rc-wrp+cwt): OpenID4VP verifier_info carries the JWT form (rc-wrp+jwt), which wallets read; ask the registrar for that one')
  }
  if (text.includes('ATTRIBUTE CERTIFICATE-----')) throw fail('is an X.509 attribute certificate: a registration certificate (ETSI TS 119 475) is a JWT (rc-wrp+jwt); ask the registrar for that one')
  if (text.includes('PRIVATE KEY-----')) throw fail('holds a private key: it takes the registration certificate only')
  throw fail('is not a registration certificate in JWT form (header.payload.signature, typ rc-wrp+jwt)')
}

function parseJson(text: string, fail: Fail): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw fail('is neither a JWT nor JSON holding one')
  }
}

/** The strings of a JSON value that are compact JWTs, a few levels deep. */
function jwtsIn(value: unknown, depth = 0): string[] {
  if (typeof value === 'string') return COMPACT_JWS.test(value.trim()) ? [value.trim()] : []
  if (depth >= 8 || value === null || typeof value !== 'object') return []
  return Object.values(value).flatMap((inner) => jwtsIn(inner, depth + 1))
}

/** A COSE_Sign1, tagged (18) or not: what a CWT is on the wire (RFC 8392 §7). */
function isCwt(bytes: Uint8Array): boolean {
  return bytes.length > 16 && (bytes[0] === 0xd2 || (bytes[0] === 0x84 && (bytes[1]! & 0xe0) === 0x40))
}

type Fail = (message: string) => ConfigError

function readHeader(jwt: string, fail: Fail): { alg: string; x5c: unknown } {
  let header
  try {
    header = decodeProtectedHeader(jwt)
  } catch {
    throw fail('has a JOSE header that is not JSON')
  }
  if (header.typ !== REGISTRATION_CERTIFICATE_TYP) throw fail(`is a JWT of type ${JSON.stringify(header.typ ?? null)}, not a registration certificate (typ ${REGISTRATION_CERTIFICATE_TYP}, ETSI TS 119 475)`)
  if (typeof header.alg !== 'string' || !ALGORITHMS.includes(header.alg)) throw fail(`is signed with ${JSON.stringify(header.alg ?? null)}, not one of ${ALGORITHMS.join(', ')}`)
  return { alg: header.alg, x5c: header.x5c }
}

function readX5c(x5c: unknown, fail: Fail): X509Certificate[] {
  if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > 8) throw fail('has no signer chain in its header (x5c): a wallet could not tell who signed it')
  return x5c.map((entry, index) => {
    try {
      if (typeof entry !== 'string') throw new TypeError('not a string')
      return new X509Certificate(Buffer.from(entry, 'base64'))
    } catch {
      throw fail(`signer chain (x5c): certificate ${index + 1} is not a readable X.509 certificate`)
    }
  })
}

type Claims = { sub: string; name?: string; iat: number; nbf?: number; exp?: number }

function readClaims(payload: Uint8Array, fail: Fail): Claims {
  let claims: unknown
  try {
    claims = JSON.parse(new TextDecoder().decode(payload))
  } catch {
    throw fail('has a payload that is not JSON')
  }
  if (!claims || typeof claims !== 'object' || Array.isArray(claims)) throw fail('has a payload that is not a JSON object')
  const { sub, name, iat, nbf, exp } = claims as Record<string, unknown>
  // ETSI TS 119 475 Table 7: `sub` is the relying party's identifier, as its access certificate names it.
  if (typeof sub !== 'string' || sub.trim() === '') throw fail('names no relying party: sub must be its identifier (such as VATDE-123456789)')
  if (!isNumericDate(iat)) throw fail('has no issue date (iat)')
  if (nbf !== undefined && !isNumericDate(nbf)) throw fail('has an nbf that is not a date')
  if (exp !== undefined && !isNumericDate(exp)) throw fail('has an exp that is not a date')
  return { sub, iat, ...(nbf !== undefined && { nbf: nbf as number }), ...(exp !== undefined && { exp: exp as number }), ...(typeof name === 'string' && { name }) }
}

function isNumericDate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value < 1e11
}

/**
 * The registration certificate is about the relying party the access certificate authenticates (ETSI TS
 * 119 475 GEN-5.1.1-04): its `sub` is the identifier in the access certificate's subject, organizationIdentifier
 * for a legal person or serialNumber for a natural one. Without this, one party's registration would be shown
 * under another's certificate; a wallet that checks refuses the pair, so it is refused here first.
 */
async function checkSameRelyingParty(sub: string, access: { certificate: X509Certificate; variable: string }, fail: Fail): Promise<void> {
  // @peculiar/x509 reads any attribute by OID.
  const { X509Certificate: Certificate } = await peculiarX509()
  const name = new Certificate(access.certificate.raw).subjectName
  const identifiers = [...name.getField(ORGANIZATION_IDENTIFIER), ...name.getField(SERIAL_NUMBER)]
  if (identifiers.includes(sub)) return
  if (identifiers.length === 0) {
    throw fail(`cannot be tied to the access certificate in ${access.variable}: its subject names no relying party (no organizationIdentifier or serialNumber) to compare with sub "${sub}"`)
  }
  throw fail(`names relying party "${sub}" (sub), but the access certificate in ${access.variable} is issued to ${identifiers.map((id) => `"${id}"`).join(' or ')}`)
}
