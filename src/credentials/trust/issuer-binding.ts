import type { X509Certificate } from 'node:crypto'
import { peculiarX509 } from './peculiar-x509.ts'
import type { IssuerKey } from './trust-list.ts'

/**
 * Whether the key an SD-JWT verified with may speak for the issuer its `iss` names (draft-ietf-oauth-sd-jwt-vc
 * §3.5): a trusted chain proves who holds the leaf, not that it is the issuer the credential claims to be.
 * With `x5c`: "If the iss value contains a DNS name encoded as a URI using the DNS URI scheme [RFC4501], the DNS
 * name MUST match a dNSName Subject Alternative Name entry of the leaf certificate. In all other cases, the iss
 * value MUST match a uniformResourceIdentifier SAN entry"; HAIP's profile also lets an https `iss` name its host
 * as a dNSName SAN, which we accept too. Names compare exactly (DNS names without case), no wildcards. With a
 * trusted JWK that names an `iss`, the credential must name the same; one that names none signs for whoever the
 * operator trusted it for. A credential without `iss` claims no issuer, so there is nothing to bind.
 */
export async function issuerMatchesKey(iss: unknown, key: IssuerKey): Promise<boolean> {
  if (iss === undefined) return true
  if (typeof iss !== 'string' || iss.length === 0 || iss.length > 2048) return false
  if ('trustedKey' in key) return key.trustedKey.iss === undefined || key.trustedKey.iss === iss
  const { dnsNames, uris } = await subjectAltNames(key.certificate)
  if (iss.startsWith('dns:')) return dnsNames.includes(iss.slice(4).toLowerCase())
  if (uris.includes(iss)) return true
  const url = URL.parse(iss)
  return url?.protocol === 'https:' && url.port === '' && dnsNames.includes(url.hostname.toLowerCase())
}

async function subjectAltNames(certificate: X509Certificate): Promise<{ dnsNames: string[]; uris: string[] }> {
  const x509 = await peculiarX509()
  const extension = new x509.X509Certificate(certificate.raw).getExtension(x509.SubjectAlternativeNameExtension)
  const names = extension?.names.items ?? []
  return {
    dnsNames: names.filter((name) => name.type === 'dns').map((name) => name.value.toLowerCase()),
    uris: names.filter((name) => name.type === 'url').map((name) => name.value),
  }
}

/**
 * ISO/IEC 18013-5 Annex B (B.1.4, document signer certificate): its subject's countryName "shall match the
 * countryName of the IACA", and where the IACA names a stateOrProvinceName, the document signer's must be the
 * same. A chain that holds cryptographically but crosses a border (a root of one state vouching for a signer
 * naming another) is not an issuer's chain.
 */
export async function documentSignerMatchesIaca(signer: X509Certificate, iaca: X509Certificate): Promise<boolean> {
  // The operator trusted this very certificate (a root of the static file): there is no IACA to agree with.
  if (signer.fingerprint256 === iaca.fingerprint256) return true
  const x509 = await peculiarX509()
  const [signerName, iacaName] = [new x509.X509Certificate(signer.raw).subjectName, new x509.X509Certificate(iaca.raw).subjectName]
  const field = (name: typeof signerName, type: string) => name.getField(type).map((value) => value.trim().toUpperCase())
  const [iacaCountry, signerCountry] = [field(iacaName, 'C'), field(signerName, 'C')]
  if (iacaCountry.length !== 1 || signerCountry.length !== 1 || iacaCountry[0] !== signerCountry[0]) return false
  const iacaState = field(iacaName, 'ST')
  return iacaState.length === 0 || field(signerName, 'ST').join('\n') === iacaState.join('\n')
}
