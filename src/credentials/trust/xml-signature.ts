import { constants, createHash, verify, X509Certificate, type KeyLike, type KeyObject } from 'node:crypto'
import { DOMParser } from '@xmldom/xmldom'
import { SignedXml } from 'xml-crypto'

/**
 * Reading an XML document that signs itself (an enveloped XML signature, XAdES-BES as ETSI TS 119 612
 * clause 5.7.1 asks of trusted lists) with xml-crypto, and handing back only the bytes the signature covers.
 */

/** The XML Signature namespace (W3C xmldsig-core). */
export const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#'

/** Why an enveloped signature earns no trust; 'malformed' is a document that is not well-formed XML. */
export type EnvelopedSignatureFailure = 'malformed' | 'untrusted_signer' | 'invalid_signature'

/**
 * The canonical XML the signature covers (the whole document less the signature), to be parsed again and
 * read: never the document as received, where an unsigned copy can sit beside the signed one.
 */
export type EnvelopedSignatureCheck = { ok: true; signedXml: string } | { ok: false; reason: EnvelopedSignatureFailure }

/** A trusted list is a few MiB at most (the EU LOTL is under 1); anything far larger is refused unread. */
export const MAX_XML_BYTES = 16 * 1024 * 1024

const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'
// XML-Signature XPath Filter 2.0, `subtract` `/descendant::ds:Signature`: how DSS (the Commission's signing
// library) removes the signature from the lists it signs; with one signature it is the enveloped transform.
const FILTER2 = 'http://www.w3.org/2002/06/xmldsig-filter2'
const C14N = [
  'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
  'http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments',
  'http://www.w3.org/2001/10/xml-exc-c14n#',
  'http://www.w3.org/2001/10/xml-exc-c14n#WithComments',
]

const DIGESTS: Record<string, string> = {
  'http://www.w3.org/2001/04/xmlenc#sha256': 'sha256',
  'http://www.w3.org/2001/04/xmldsig-more#sha384': 'sha384',
  'http://www.w3.org/2001/04/xmlenc#sha512': 'sha512',
}

type Scheme = { hash: string; key: 'rsa' | 'rsa-pss' | 'ec' }
// RFC 6931 §2.3 (RSA PKCS#1 v1.5, ECDSA) and §2.3.10 (RSASSA-PSS with MGF1, salt as long as the hash).
// Neither SHA-1 nor HMAC: a list's signer is a public key, and SHA-1 collisions are practical.
const SIGNATURES: Record<string, Scheme> = {
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': { hash: 'sha256', key: 'rsa' },
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha384': { hash: 'sha384', key: 'rsa' },
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': { hash: 'sha512', key: 'rsa' },
  'http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1': { hash: 'sha256', key: 'rsa-pss' },
  'http://www.w3.org/2007/05/xmldsig-more#sha384-rsa-MGF1': { hash: 'sha384', key: 'rsa-pss' },
  'http://www.w3.org/2007/05/xmldsig-more#sha512-rsa-MGF1': { hash: 'sha512', key: 'rsa-pss' },
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256': { hash: 'sha256', key: 'ec' },
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384': { hash: 'sha384', key: 'ec' },
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512': { hash: 'sha512', key: 'ec' },
}

/**
 * Parses XML that may come from anyone: bounded, UTF-8 only, no document type declaration at all (so no
 * entity to expand: neither an external one, XXE, nor nested ones, the billion laughs), and any complaint
 * of the parser, however mild, makes it unreadable. Returns undefined rather than throwing.
 */
