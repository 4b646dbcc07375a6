import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { isoCBOR } from '@simplewebauthn/server/helpers'

/** A passkey held by the software authenticator: what a platform authenticator keeps per credential. */
export type SoftwareCredential = {
  id: string
  rpId: string
  userHandle: string
  privateKey: KeyObject
  /** The signature counter; `synced` credentials always report 0, as iCloud and Google passkeys do. */
  signCount: number
  synced: boolean
}

const FLAG_UP = 0x01
const FLAG_UV = 0x04
const FLAG_AT = 0x40

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url')
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest()

function clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }))
}

function counterBytes(count: number): Buffer {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32BE(count)
  return bytes
}

/** The credential's public key as a COSE_Key (RFC 9053 §7.1.1: EC2, P-256, ES256). */
function coseKey(privateKey: KeyObject): Uint8Array {
  const jwk = privateKey.export({ format: 'jwk' })
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]),
  )
}

/**
 * A software WebAuthn authenticator for HTTP tests: P-256 keys, attestation format "none", discoverable
 * credentials with user verification. It answers options as a browser's `create()`/`get()` would, in the
 * JSON form the page's script posts, and lets tests bend the rules (no UV, an old counter, another origin).
 */
export function softwareAuthenticator() {
  const credentials = new Map<string, SoftwareCredential>()

  function register(options: PublicKeyCredentialCreationOptionsJSON, { origin, synced = false }: { origin: string; synced?: boolean }) {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const id = randomBytes(16)
    const credential: SoftwareCredential = { id: b64url(id), rpId: options.rp.id!, userHandle: options.user.id, privateKey, signCount: 0, synced }
    credentials.set(credential.id, credential)
    const idLength = Buffer.alloc(2)
    idLength.writeUInt16BE(id.length)
    const authData = Buffer.concat([
      sha256(credential.rpId),
      Buffer.from([FLAG_UP | FLAG_UV | FLAG_AT]),
      counterBytes(0),
      Buffer.alloc(16), // AAGUID: none, as with attestation "none"
      idLength,
      id,
      coseKey(privateKey),
    ])
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]) as never)
    return {
      credential,
      response: {
        id: credential.id,
        rawId: credential.id,
        type: 'public-key' as const,
        response: { clientDataJSON: b64url(clientData('webauthn.create', options.challenge, origin)), attestationObject: b64url(attestationObject), transports: ['internal'] },
        authenticatorAttachment: 'platform',
        clientExtensionResults: {},
      },
    }
  }

  /** Signs an assertion with a stored credential (the only one, unless `credentialId` picks another). */
  function assert(
    options: PublicKeyCredentialRequestOptionsJSON,
    bend: { origin: string; credentialId?: string; userVerified?: boolean; signCount?: number; userHandle?: string },
  ) {
    const credential = bend.credentialId ? credentials.get(bend.credentialId) : [...credentials.values()].at(-1)
    if (!credential) throw new Error('no credential on this authenticator')
    if (!credential.synced) credential.signCount += 1
    const count = bend.signCount ?? credential.signCount
    const authData = Buffer.concat([sha256(options.rpId ?? credential.rpId), Buffer.from([FLAG_UP | (bend.userVerified === false ? 0 : FLAG_UV)]), counterBytes(count)])
    const clientDataJSON = clientData('webauthn.get', options.challenge, bend.origin)
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey)
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: bend.userHandle ?? credential.userHandle,
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    }
  }

  return { credentials, register, assert }
}
