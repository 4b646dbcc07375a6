/**
 * @peculiar/x509, with the reflect-metadata it needs loaded first: what node:crypto's X509Certificate does
 * not read (extensions by OID, names field by field, CRLs). Loaded at its first use, not with the modules
 * that use it: with its ASN.1 schemas it is about 9 MiB of a process's memory, and a process that never
 * checks a wallet's certificate (most of them) need not hold it.
 */
export async function peculiarX509(): Promise<typeof import('@peculiar/x509')> {
  await import('reflect-metadata')
  return import('@peculiar/x509')
}
