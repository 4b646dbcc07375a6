import { X509Certificate } from 'node:crypto'
import { checkEnvelopedSignature, childElements, parseUntrustedXml } from './xml-signature.ts'

/**
 * ETSI TS 119 612 trusted lists (`TrustServiceStatusList`, XML, signed by their scheme operator): the form
 * in which the Commission and the Member States publish who may issue PID and proof-of-age attestations.
 */

export const TSL_NS = 'http://uri.etsi.org/02231/v2#'

/**
 * PID providers in the EUDI Wallet trusted lists (the Commission's reference implementation, e.g. its
 * `eudi-lib-kmp-etsi-1196x2` and verifier endpoint, select them by this `ServiceTypeIdentifier`).
 */
export const PID_PROVIDER_SERVICE_TYPE = 'http://uri.etsi.org/Svc/Svctype/Provider/PID'

/**
 * Proof of Age attestation providers in the EU Age Verification Trusted List (TSLType
 * `http://ec.europa.eu/tools/lotl/av/TrstSvc/TrustedList/TSLType/AVTL`), which the Commission keeps under
 * Recommendation (EU) 2026/1035 (the EU age verification blueprint, "AV Trusted List").
 */
export const AGE_VERIFICATION_PROVIDER_SERVICE_TYPE = 'http://ec.europa.eu/tools/lotl/av/TrstSvc/Svctype/PAA'

/** The service types whose attestations prove an age: {@link ageTrustAnchors} takes these, and no other. */
export const AGE_SERVICE_TYPES: readonly string[] = [PID_PROVIDER_SERVICE_TYPE, AGE_VERIFICATION_PROVIDER_SERVICE_TYPE]

/** ETSI TS 119 612 clause 5.5.4: the supervisory body has granted the service its status. */
export const GRANTED_STATUS = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted'
/** ETSI TS 119 612 clause 5.5.4: a service not qualified, recognised by the Member State's own scheme. */
export const RECOGNISED_STATUS = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/recognisedatnationallevel'

/** One `TSPService` as its current `ServiceInformation` describes it (its history is not read). */
export type TrustedService = { serviceType: string; status: string; name: string; certificates: X509Certificate[] }

export type EtsiTrustedList = {
  /** `TSLType`, e.g. `…/TSLType/EUgeneric` for a Member State's list, `…/TSLType/AVTL` for age verification. */
  type: string
  territory: string
  sequenceNumber: number
  issuedAt: Date
  nextUpdate?: Date
  services: TrustedService[]
}

/**
 * Why a list is not imported. `malformed`: not a readable trusted list (not XML, too large, a DTD, a
 * field missing, a certificate that does not parse). `untrusted_signer`: not signed by a configured list
 * signer valid now. `invalid_signature`: the signature does not cover the whole list or does not verify.
 * `expired`: its NextUpdate has passed, or it is closed (an empty NextUpdate): a stale list may still
 * name a provider its supervisor has since withdrawn.
 */
export type EtsiFailure = 'malformed' | 'untrusted_signer' | 'invalid_signature' | 'expired'

export type EtsiResult = { ok: true; list: EtsiTrustedList } | { ok: false; reason: EtsiFailure }

/**
 * Reads a trusted list and checks its enveloped XAdES signature against the list signers the operator
 * configured (their certificates, compared by SHA-256 fingerprint; no chain is built to anything else).
 * Everything returned is read from the canonical XML the signature covers, never from the document as
 * received. Never throws for what the list holds.
 */
export async function readEtsiTrustedList(
  xml: string | Uint8Array,
  options: { signerCertificates: X509Certificate[]; now: Date },
): Promise<EtsiResult> {
  const received = parseUntrustedXml(xml)
  if (!received || !isTrustServiceStatusList(received.document.documentElement)) return { ok: false, reason: 'malformed' }
  const checked = checkEnvelopedSignature(received, options.signerCertificates, options.now)
  if (!checked.ok) return checked
  const signed = parseUntrustedXml(checked.signedXml)
  const list = signed && readList(signed.document.documentElement)
  if (!list) return { ok: false, reason: 'malformed' }
  if (list.nextUpdate === null || list.nextUpdate <= options.now) return { ok: false, reason: 'expired' }
  return { ok: true, list: { ...list, nextUpdate: list.nextUpdate } }
}

