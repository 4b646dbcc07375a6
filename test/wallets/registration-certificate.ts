import { X509Certificate } from 'node:crypto'

/**
 * The wallet's reading of a relying party's registration certificate, as the EUDI wallet library does it
 * (eudi-lib-jvm-openid4vp-kt, RegistrationCertificatePolicyEvaluator): the one `verifier_info` entry of
 * format `registration_cert`, without `credential_ids`, its `data` a JWT typed `rc-wrp+jwt` (ETSI TS 119 475)
 * signed by the first certificate of its `x5c`; and then, as ETSI TS 119 475 asks (GEN-5.1.1-04), its `sub`
 * must be the relying party the request's access certificate names. Written on WebCrypto and node:crypto,
 * not on jose or @peculiar/x509, which the verifier checks with. Trusts whatever registrar signed: a real
 * wallet would also check that chain against its list of registration certificate providers.
 */
export type RegistrationRefusal = 'missing' | 'several' | 'malformed' | 'signature' | 'another_relying_party'

const json = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))

export async function readRegistrationCertificate(
  verifierInfo: unknown,
  accessCertificate: Uint8Array,
): Promise<{ ok: true; claims: Record<string, unknown> } | { ok: false; refusal: RegistrationRefusal }> {
  const entries = Array.isArray(verifierInfo) ? verifierInfo.filter((entry) => entry?.format === 'registration_cert') : []
  if (entries.length === 0) return { ok: false, refusal: 'missing' }
  if (entries.length > 1) return { ok: false, refusal: 'several' }
  const { data, credential_ids } = entries[0]
  if (typeof data !== 'string' || credential_ids !== undefined) return { ok: false, refusal: 'malformed' }
  const parts = data.split('.')
  let header: { typ?: unknown; alg?: unknown; x5c?: unknown }
  let claims: Record<string, unknown>
  try {
    ;[header, claims] = [json(parts[0]!), json(parts[1]!)]
  } catch {
    return { ok: false, refusal: 'malformed' }
  }
  const signer = Array.isArray(header.x5c) && typeof header.x5c[0] === 'string' ? Buffer.from(header.x5c[0], 'base64') : undefined
  // This wallet reads ES256 only (RFC 7518 §3.4: the signature is R || S, as WebCrypto takes it).
  if (parts.length !== 3 || header.typ !== 'rc-wrp+jwt' || header.alg !== 'ES256' || !signer) return { ok: false, refusal: 'malformed' }
  const spki = new X509Certificate(signer).publicKey.export({ type: 'spki', format: 'der' })
  const key = await crypto.subtle.importKey('spki', spki, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify'])
  const valid = await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, Buffer.from(parts[2]!, 'base64url'), new TextEncoder().encode(`${parts[0]}.${parts[1]}`))
  if (!valid) return { ok: false, refusal: 'signature' }
  if (!relyingPartiesOf(new X509Certificate(accessCertificate)).includes(String(claims.sub))) return { ok: false, refusal: 'another_relying_party' }
  return { ok: true, claims }
}

/**
 * organizationIdentifier (2.5.4.97) and serialNumber of a subject, as node:crypto prints it, one attribute a
 * line; OpenSSL names the first, Bun's printer gives its OID.
 */
function relyingPartiesOf(certificate: X509Certificate): string[] {
  return certificate.subject
    .split('\n')
    .map((line) => /^(?:organizationIdentifier|2\.5\.4\.97|serialNumber)=(.*)$/.exec(line)?.[1])
    .filter((value): value is string => value !== undefined)
}
