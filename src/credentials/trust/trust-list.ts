import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { JWK, ProtectedHeaderParameters } from 'jose'
import { ConfigError } from '../../errors.ts'

/**
 * The issuers whose age credentials this deployment accepts: root certificates (an issuer's credential
 * carries its certificate chain in `x5c`, which must end at one of them) and bare public keys (JWKs, P-256,
 * named by `kid`), for issuers that publish keys rather than certificates.
 */
export type TrustList = { keys: TrustedKey[]; roots: X509Certificate[]; anchors?: ScopedAnchor[] }

/** A trusted issuer key; with `iss`, only credentials naming that issuer verify with it (SD-JWT VC issuer binding). */
export type TrustedKey = JWK & { iss?: string }

/** The credential formats a root can vouch for. */
export type CredentialFormat = 'mdoc' | 'sd-jwt'

/**
 * A root imported from a published list, trusted only for what the list trusts it for: a VICAL's IACA signs
 * mdocs of the doc types it names, never an SD-JWT; a root of the static file vouches for any format.
 */
export type ScopedAnchor = { certificate: X509Certificate; formats: readonly CredentialFormat[]; docTypes?: readonly string[] }

/**
 * What a chain is checked for: the format of the credential, and for an mdoc its doc type (a credential's chain
 * always names it). Without a doc type, any root trusted for the format: an mdoc issuer's status list, whose
 * signer vouches for the lists of every doc type its IACA issues.
 */
export type TrustScope = { format: CredentialFormat; docType?: string }

/** A PEM certificate block, wherever it stands in a file (global: for `match` and `replace`). */
export const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g

/**
 * The trust list of CREDENTIAL_TRUST_LIST, read once at start: a file that cannot be read or holds nothing
 * usable stops start-up, and so does the test issuer's root in production.
 */
export function loadTrustList(file: string, options: { production: boolean }): TrustList {
  let trustList: TrustList
  try {
    trustList = parseTrustList(readFileSync(file, 'utf8'))
  } catch (cause) {
    throw new ConfigError('CREDENTIAL_TRUST_LIST', `could not be read as a trust list (${file}): ${cause instanceof Error ? cause.message : cause}`)
  }
  if (options.production && trustList.roots.some(isDevIssuerRoot)) {
    throw new ConfigError('CREDENTIAL_TRUST_LIST', 'trusts the test issuer of `ofage dev issuer`: never in production (NODE_ENV=production)')
  }
  return trustList
}

/**
 * Reads a trust list file: PEM certificates, and/or a JWK set `{ "keys": [...] }` (public EC P-256 keys
 * only). Anything it cannot read is an error at start-up, never a silently smaller list.
 */
export function parseTrustList(text: string): TrustList {
  const roots = (text.match(PEM_CERTIFICATE) ?? []).map((pem, index) => {
    try {
      return new X509Certificate(pem)
    } catch {
      throw new Error(`trust list certificate ${index}: not a readable X.509 certificate`)
    }
  })
  const rest = text.replace(PEM_CERTIFICATE, '').trim()
  const keys = rest ? parseJwks(rest) : []
  if (roots.length === 0 && keys.length === 0) throw new Error('a trust list holds PEM certificates and/or { "keys": [ ...JWK ] }')
  return { keys, roots }
}

function parseJwks(json: string): JWK[] {
  const document = JSON.parse(json) as { keys?: unknown }
  if (!Array.isArray(document.keys)) throw new Error('a trust list is { "keys": [ ...JWK ] }')
  return document.keys.map((key, index) => {
    const jwk = key as JWK
    if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
      throw new Error(`trust list key ${index}: only EC P-256 public keys (ES256) are accepted`)
    }
    // A private part has no business in a trust list: refuse it rather than carry it around.
    if ('d' in jwk) throw new Error(`trust list key ${index}: a private key; publish only the public part`)
    const iss = (key as { iss?: unknown }).iss
    if (iss !== undefined && typeof iss !== 'string') throw new Error(`trust list key ${index}: "iss" names the one issuer the key signs for, a string`)
    return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, ...(jwk.kid && { kid: jwk.kid }), ...(iss !== undefined && { iss }) }
  })
}

/** The key an SD-JWT's issuer signed with, and where it comes from: the leaf of a trusted chain, or a trusted JWK. */
export type IssuerKey = { jwk: JWK } & ({ certificate: X509Certificate } | { trustedKey: TrustedKey })

/**
 * The key a credential's signature must verify with, or undefined when the header names no trusted
 * issuer. With `x5c`: the leaf certificate's key, if every certificate is valid at `now` and signed by the
 * next, and the last is a trusted root or signed by one. Otherwise the trusted JWK its `kid` names (with
 * no `kid`, the only key of a one-key list). Never a bare key the credential carries (`jwk`): that would
 * let anyone sign. Which `iss` the key may sign for is checked next (issuer-binding.ts).
 */
