import { beforeAll, describe, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  AGE_VERIFICATION_PROVIDER_SERVICE_TYPE,
  ageTrustAnchors,
  GRANTED_STATUS,
  PID_PROVIDER_SERVICE_TYPE,
  readEtsiTrustedList,
  RECOGNISED_STATUS,
} from '../../src/credentials/trust/etsi-trusted-list.ts'
import {
  buildEtsiTrustedList,
  createListSigner,
  createProviderCertificate,
  DIGEST_METHODS,
  type ListSigner,
  type ServiceEntry,
  SIGNATURE_METHODS,
  type TrustedListOptions,
} from './etsi-fixtures.ts'

/**
 * ETSI TS 119 612 trusted lists, read only through their scheme operator's signature. The lists come from
 * etsi-fixtures.ts, which writes and signs them by hand with WebCrypto, apart from the verifier's library.
 */

const NOW = new Date('2026-02-01T00:00:00Z')
const NEXT_UPDATE = new Date('2026-06-01T00:00:00Z')
const WITHDRAWN = 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn'
const QEAA = 'http://uri.etsi.org/TrstSvc/Svctype/EAA/Q'

let signer: ListSigner
let certificates: Record<'pid' | 'paa' | 'paa2' | 'withdrawn' | 'qeaa' | 'national', X509Certificate>
let services: ServiceEntry[]
let valid: string

const build = (options: Partial<TrustedListOptions> = {}) => buildEtsiTrustedList({ signer, services, nextUpdate: NEXT_UPDATE, ...options })
const read = (xml: string | Uint8Array, options: { signerCertificates?: X509Certificate[]; now?: Date } = {}) =>
  readEtsiTrustedList(xml, { signerCertificates: options.signerCertificates ?? [signer.certificate], now: options.now ?? NOW })
const reason = async (xml: string | Uint8Array, options?: { signerCertificates?: X509Certificate[]; now?: Date }) => {
  const result = await read(xml, options)
  return result.ok ? 'ok' : result.reason
}
/** The text between the first `open` and the next `close`, both included. */
const between = (xml: string, open: string, close: string) => xml.slice(xml.indexOf(open), xml.indexOf(close, xml.indexOf(open)) + close.length)

beforeAll(async () => {
  signer = await createListSigner({ from: new Date('2025-01-01T00:00:00Z'), until: new Date('2030-01-01T00:00:00Z') })
  const names = ['pid', 'paa', 'paa2', 'withdrawn', 'qeaa', 'national'] as const
  certificates = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await createProviderCertificate(name)]))) as typeof certificates
  services = [
    { serviceType: PID_PROVIDER_SERVICE_TYPE, status: GRANTED_STATUS, name: 'Test PID Provider', certificates: [certificates.pid] },
    { serviceType: AGE_VERIFICATION_PROVIDER_SERVICE_TYPE, status: GRANTED_STATUS, name: 'Test Proof of Age', certificates: [certificates.paa, certificates.paa2] },
    { serviceType: PID_PROVIDER_SERVICE_TYPE, status: WITHDRAWN, name: 'Withdrawn PID Provider', certificates: [certificates.withdrawn] },
    { serviceType: QEAA, status: GRANTED_STATUS, name: 'Test QEAA Provider', certificates: [certificates.qeaa] },
    { serviceType: AGE_VERIFICATION_PROVIDER_SERVICE_TYPE, status: RECOGNISED_STATUS, name: 'National Age App', certificates: [certificates.national] },
  ]
  valid = await build()
})

