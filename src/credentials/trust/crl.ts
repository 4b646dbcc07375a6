import type { X509Certificate as NodeCertificate } from 'node:crypto'
import type * as x509 from '@peculiar/x509'
import { createExpiringCache, type Loaded } from '../../lib/expiring-cache.ts'
import { fetchBounded, type FetchFailure, type OutboundFetchOptions } from '../../lib/outbound-fetch.ts'
import { peculiarX509 } from './peculiar-x509.ts'

type Peculiar = typeof x509

/**
 * Certificate revocation lists (RFC 5280 §5) for the certificates an issuer signs with: ISO 18013-5 Annex B
 * puts a CRL distribution point in the document signer certificate, for the IACA to revoke a signer whose key
 * leaked. The CRL is signed by the certificate's issuer, so it may come over plain http (as CRLs usually do).
 */
export type CrlVerdict = 'good' | 'revoked' | 'unavailable'

/** A chain leaf first, ending with the trust anchor it chained to (whose own revocation is the trust list's business). */
export type CrlChecker = (chain: NodeCertificate[]) => Promise<CrlVerdict>

/** A finer account, for a metric. */
export type CrlOutcome = 'good' | 'revoked' | 'stale_crl' | 'untrusted_crl' | 'malformed_crl' | 'no_usable_distribution_point' | FetchFailure

export type CrlCheckerOptions = {
  now: () => Date
  fetch: OutboundFetchOptions
  onOutcome?: (outcome: CrlOutcome) => void
  /** CRLs kept at most (the least recently used goes first); 64 if not given. */
  maxEntries?: number
}

/** Kept until its nextUpdate, but no longer than this: a CRL re-issued early (a key compromise) shows within a day. */
const MAX_CACHE_MS = 24 * 60 * 60 * 1000
/** An IACA's CRL lists few certificates; a larger answer is not one. */
const DEFAULT_MAX_BYTES = 1024 * 1024

/**
 * A CRL checker. For each certificate below the anchor that names CRL distribution points (http or https
 * URIs), the first CRL that can be fetched, is signed by the next certificate of the chain, names it as issuer
 * and is current (thisUpdate <= now <= nextUpdate) decides: the certificate's serial listed means `revoked`.
 * None usable: `unavailable` (fail closed). A certificate without a distribution point has nothing to check:
 * its issuer publishes no revocation for it, and ISO 18013-5 leaves the CRL optional.
 */
export function createCrlChecker(options: CrlCheckerOptions): CrlChecker {
  const cache = createExpiringCache<x509.X509Crl, FetchFailure | 'malformed_crl'>({ now: () => options.now().getTime(), maxEntries: options.maxEntries ?? 64 })
  const report = (outcome: CrlOutcome) => options.onOutcome?.(outcome)

  async function load(peculiar: Peculiar, url: string): Promise<Loaded<x509.X509Crl, FetchFailure | 'malformed_crl'>> {
    const fetched = await fetchBounded(url, { maxBytes: DEFAULT_MAX_BYTES, ...options.fetch, allowHttp: true, accept: 'application/pkix-crl' })
    if (!fetched.ok) return fetched.failure
    const crl = parseCrl(peculiar, fetched.body)
    if (!crl) return 'malformed_crl'
    return { value: crl, until: Math.min(crl.nextUpdate?.getTime() ?? 0, options.now().getTime() + MAX_CACHE_MS) }
  }

  const crlAt = (peculiar: Peculiar, url: string) => cache.get(url, () => load(peculiar, url))

  /** The verdict on one certificate from its issuer's CRL, or why no CRL of its could be used. */
  async function checkOne(peculiar: Peculiar, certificate: x509.X509Certificate, issuer: x509.X509Certificate): Promise<CrlOutcome | 'no_distribution_point'> {
    const urls = distributionPoints(peculiar, certificate)
    if (urls === undefined) return 'no_distribution_point'
    let failure: CrlOutcome = 'no_usable_distribution_point'
    for (const url of urls) {
      const crl = await crlAt(peculiar, url)
      if (typeof crl === 'string') {
        failure = crl
        continue
      }
      const judged = await judge(crl, certificate, issuer, options.now())
      if (judged === 'good' || judged === 'revoked') return judged
      failure = judged
    }
    return failure
  }

  return async (chain) => {
    const peculiar = await peculiarX509()
    let certificates: x509.X509Certificate[]
    try {
      certificates = chain.map((certificate) => new peculiar.X509Certificate(certificate.raw))
    } catch {
      report('malformed_crl')
      return 'unavailable'
    }
    let checked = false
    for (let i = 0; i + 1 < certificates.length; i++) {
      const outcome = await checkOne(peculiar, certificates[i]!, certificates[i + 1]!)
      if (outcome === 'no_distribution_point') continue
      checked = true
      if (outcome === 'good') continue
      report(outcome)
      return outcome === 'revoked' ? 'revoked' : 'unavailable'
    }
    if (checked) report('good')
    return 'good'
  }
}

/** The http(s) URIs of a certificate's CRL distribution points; undefined when it names none at all. */
function distributionPoints(peculiar: Peculiar, certificate: x509.X509Certificate): string[] | undefined {
  const extension = certificate.getExtension(peculiar.CRLDistributionPointsExtension)
  if (!extension) return undefined
  return extension.distributionPoints.flatMap((point) =>
    (point.distributionPoint?.fullName ?? []).flatMap((name) => {
      const uri = name.uniformResourceIdentifier
      return uri && /^https?:\/\//i.test(uri) ? [uri] : []
    }),
  )
}

/** RFC 5280 §6.3.3: the CRL's issuer is the certificate's, it verifies with the issuer's key, and it is current. */
async function judge(crl: x509.X509Crl, certificate: x509.X509Certificate, issuer: x509.X509Certificate, now: Date): Promise<CrlOutcome> {
  if (crl.issuer !== certificate.issuer || crl.issuer !== issuer.subject) return 'untrusted_crl'
  let signed = false
  try {
    signed = await crl.verify({ publicKey: issuer })
  } catch {
    signed = false
  }
  if (!signed) return 'untrusted_crl'
  // A CRL without nextUpdate says nothing about how long it holds (RFC 5280 §5.1.2.5 makes it mandatory).
  if (!crl.nextUpdate || now < crl.thisUpdate || now > crl.nextUpdate) return 'stale_crl'
  return crl.findRevoked(certificate.serialNumber) ? 'revoked' : 'good'
}

/** DER, or PEM (some servers send it so). */
function parseCrl(peculiar: Peculiar, body: Uint8Array): x509.X509Crl | undefined {
  try {
    const text = Buffer.from(body).toString('latin1')
    return text.includes('-----BEGIN X509 CRL-----') ? new peculiar.X509Crl(text) : new peculiar.X509Crl(new Uint8Array(body))
  } catch {
    return undefined
  }
}
