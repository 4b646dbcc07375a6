import { createHash, X509Certificate } from 'node:crypto'
import type { Openid4vpClient } from '@openid4vc/openid4vp'
import type { CoseKey, MdocContext } from '@owf/mdoc'
import { encryptResponse } from './jwe-encrypt.ts'

/**
 * What the OWF libraries leave to the wallet that uses them: hashing, verifying the request's JWS, encrypting
 * the answer, signing COSE. Credo supplies these from its key management; this test wallet supplies them from
 * WebCrypto and node:crypto, and JWE from jwe-encrypt.ts, never from the verifier's code or its jose.
 */

export type Fetcher = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

type Callbacks = ConstructorParameters<typeof Openid4vpClient>[0]['callbacks']

const b64u = (bytes: Uint8Array | ArrayBuffer) => Buffer.from(bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes).toString('base64url')
const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256' }

/** RFC 7518 §3.4: an ES256 JWS signature is R || S, as WebCrypto's ECDSA checks it. */
async function verifyEs256(compact: string, spki: Uint8Array): Promise<boolean> {
  const [header = '', payload = '', signature = ''] = compact.split('.')
  const key = await crypto.subtle.importKey('spki', new Uint8Array(spki), ECDSA_P256, false, ['verify'])
  return crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, Buffer.from(signature, 'base64url'), new TextEncoder().encode(`${header}.${payload}`))
}

/**
 * The callbacks @openid4vc/openid4vp asks of a wallet. A request signed under an `x509_hash` (or `x509_san_*`)
 * client id names its certificate in `x5c`: the signature is checked with the leaf's key (ES256 only), and the
 * library compares the client id with the leaf's hash or names. Like the other test wallets, this one trusts
 * the certificate it is shown; a real one also checks the chain against its relying-party trust anchors.
 * `fetch` is how the wallet reaches the verifier (a listening server, or the app in-process).
 */
export function openid4vpCallbacks(fetcher: Fetcher): Callbacks {
  return {
    fetch: fetcher as Callbacks['fetch'],
    hash: (data, alg) => new Uint8Array(createHash(alg.replace('-', '').toLowerCase()).update(data).digest()),
    verifyJwt: async (signer, { compact }) => {
      if (signer.method !== 'x5c' || signer.alg !== 'ES256' || !signer.x5c[0]) return { verified: false }
      const leaf = new X509Certificate(Buffer.from(signer.x5c[0], 'base64'))
      const spki = leaf.publicKey.export({ type: 'spki', format: 'der' })
      const signerJwk = leaf.publicKey.export({ format: 'jwk' }) as { kty: string }
      return (await verifyEs256(compact, spki)) ? { verified: true, signerJwk } : { verified: false }
    },
    getX509CertificateMetadata: (certificate) => {
      const names = (new X509Certificate(Buffer.from(certificate, 'base64')).subjectAltName ?? '').split(', ')
      return { sanDnsNames: names.flatMap((name) => (name.startsWith('DNS:') ? [name.slice(4)] : [])), sanUriNames: names.flatMap((name) => (name.startsWith('URI:') ? [name.slice(4)] : [])) }
    },
    // The library names the key, `alg`, `enc`, `apu` (the wallet's nonce) and `apv` (the request's nonce).
    encryptJwe: async (encryptor, data) => {
      if (encryptor.alg !== 'ECDH-ES' || (encryptor.enc !== 'A128GCM' && encryptor.enc !== 'A256GCM')) throw new Error(`this wallet does not encrypt with ${encryptor.alg}/${encryptor.enc}`)
      const jwe = await encryptResponse(data, encryptor.publicJwk, { enc: encryptor.enc, apu: encryptor.apu, apv: encryptor.apv })
      return { jwe, encryptionJwk: encryptor.publicJwk }
    },
    decryptJwe: () => ({ decrypted: false }),
    signJwt: () => {
      throw new Error('this wallet signs no JWT through the library (no JARM signing, no wallet attestation)')
    },
  }
}

/** An EC P-256 private key of a COSE_Key as a JWK (RFC 9053 §7.1: x, y, d as bytes). */
function privateJwkOf(key: CoseKey): JsonWebKey {
  if (!key.x || !key.y || !key.d) throw new Error('the COSE key is not an EC private key')
  return { kty: 'EC', crv: 'P-256', x: b64u(key.x), y: b64u(key.y), d: b64u(key.d) }
}

const ES256 = -7

/**
 * The MdocContext @owf/mdoc 0.6 asks for, as far as issuing and presenting with a signature need it: random
 * bytes, digests, and COSE_Sign1 signing (ES256, r || s, RFC 9053 §2.1). The library passes the signing key's
 * own `alg`; with none it passes nothing, and we still sign with the key's curve, as Credo's key management
 * does, so that what the library writes into the header is what a wallet on it would send.
 */
export const mdocContext: Pick<MdocContext, 'crypto' | 'cose'> = {
  crypto: {
    random: (length) => crypto.getRandomValues(new Uint8Array(length)),
    digest: ({ digestAlgorithm, bytes }) => new Uint8Array(createHash(digestAlgorithm.replace('-', '').toLowerCase()).update(bytes).digest()),
    calculateEphemeralMacKey: () => {
      throw new Error('this wallet authenticates with a signature, never a MAC')
    },
  },
  cose: {
    sign1: {
      sign: async ({ toBeSigned, key, algorithm }) => {
        if (algorithm !== undefined && algorithm !== ES256) throw new Error(`this wallet signs ES256 only, not ${algorithm}`)
        const signingKey = await crypto.subtle.importKey('jwk', privateJwkOf(key), ECDSA_P256, false, ['sign'])
        return new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, signingKey, new Uint8Array(toBeSigned)))
      },
      verify: () => {
        throw new Error('this wallet verifies no COSE signature')
      },
    },
    mac0: {
      sign: () => {
        throw new Error('this wallet authenticates with a signature, never a MAC')
      },
      verify: () => {
        throw new Error('this wallet verifies no MAC')
      },
    },
  },
}