describe('a list signed by the configured signer', () => {
  test('is read with its scheme information and every service as the operator wrote them', async () => {
    const result = await read(valid)
    if (!result.ok) throw new Error(`refused: ${result.reason}`)
    const { services: read_, ...scheme } = result.list
    expect(scheme).toEqual({
      type: 'http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUgeneric',
      territory: 'EU',
      sequenceNumber: 7,
      issuedAt: new Date('2026-01-01T00:00:00Z'),
      nextUpdate: NEXT_UPDATE,
    })
    expect(read_.map(({ certificates: certs, ...rest }) => ({ ...rest, fingerprints: certs.map((c) => c.fingerprint256) }))).toEqual(
      services.map(({ certificates: certs, ...rest }) => ({ ...rest, fingerprints: certs.map((c) => (c as X509Certificate).fingerprint256) })),
    )
  })

  test('ageTrustAnchors takes the PID and proof-of-age services granted or recognised, and nothing else', async () => {
    const result = await read(valid)
    if (!result.ok) throw new Error(`refused: ${result.reason}`)
    expect(ageTrustAnchors(result.list).map((c) => c.fingerprint256)).toEqual(
      [certificates.pid, certificates.paa, certificates.paa2, certificates.national].map((c) => c.fingerprint256),
    )
  })

  test('is read from bytes as from text', async () => {
    expect(await reason(new TextEncoder().encode(valid))).toBe('ok')
  })

  test.each([
    ['RSA-SHA256', SIGNATURE_METHODS.rsaSha256],
    ['RSASSA-PSS with SHA-256', SIGNATURE_METHODS.rsaPssSha256],
  ])('signed with %s is read too', async (_, signatureMethod) => {
    const rsa = await createListSigner({ from: new Date('2025-01-01T00:00:00Z'), until: new Date('2030-01-01T00:00:00Z'), key: 'RSA' })
    expect(await reason(await build({ signer: rsa, signatureMethod }), { signerCertificates: [certificates.pid, rsa.certificate] })).toBe('ok')
  })
})

describe('content changed after signing is invalid_signature', () => {
  test('a service certificate swapped', async () => {
    const swapped = valid.replace(certificates.pid.raw.toString('base64'), certificates.qeaa.raw.toString('base64'))
    expect(swapped).not.toBe(valid)
    expect(await reason(swapped)).toBe('invalid_signature')
  })

  test('a withdrawn status turned to granted', async () => {
    const service = between(valid, '<TrustServiceProvider><TSPInformation><TSPName><Name xml:lang="en">Withdrawn', '</TrustServiceProvider>')
    const tampered = valid.replace(service, service.replace(WITHDRAWN, GRANTED_STATUS))
    expect(await reason(tampered)).toBe('invalid_signature')
  })

  test('the text of a signed element (the territory)', async () => {
    expect(await reason(valid.replace('<SchemeTerritory>EU<', '<SchemeTerritory>UT<'))).toBe('invalid_signature')
  })

  test('the signature value', async () => {
    const value = between(valid, '<ds:SignatureValue>', '</ds:SignatureValue>')
    const flipped = value.replace(/<ds:SignatureValue>(.)/, (_, first: string) => `<ds:SignatureValue>${first === 'A' ? 'B' : 'A'}`)
    expect(await reason(valid.replace(value, flipped))).toBe('invalid_signature')
  })
})

describe('the signer', () => {
  test('a list signed by a certificate that is not configured is untrusted_signer', async () => {
    const other = await createListSigner({ from: new Date('2025-01-01T00:00:00Z'), until: new Date('2030-01-01T00:00:00Z') })
    expect(await reason(await build({ signer: other }))).toBe('untrusted_signer')
  })

  test("the configured certificate put in KeyInfo does not make another key's signature pass", async () => {
    const attacker = await createListSigner({ from: new Date('2025-01-01T00:00:00Z'), until: new Date('2030-01-01T00:00:00Z') })
    const forged = await build({ signer: { ...attacker, certificate: signer.certificate } })
    expect(await reason(forged)).toBe('invalid_signature')
  })

  test('a configured signer certificate past its validity is untrusted_signer', async () => {
    expect(await reason(valid, { now: new Date('2030-01-02T00:00:00Z') })).toBe('untrusted_signer')
  })

  test('a configured signer certificate not yet valid is untrusted_signer', async () => {
    expect(await reason(valid, { now: new Date('2024-12-31T00:00:00Z') })).toBe('untrusted_signer')
  })
})

describe('freshness', () => {
  test('a list whose NextUpdate has passed is expired', async () => {
    expect(await reason(valid, { now: new Date('2026-06-01T00:00:01Z') })).toBe('expired')
  })

  test('a closed list (an empty NextUpdate) is expired', async () => {
    expect(await reason(await build({ nextUpdate: null }))).toBe('expired')
  })
})