/**
 * The certificates that anchor age attestations: those of PID providers and Proof of Age attestation
 * providers whose current status is granted or recognised at national level. A withdrawn (or any other)
 * status anchors nothing.
 */
export function ageTrustAnchors(list: EtsiTrustedList): X509Certificate[] {
  return list.services
    .filter((service) => AGE_SERVICE_TYPES.includes(service.serviceType))
    .filter((service) => service.status === GRANTED_STATUS || service.status === RECOGNISED_STATUS)
    .flatMap((service) => service.certificates)
}

function isTrustServiceStatusList(root: Element | null): root is Element {
  return root?.namespaceURI === TSL_NS && root.localName === 'TrustServiceStatusList'
}

type ReadList = Omit<EtsiTrustedList, 'nextUpdate'> & { nextUpdate: Date | null }

/** The list, or undefined where a field the list cannot do without is missing or unreadable. */
function readList(root: Element | null): ReadList | undefined {
  if (!isTrustServiceStatusList(root)) return undefined
  const scheme = only(root, 'SchemeInformation')
  const providerLists = childElements(root, TSL_NS, 'TrustServiceProviderList')
  if (!scheme || providerLists.length > 1) return undefined
  const sequence = text(only(scheme, 'TSLSequenceNumber'))
  const type = text(only(scheme, 'TSLType'))
  const territory = text(only(scheme, 'SchemeTerritory'))
  const issuedAt = dateTime(text(only(scheme, 'ListIssueDateTime')))
  const nextUpdateElement = only(scheme, 'NextUpdate')
  if (!sequence || !/^[1-9]\d{0,8}$/.test(sequence) || !type || !territory || !issuedAt || !nextUpdateElement) return undefined
  // TS 119 612 clause 5.3.15: a closed list has an empty NextUpdate.
  const nextUpdateText = text(only(nextUpdateElement, 'dateTime'))
  const nextUpdate = nextUpdateText === undefined ? null : dateTime(nextUpdateText)
  if (nextUpdate === undefined) return undefined
  const services: TrustedService[] = []
  for (const provider of providerLists.flatMap((list) => childElements(list, TSL_NS, 'TrustServiceProvider'))) {
    const tspServices = childElements(provider, TSL_NS, 'TSPServices')
    for (const service of tspServices.flatMap((element) => childElements(element, TSL_NS, 'TSPService'))) {
      const read = readService(service)
      if (!read) return undefined
      services.push(read)
    }
  }
  return { type, territory, sequenceNumber: Number(sequence), issuedAt, nextUpdate, services }
}

function readService(service: Element): TrustedService | undefined {
  const information = only(service, 'ServiceInformation')
  if (!information) return undefined
  const serviceType = text(only(information, 'ServiceTypeIdentifier'))
  const status = text(only(information, 'ServiceStatus'))
  const serviceName = only(information, 'ServiceName')
  const names = serviceName ? childElements(serviceName, TSL_NS, 'Name') : []
  const name = text(names.find((element) => element.getAttribute('xml:lang') === 'en') ?? names[0])
  const identity = only(information, 'ServiceDigitalIdentity')
  if (!serviceType || !status || !name || !identity) return undefined
  const certificates: X509Certificate[] = []
  for (const digitalId of childElements(identity, TSL_NS, 'DigitalId')) {
    for (const element of childElements(digitalId, TSL_NS, 'X509Certificate')) {
      try {
        certificates.push(new X509Certificate(Buffer.from((element.textContent ?? '').replace(/\s+/g, ''), 'base64')))
      } catch {
        return undefined
      }
    }
  }
  return { serviceType, status, name, certificates }
}

function only(parent: Element, localName: string): Element | undefined {
  const found = childElements(parent, TSL_NS, localName)
  return found.length === 1 ? found[0] : undefined
}

function text(element: Element | undefined): string | undefined {
  const value = element?.textContent?.trim()
  return value ? value : undefined
}

/** An xsd:dateTime with its time zone (TS 119 612 writes UTC), or undefined. */
function dateTime(value: string | undefined): Date | undefined {
  if (!value || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return undefined
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? undefined : date
}