export function parseUntrustedXml(input: string | Uint8Array): { text: string; document: Document } | undefined {
  const size = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength
  if (size > MAX_XML_BYTES) return undefined
  let text: string
  try {
    text = typeof input === 'string' ? input : new TextDecoder('utf-8', { fatal: true }).decode(input)
  } catch {
    return undefined
  }
  text = text.replace(/^\uFEFF/, '')
  // `<!` opens a comment, a CDATA section or a declaration; a declaration (DOCTYPE, ENTITY) is refused
  // before the parser sees it, wherever it stands.
  if (/<!(?!--|\[CDATA\[)/.test(text)) return undefined
  const declared = /^<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']/.exec(text)?.[1]
  if (declared !== undefined && !/^utf-?8$/i.test(declared)) return undefined
  const complaints: string[] = []
  let document: Document
  try {
    document = new DOMParser({ errorHandler: (_level: string, message: string) => complaints.push(message) } as never).parseFromString(text, 'text/xml')
  } catch {
    return undefined
  }
  if (complaints.length > 0 || !document?.documentElement) return undefined
  return { text, document }
}

/** The element children of `parent` named `localName` in namespace `ns`, in document order. */
export function childElements(parent: Node, ns: string, localName: string): Element[] {
  return Array.from(parent.childNodes).filter(
    (node): node is Element => node.nodeType === 1 && (node as Element).namespaceURI === ns && (node as Element).localName === localName,
  )
}

/**
 * Checks the enveloped signature of a parsed document: exactly one ds:Signature in the whole document, a
 * child of its root; a signing certificate (the first ds:KeyInfo/ds:X509Data/ds:X509Certificate) that is
 * one of `signerCertificates` by SHA-256 fingerprint and valid at `now`; exactly one Reference with
 * URI="" whose transforms remove the signature (and then canonicalize), so that the signature covers the
 * whole document; only the algorithms above; every reference's digest and the signature value correct.
 */
export function checkEnvelopedSignature(
  parsed: { text: string; document: Document },
  signerCertificates: readonly X509Certificate[],
  now: Date,
): EnvelopedSignatureCheck {
  const root = parsed.document.documentElement
  const signatures = Array.from(parsed.document.getElementsByTagNameNS(DSIG_NS, 'Signature'))
  // One signature, where an enveloped one stands: a second one, or one moved into a wrapper, is how
  // signature wrapping starts.
  if (signatures.length !== 1 || signatures[0]!.parentNode !== root) return { ok: false, reason: 'invalid_signature' }
  const signature = signatures[0]!

  const signer = signingCertificate(signature)
  if (signer === 'malformed') return { ok: false, reason: 'malformed' }
  const trusted = signer && signerCertificates.find((certificate) => certificate.fingerprint256 === signer.fingerprint256)
  // A configured certificate outside its validity vouches for nothing: the operator configures its successor.
  if (!trusted || now < new Date(trusted.validFrom) || now > new Date(trusted.validTo)) return { ok: false, reason: 'untrusted_signer' }

  const signedInfo = childElements(signature, DSIG_NS, 'SignedInfo')
  const references = signedInfo.length === 1 ? childElements(signedInfo[0]!, DSIG_NS, 'Reference') : []
  const whole = references.filter((reference) => reference.getAttribute('URI') === '' && reference.hasAttribute('URI'))
  if (whole.length !== 1 || !removesSignature(whole[0]!)) return { ok: false, reason: 'invalid_signature' }
  // Every other reference names an element of this document by its Id (the XAdES SignedProperties).
  if (references.some((reference) => reference !== whole[0] && !reference.getAttribute('URI')?.startsWith('#'))) {
    return { ok: false, reason: 'invalid_signature' }
  }

  const verifier = new SignedXml({ publicCert: trusted.publicKey as unknown as KeyLike })
  verifier.CanonicalizationAlgorithms = {
    ...Object.fromEntries(C14N.map((name) => [name, verifier.CanonicalizationAlgorithms[name]!])),
    [ENVELOPED]: verifier.CanonicalizationAlgorithms[ENVELOPED]!,
    [FILTER2]: SubtractSignatures,
  }
  verifier.HashAlgorithms = Object.fromEntries(Object.entries(DIGESTS).map(([name, hash]) => [name, digestAlgorithm(name, hash)]))
  verifier.SignatureAlgorithms = Object.fromEntries(Object.entries(SIGNATURES).map(([name, scheme]) => [name, signatureAlgorithm(name, scheme)]))
  try {
    verifier.loadSignature(signature)
    if (!verifier.checkSignature(parsed.text)) return { ok: false, reason: 'invalid_signature' }
  } catch {
    // xml-crypto throws for an algorithm it was not given, a wrong signature value and a missing element.
    return { ok: false, reason: 'invalid_signature' }
  }
  const checked = verifier.getReferences()
  const index = references.indexOf(whole[0]!)
  const signedXml = checked.length === references.length ? checked[index]?.signedReference : undefined
  if (signedXml === undefined || checked[index]!.uri !== '') return { ok: false, reason: 'invalid_signature' }
  return { ok: true, signedXml }
}

function signingCertificate(signature: Element): X509Certificate | undefined | 'malformed' {
  const keyInfo = childElements(signature, DSIG_NS, 'KeyInfo')
  const data = keyInfo.length === 1 ? childElements(keyInfo[0]!, DSIG_NS, 'X509Data') : []
  const base64 = data.length > 0 ? childElements(data[0]!, DSIG_NS, 'X509Certificate')[0]?.textContent : undefined
  if (!base64) return undefined
  try {
    return new X509Certificate(Buffer.from(base64.replace(/\s+/g, ''), 'base64'))
  } catch {
    return 'malformed'
  }
}

/**
 * The transforms of the whole-document reference: one that removes the signature (enveloped-signature,
 * or XPath Filter 2.0 subtracting exactly `/descendant::ds:Signature`), then at most a canonicalization.
 */
function removesSignature(reference: Element): boolean {
  const transformsElements = childElements(reference, DSIG_NS, 'Transforms')
  if (transformsElements.length !== 1) return false
  const transforms = childElements(transformsElements[0]!, DSIG_NS, 'Transform')
  if (transforms.length < 1 || transforms.length > 2) return false
  const [first, second] = transforms as [Element, Element | undefined]
  if (second && !C14N.includes(second.getAttribute('Algorithm') ?? '')) return false
  const algorithm = first.getAttribute('Algorithm')
  if (algorithm === ENVELOPED) return true
  if (algorithm !== FILTER2) return false
  const paths = childElements(first, 'http://www.w3.org/2002/06/xmldsig-filter2', 'XPath')
  if (paths.length !== 1 || paths[0]!.getAttribute('Filter') !== 'subtract') return false
  const match = /^\s*\/descendant::([A-Za-z_][\w.-]*):Signature\s*$/.exec(paths[0]!.textContent ?? '')
  return match !== null && paths[0]!.lookupNamespaceURI(match[1]!) === DSIG_NS
}

/** XPath Filter 2.0 as {@link removesSignature} allows it: every ds:Signature subtree is taken out. */
class SubtractSignatures {
  process(node: Node): Node {
    const element = node as Element
    for (const signature of Array.from(element.getElementsByTagNameNS(DSIG_NS, 'Signature'))) signature.parentNode?.removeChild(signature)
    return node
  }

  getAlgorithmName(): string {
    return FILTER2
  }
}

function digestAlgorithm(name: string, hash: string) {
  return class {
    getAlgorithmName = () => name
    getHash = (xml: string) => createHash(hash).update(xml, 'utf8').digest('base64')
  }
}

function signatureAlgorithm(name: string, scheme: Scheme) {
  return class {
    getAlgorithmName = () => name
    getSignature(): string {
      throw new Error('verification only')
    }
    verifySignature(material: string, key: KeyLike, signatureValue: string): boolean {
      const publicKey = key as KeyObject
      const type = publicKey.asymmetricKeyType
      if (scheme.key === 'ec' ? type !== 'ec' : type !== 'rsa' && type !== 'rsa-pss') return false
      // ETSI TS 119 312: RSA keys under 2048 bits no longer protect a signature.
      if (scheme.key !== 'ec' && (publicKey.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return false
      const signature = Buffer.from(signatureValue.replace(/\s+/g, ''), 'base64')
      const data = Buffer.from(material, 'utf8')
      if (scheme.key === 'ec') return verify(scheme.hash, data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)
      if (scheme.key === 'rsa-pss') {
        const saltLength = createHash(scheme.hash).digest().length
        return verify(scheme.hash, data, { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength }, signature)
      }
      return verify(scheme.hash, data, { key: publicKey, padding: constants.RSA_PKCS1_PADDING }, signature)
    }
  }
}