describe('signature wrapping is refused', () => {
  const attackerProvider = () =>
    `<TrustServiceProvider><TSPInformation><TSPName><Name xml:lang="en">Attacker</Name></TSPName></TSPInformation>` +
    `<TSPServices><TSPService><ServiceInformation><ServiceTypeIdentifier>${PID_PROVIDER_SERVICE_TYPE}</ServiceTypeIdentifier>` +
    `<ServiceName><Name xml:lang="en">Attacker PID</Name></ServiceName><ServiceDigitalIdentity><DigitalId><X509Certificate>` +
    `${certificates.qeaa.raw.toString('base64')}</X509Certificate></DigitalId></ServiceDigitalIdentity>` +
    `<ServiceStatus>${GRANTED_STATUS}</ServiceStatus></ServiceInformation></TSPService></TSPServices></TrustServiceProvider>`
  const attackerServices = () => `<TrustServiceProviderList>${attackerProvider()}</TrustServiceProviderList>`

  test("the signed list inside an unsigned wrapper, with the attacker's list at the root", async () => {
    const signedRoot = valid.slice(valid.indexOf('<TrustServiceStatusList'))
    const scheme = between(valid, '<SchemeInformation>', '</SchemeInformation>')
    const wrapped =
      `<?xml version="1.0" encoding="UTF-8"?><TrustServiceStatusList xmlns="http://uri.etsi.org/02231/v2#">${scheme}${attackerServices()}` +
      `<SchemeExtensions>${signedRoot}</SchemeExtensions></TrustServiceStatusList>`
    expect(await reason(wrapped)).toBe('invalid_signature')
  })

  test("the list's signature moved onto the attacker's list", async () => {
    const signature = between(valid, '<ds:Signature ', '</ds:Signature>')
    const scheme = between(valid, '<SchemeInformation>', '</SchemeInformation>')
    const moved = `<TrustServiceStatusList xmlns="http://uri.etsi.org/02231/v2#" TSLTag="http://uri.etsi.org/19612/TSLTag">${scheme}${attackerServices()}${signature}</TrustServiceStatusList>`
    expect(await reason(moved)).toBe('invalid_signature')
  })

  test('a second TrustServiceProviderList added after the signed one', async () => {
    expect(await reason(valid.replace('</TrustServiceProviderList>', `</TrustServiceProviderList>${attackerServices()}`))).toBe('invalid_signature')
  })

  test('a signature over SchemeInformation alone (URI="#scheme"), however valid, does not vouch for the services', async () => {
    const partial = await build({ referenceUri: '#scheme' })
    expect(await reason(partial)).toBe('invalid_signature')
    expect(await reason(partial.replace('</TrustServiceProviderList>', `${attackerProvider()}</TrustServiceProviderList>`))).toBe('invalid_signature')
  })

  test("services hidden in the signature's ds:Object, the one part URI=\"\" leaves unsigned, are not read", async () => {
    const hidden = valid.replace('<ds:Object>', `<ds:Object>${attackerServices()}`)
    const result = await read(hidden)
    if (!result.ok) throw new Error(`refused: ${result.reason}`)
    expect(result.list.services.map((service) => service.name)).toEqual(services.map((service) => service.name))
  })

  test('a second signature beside the first', async () => {
    const signature = between(valid, '<ds:Signature ', '</ds:Signature>')
    expect(await reason(valid.replace('</TrustServiceStatusList>', `${signature.replace('Id="sig"', 'Id="sig2"')}</TrustServiceStatusList>`))).toBe(
      'invalid_signature',
    )
  })
})

describe('weak or symmetric algorithms are refused', () => {
  test('RSA-SHA1', async () => {
    const rsa = await createListSigner({ from: new Date('2025-01-01T00:00:00Z'), until: new Date('2030-01-01T00:00:00Z'), key: 'RSA' })
    const list = await build({ signer: rsa, signatureMethod: SIGNATURE_METHODS.rsaSha1 })
    expect(await reason(list, { signerCertificates: [rsa.certificate] })).toBe('invalid_signature')
  })

  test('a SHA-1 digest', async () => {
    expect(await reason(await build({ digestMethod: DIGEST_METHODS.sha1 }))).toBe('invalid_signature')
  })

  test("HMAC-SHA256 keyed with the signer certificate's bytes", async () => {
    const list = await build({ signatureMethod: SIGNATURE_METHODS.hmacSha256, hmacKey: signer.certificate.raw })
    expect(await reason(list)).toBe('invalid_signature')
  })
})

