import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { ConfigError } from '../../errors.ts'
import { PEM_CERTIFICATE } from './trust-list.ts'

/**
 * The checks an operator's certificate chain gets at start, whichever file it came from: a chain of
 * PEM certificates (CREDENTIAL_READER_CERT_FILE, CREDENTIAL_VERIFIER_CERT_FILE) or the `x5c` of a signed
 * registration certificate. Each failure is a {@link ConfigError} naming the setting and its file.
 */

/** A setting that names a file, for the messages. */
export type Setting = { variable: string; file: string }

/** Where in the setting's file a chain is, when not the file itself: "signer chain (x5c) " and the like. */
type Part = string

export function readSettingText({ variable, file }: Setting): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (cause) {
    throw new ConfigError(variable, `could not be read (${file}): ${cause instanceof Error ? cause.message : cause}`)
  }
}

/** The PEM certificates of a file, in order; a private key in it, none or an unreadable one stops start-up. */
export function readCertificates(setting: Setting): X509Certificate[] {
  const text = readSettingText(setting)
  // A key in the certificate file would travel wherever the chain is copied (and the chain is public).
  if (text.includes('PRIVATE KEY-----')) throw new ConfigError(setting.variable, `holds a private key: keep it in its own file (${setting.file})`)
  const blocks = text.match(PEM_CERTIFICATE) ?? []
  if (blocks.length === 0) throw new ConfigError(setting.variable, `holds no PEM certificate (${setting.file})`)
  return blocks.map((pem, index) => {
    try {
      return new X509Certificate(pem)
    } catch {
      throw new ConfigError(setting.variable, `certificate ${index + 1} is not a readable X.509 certificate (${setting.file})`)
    }
  })
}

/** Leaf first, each certificate issued and signed by the next, which is a CA (RFC 5280 §6.1, in the order wallets read `x5c`). */
export function checkChainOrder(chain: X509Certificate[], setting: Setting, part: Part = ''): void {
  for (let i = 0; i + 1 < chain.length; i++) {
    const [certificate, issuer] = [chain[i]!, chain[i + 1]!]
    if (!issuer.ca || !certificate.checkIssued(issuer) || !certificate.verify(issuer.publicKey)) {
      throw new ConfigError(setting.variable, `${part}is not a chain in order, leaf first: certificate ${i + 2} did not issue certificate ${i + 1} (${setting.file})`)
    }
  }
}

export function checkCertificateCurrent(certificate: X509Certificate, setting: Setting, now: Date, part: Part = ''): void {
  const subject = describeName(certificate.subject)
  if (now < new Date(certificate.validFrom)) throw new ConfigError(setting.variable, `${part}certificate ${subject} is not valid before ${new Date(certificate.validFrom).toISOString()} (${setting.file})`)
  if (now > new Date(certificate.validTo)) throw new ConfigError(setting.variable, `${part}certificate ${subject} expired on ${new Date(certificate.validTo).toISOString()} (${setting.file})`)
}

/** The roots an operator names (CREDENTIAL_VERIFIER_ROOTS_FILE): CA certificates, each valid now. */
export function readRoots(setting: Setting, now: Date): X509Certificate[] {
  const roots = readCertificates(setting)
  roots.forEach((root, index) => {
    if (!root.ca) throw new ConfigError(setting.variable, `certificate ${index + 1} (${describeName(root.subject)}) is not a CA certificate (${setting.file})`)
    checkCertificateCurrent(root, setting, now)
  })
  return roots
}

/**
 * The chain ends at one of `roots`: its last certificate is one of them, or was issued and signed by one.
 * What a wallet does with its own trust list (the member state's access CA, the registration certificate
 * provider's), done here so that a chain from the wrong CA is found at start.
 */
export function checkChainEndsAtRoot(chain: X509Certificate[], roots: { setting: Setting; certificates: X509Certificate[] }, setting: Setting, part: Part = ''): void {
  const last = chain.at(-1)!
  if (roots.certificates.some((root) => root.raw.equals(last.raw))) return
  if (roots.certificates.some((root) => last.checkIssued(root) && last.verify(root.publicKey))) return
  throw new ConfigError(
    setting.variable,
    `${part}does not end at a root in ${roots.setting.variable}: its last certificate (${describeName(last.subject)}) was issued by ${describeName(last.issuer)} (${setting.file})`,
  )
}

/** A distinguished name as node:crypto prints it, on one line. */
export function describeName(name: string): string {
  return name.replace(/\n/g, ', ')
}
