import { X509Certificate } from 'node:crypto'
import { decodeBoundedCbor, isBytes } from './bounded-cbor.ts'

/** One issuer's root (IACA) that a VICAL vouches for, and the document types it may sign. */
export type VicalEntry = {
  certificate: X509Certificate
  docTypes: string[]
  issuingCountry?: string
  issuingAuthority?: string
  stateOrProvinceName?: string
}

/** What a VICAL says once its signature holds. `skipped` counts entries that were no usable IACA. */
export type Vical = {
  provider: string
  issuedAt: Date
  nextUpdate?: Date
  issueId?: number
  entries: VicalEntry[]
  skipped: number
}

/**
 * tdate (tag 0) and its epoch form (1), biguint (2, 3), embedded CBOR (24) and full-date (1004): what ISO
 * 18013-5 structures use. Extensions (`* tstr => any`) may nest, but not without end.
 */
const PAYLOAD_LIMITS = { maxDepth: 32, tags: new Set([0, 1, 2, 3, 24, 1004]) }

/**
 * ISO/IEC 18013-5:2021 Annex C.1.7.1:
 * ```
 * VICAL = { "version": tstr, "vicalProvider": tstr, "date": tdate, ? "vicalIssueID": uint,
 *           ? "nextUpdate": tdate, "certificateInfos": [* CertificateInfo], ? "extensions": Extensions, * tstr => any }
 * CertificateInfo = { "certificate": bstr, "serialNumber": biguint, "ski": bstr, "docType": [+ DocType],
 *           ? "certificateProfile": [+ CertificateProfile], ? "issuingAuthority": tstr, ? "issuingCountry": tstr,
 *           ? "stateOrProvinceName": tstr, ? "issuer": bstr, ? "subject": bstr, ? "notBefore": tdate,
 *           ? "notAfter": tdate, ? "extensions": Extensions, * tstr => any }
 * ```
 * The list itself must be as described, or it is refused whole. An entry that is not (its certificate no
 * readable X.509 CA certificate, no document type) is skipped and counted, so one provider's mistake does not
 * withdraw every other issuer. `serialNumber`, `ski`, `issuer`, `subject` and the dates repeat what the
 * certificate says; the certificate is what we trust, so they are not read.
 */
export function readVicalPayload(payload: Uint8Array): Vical | undefined {
  const vical = decodeBoundedCbor(payload, PAYLOAD_LIMITS)?.value
  if (!(vical instanceof Map)) return undefined
  const [version, provider, issuedAt, nextUpdate, issueId, infos] = [
    vical.get('version'),
    vical.get('vicalProvider'),
    vical.get('date'),
    vical.get('nextUpdate'),
    vical.get('vicalIssueID'),
    vical.get('certificateInfos'),
  ]
  if (typeof version !== 'string' || typeof provider !== 'string' || !isDate(issuedAt) || !Array.isArray(infos)) return undefined
  if (nextUpdate !== undefined && !isDate(nextUpdate)) return undefined
  const id = issueId === undefined ? undefined : readUint(issueId)
  if (issueId !== undefined && id === undefined) return undefined
  const entries = infos.map(readEntry).filter((entry) => entry !== undefined)
  return {
    provider,
    issuedAt,
    ...(nextUpdate !== undefined && { nextUpdate }),
    ...(id !== undefined && { issueId: id }),
    entries,
    skipped: infos.length - entries.length,
  }
}

function readEntry(info: unknown): VicalEntry | undefined {
  if (!(info instanceof Map)) return undefined
  const [der, docTypes] = [info.get('certificate'), info.get('docType')]
  if (!isBytes(der) || !Array.isArray(docTypes) || docTypes.length === 0 || !docTypes.every((type) => typeof type === 'string')) return undefined
  const names = { issuingCountry: info.get('issuingCountry'), issuingAuthority: info.get('issuingAuthority'), stateOrProvinceName: info.get('stateOrProvinceName') }
  if (!Object.values(names).every((name) => name === undefined || typeof name === 'string')) return undefined
  let certificate: X509Certificate
  try {
    certificate = new X509Certificate(der)
  } catch {
    return undefined
  }
  // Each entry is a trust point for document signers (Annex C.1.7.1 "docType for which the certificate may be
  // used as a trust point"): a certificate that is no CA could not have issued one. Its validity is checked
  // where a credential's chain is, at the time of use.
  if (!certificate.ca) return undefined
  const entry: VicalEntry = { certificate, docTypes: [...docTypes] }
  for (const [field, name] of Object.entries(names) as [keyof typeof names, string | undefined][]) if (name !== undefined) entry[field] = name
  return entry
}

function isDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime())
}

function readUint(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined
  if (typeof value === 'bigint') return value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined
  return undefined
}
