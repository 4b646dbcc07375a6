import type { X509Certificate } from 'node:crypto'
import type { TrustSourceKind } from '../../db/schema.ts'
import type { EtsiFailure } from './etsi-trusted-list.ts'
import type { CredentialFormat } from './trust-list.ts'
import { readVical, type VicalFailure } from './vical.ts'

/** The certificates a list's signature must lead to: a VICAL signer's root(s), an ETSI list's signer certificate(s). */
export type ListSigners = X509Certificate[]

/** A root a list vouches for, with what for, and a name for `ofage trust list`. */
export type ListedAnchor = { certificate: X509Certificate; formats: readonly CredentialFormat[]; docTypes?: readonly string[]; label: string }

/** A verified list, reduced to what is put in force: who published it, when, its sequence, and its roots. */
export type ReadSource = { publisher: string; issuedAt: Date; sequence?: number; nextUpdate?: Date; anchors: ListedAnchor[] }

const WHY: Record<VicalFailure | EtsiFailure, string> = {
  malformed: 'it is not a readable list of this kind',
  untrusted_signer: 'it is not signed by the configured list signer',
  invalid_signature: 'its signature does not hold (the list was altered, or signed over something else)',
  expired: 'it is out of date (past its next update, or signed by a certificate not valid now)',
}

/**
 * Reads and verifies a published list of the given kind. A VICAL's IACAs vouch for mdocs of the doc types each
 * entry names (AAMVA: mDLs), nothing else; an ETSI list's PID and age-verification providers with a granted
 * status vouch for both formats those providers issue (SD-JWT VC and mdoc).
 */
export async function readTrustSource(kind: TrustSourceKind, bytes: Uint8Array, signers: ListSigners, now: Date): Promise<{ ok: true; list: ReadSource } | { ok: false; reason: string }> {
  if (kind === 'vical') {
    const read = await readVical(bytes, { signerRoots: signers, now })
    if (!read.ok) return { ok: false, reason: WHY[read.reason] }
    const { vical } = read
    const anchors = vical.entries.map((entry) => ({
      certificate: entry.certificate,
      formats: ['mdoc'] as const,
      docTypes: entry.docTypes,
      label: [entry.issuingAuthority, entry.stateOrProvinceName, entry.issuingCountry].filter(Boolean).join(', ') || oneLine(entry.certificate.subject),
    }))
    return { ok: true, list: { publisher: vical.provider, issuedAt: vical.issuedAt, sequence: vical.issueId, nextUpdate: vical.nextUpdate, anchors } }
  }
  // Loaded here, at the first import of such a list: its XML parser and signature library are a few MiB of
  // memory that a process serving requests never needs.
  const { ageTrustAnchors, readEtsiTrustedList } = await import('./etsi-trusted-list.ts')
  const read = await readEtsiTrustedList(bytes, { signerCertificates: signers, now })
  if (!read.ok) return { ok: false, reason: WHY[read.reason] }
  const { list } = read
  const anchors = ageTrustAnchors(list).map((certificate) => ({ certificate, formats: ['mdoc', 'sd-jwt'] as const, label: oneLine(certificate.subject) }))
  return { ok: true, list: { publisher: `trusted list of ${list.territory}`, issuedAt: list.issuedAt, sequence: list.sequenceNumber, nextUpdate: list.nextUpdate, anchors } }
}

const oneLine = (name: string) => name.replace(/\n/g, ', ')