export function findIssuerKey(list: TrustList, header: ProtectedHeaderParameters, now: Date): IssuerKey | undefined {
  if (header.alg !== 'ES256') return undefined
  if (header.x5c !== undefined) return chainKey(list, header.x5c, now)
  const trustedKey = header.kid !== undefined ? list.keys.find((key) => key.kid === header.kid) : list.keys.length === 1 ? list.keys[0] : undefined
  if (!trustedKey) return undefined
  const { iss: _bound, ...jwk } = trustedKey
  return { jwk, trustedKey }
}

function chainKey(list: TrustList, x5c: unknown, now: Date): IssuerKey | undefined {
  if (!Array.isArray(x5c) || !x5c.every((entry) => typeof entry === 'string')) return undefined
  const checked = checkCertificateChain(list, x5c.map((der) => Buffer.from(der, 'base64')), now, { format: 'sd-jwt' })
  if (!checked.trusted) return undefined
  const jwk = checked.leaf.publicKey.export({ format: 'jwk' }) as JWK
  return jwk.kty === 'EC' && jwk.crv === 'P-256' ? { jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, certificate: checked.leaf } : undefined
}

/** Why a certificate chain earns no trust: it leads to no trusted root, or a certificate on it is not current. */
export type ChainFailure = 'untrusted' | 'expired'

/**
 * A trusted chain: its leaf certificate (whose key signs), the trusted root it reached (the last certificate
 * itself, or the root that issued it), and the whole path, leaf first and ending with that root (for revocation
 * checks: each certificate below the root is judged by the next one's CRL); or why the chain earns no trust.
 */
export type ChainCheck = { trusted: true; leaf: X509Certificate; anchor: X509Certificate; path: X509Certificate[] } | { trusted: false; failure: ChainFailure }

/**
 * Checks a certificate chain given leaf first, in DER (as JOSE `x5c` and COSE `x5chain` carry it): each
 * certificate issued and signed by the next, which must be a CA; the last a trusted root or issued by one;
 * and all of them, the root included, valid at `now`. A chain to no trusted root is `untrusted` even when it
 * is also expired: whether it ever was valid is not ours to say.
 */
export function checkCertificateChain(list: TrustList, der: Uint8Array[], now: Date, scope?: TrustScope): ChainCheck {
  const untrusted: ChainCheck = { trusted: false, failure: 'untrusted' }
  // Issuers sign with a certificate their root issued (ISO 18013-5 Annex B: IACA to document signer); a long
  // chain is work for us and no use to anyone.
  if (der.length === 0 || der.length > 5) return untrusted
  let chain: X509Certificate[]
  try {
    chain = der.map((bytes) => new X509Certificate(bytes))
  } catch {
    return untrusted
  }
  for (let i = 0; i + 1 < chain.length; i++) {
    const [cert, issuer] = [chain[i]!, chain[i + 1]!]
    // A leaf certificate cannot vouch for another key, however it was signed.
    if (!issuer.ca || !cert.checkIssued(issuer) || !cert.verify(issuer.publicKey)) return untrusted
  }
  const last = chain.at(-1)!
  const anchors = rootsFor(list, scope).filter(
    (root) => root.fingerprint256 === last.fingerprint256 || (root.ca && last.checkIssued(root) && last.verify(root.publicKey)),
  )
  if (anchors.length === 0) return untrusted
  const current = (cert: X509Certificate) => new Date(cert.validFrom) <= now && now <= new Date(cert.validTo)
  const anchor = anchors.find(current)
  if (!chain.every(current) || !anchor) return { trusted: false, failure: 'expired' }
  // The chain may end with the root itself, or with a certificate the root issued.
  const path = anchor.fingerprint256 === last.fingerprint256 ? chain : [...chain, anchor]
  return { trusted: true, leaf: chain[0]!, anchor, path }
}

/** The roots that may vouch for a credential of this scope: every root of the static file, and the imported ones trusted for it. */
function rootsFor(list: TrustList, scope: TrustScope | undefined): X509Certificate[] {
  const scoped = (list.anchors ?? []).filter(
    (anchor) =>
      scope !== undefined &&
      anchor.formats.includes(scope.format) &&
      (anchor.docTypes === undefined || scope.docType === undefined || anchor.docTypes.includes(scope.docType)),
  )
  return [...list.roots, ...scoped.map((anchor) => anchor.certificate)]
}

/** The organisation named in the root of `ofage dev issuer`: a test PKI whose private keys sit in a file. */
export const DEV_ISSUER_ORGANIZATION = 'ofage dev issuer - not for production'

export function isDevIssuerRoot(root: X509Certificate): boolean {
  return root.subject.includes(DEV_ISSUER_ORGANIZATION)
}