describe('unreadable input is malformed, never thrown', () => {
  test('a DOCTYPE with nested entities (billion laughs) is refused before it is parsed', async () => {
    const entities = Array.from({ length: 10 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('')
    const bomb = valid.replace('\n<TrustServiceStatusList', `\n<!DOCTYPE TrustServiceStatusList [<!ENTITY lol0 "lol">${entities}]>\n<TrustServiceStatusList`)
    const started = performance.now()
    expect(await reason(bomb.replace('<SchemeTerritory>EU<', '<SchemeTerritory>&lol10;<'))).toBe('malformed')
    expect(performance.now() - started).toBeLessThan(500)
  })

  test('an external entity (XXE) is refused', async () => {
    const xxe = valid.replace('\n<TrustServiceStatusList', '\n<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<TrustServiceStatusList')
    expect(await reason(xxe.replace('<SchemeTerritory>EU<', '<SchemeTerritory>&xxe;<'))).toBe('malformed')
  })

  test.each([
    ['not XML', 'this is not a trusted list'],
    ['empty', ''],
    ['an unclosed element', '<TrustServiceStatusList xmlns="http://uri.etsi.org/02231/v2#">'],
    ['another root element', '<List xmlns="http://uri.etsi.org/02231/v2#"></List>'],
    ['another encoding declared', '<?xml version="1.0" encoding="ISO-8859-1"?><TrustServiceStatusList xmlns="http://uri.etsi.org/02231/v2#"/>'],
  ])('%s', async (_, input) => {
    expect(await reason(input)).toBe('malformed')
  })

  test('bytes that are not UTF-8', async () => {
    expect(await reason(new Uint8Array([0x3c, 0xff, 0xfe, 0x3e]))).toBe('malformed')
  })

  test('over 16 MiB is refused unread', async () => {
    const oversized = valid + ' '.repeat(16 * 1024 * 1024)
    const started = performance.now()
    expect(await reason(oversized)).toBe('malformed')
    expect(performance.now() - started).toBeLessThan(500)
  })

  test('a signed service certificate that does not parse', async () => {
    const broken: ServiceEntry = { serviceType: PID_PROVIDER_SERVICE_TYPE, status: GRANTED_STATUS, name: 'Broken', certificates: [{ base64: 'AAAA' }] }
    expect(await reason(await build({ services: [...services, broken] }))).toBe('malformed')
  })

  test('a signed list without a usable sequence number', async () => {
    expect(await reason(await build({ sequenceNumber: 0 }))).toBe('malformed')
  })
})

/**
 * The Commission's sample Age Verification Trusted List (TSLType AVTL), as its age verification verifier
 * (eu-digital-identity-wallet/av-srv-web-verifier-endpoint-23220-4-kt, Apache-2.0) ships it: signed by DSS
 * with XAdES, RSA-SHA256 and an XPath Filter 2.0 transform, by the test certificate "LOTL signer 1". Its
 * SignedInfo signature is genuine, but the list was edited after signing (its whole-document digest does
 * not match), so the only outcome a careful reader can give it is a refusal; which one shows how far the
 * reading got.
 */
describe('the published sample AV trusted list', () => {
  const sample = readFileSync(join(import.meta.dir, 'fixtures/av-etsi-trusted-list.xml'))
  const ownSigner = new X509Certificate(Buffer.from(/<ds:X509Certificate>([^<]+)</.exec(sample.toString('utf8'))![1]!, 'base64'))
  const signedAt = new Date('2025-10-03T00:00:00Z')

  test('signed by the EC test LOTL signer, which an operator must configure', async () => {
    expect(ownSigner.subject).toContain('CN=LOTL signer 1')
    expect(await reason(sample, { now: signedAt })).toBe('untrusted_signer')
  })

  test('with its signer configured it is refused as edited after signing, not as unreadable', async () => {
    expect(await reason(sample, { signerCertificates: [ownSigner], now: signedAt })).toBe('invalid_signature')
  })
})
