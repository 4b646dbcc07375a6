import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServices } from '../../src/boot.ts'
import { loadConfig } from '../../src/config.ts'
import { describeReaderIdentity, loadReaderIdentity } from '../../src/credentials/trust/reader-identity.ts'
import { ConfigError } from '../../src/errors.ts'
import { fixedClock } from '../../src/lib/clock.ts'
import { silentLogger } from '../../src/lib/log.ts'
import { createAccessChain, createRegistrar, DAY, NOW, RELYING_PARTY, registrationClaims, signRegistrationCertificate, type AccessChain, type Registrar } from './relying-party-pki.ts'

/**
 * The EU relying-party certificates (Implementing Regulation (EU) 2025/848), read and checked at start: the
 * access certificate that signs our requests (CREDENTIAL_VERIFIER_CERT_FILE and _KEY_FILE), the registration
 * certificate sent beside it in `verifier_info` (CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE), and the roots
 * both must end at (CREDENTIAL_VERIFIER_ROOTS_FILE). What a wallet would refuse stops start-up, naming the setting.
 */

let dir: string
let counter = 0
const file = (text: string | Uint8Array) => {
  const path = join(dir, `f${counter++}`)
  writeFileSync(path, text)
  return path
}

let access: AccessChain
let registrar: Registrar
let wrprc: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ofage-registration-'))
  ;[access, registrar] = await Promise.all([createAccessChain(), createRegistrar()])
  wrprc = await signRegistrationCertificate(registrar, registrationClaims())
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

type Files = { chain?: AccessChain; certificate?: string; key?: string; registration?: string | Uint8Array; roots?: string }

function load(files: Files = {}) {
  const chain = files.chain ?? access
  return loadReaderIdentity(
    {
      readerCertificateFile: undefined,
      readerKeyFile: undefined,
      verifierCertificateFile: file(files.certificate ?? chain.leafPem + chain.rootPem),
      verifierKeyFile: file(files.key ?? chain.keyPem),
      verifierRegistrationCertificateFile: files.registration === undefined ? undefined : file(files.registration),
      verifierRootsFile: files.roots === undefined ? undefined : file(files.roots),
    },
    NOW,
  )
}

async function failure(files: Files): Promise<ConfigError> {
  const error = await load(files).catch((e: unknown) => e)
  if (!(error instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${error}`)
  return error
}

describe('what loads', () => {
  test('an access certificate and its registration certificate: verifier_info carries the JWT as registration_cert, without credential_ids', async () => {
    const signing = (await load({ registration: `${wrprc}\n` })).requestSigning!
    expect(signing.verifierInfo).toEqual([{ format: 'registration_cert', data: wrprc }])
    expect(signing.registration).toMatchObject({ relyingParty: RELYING_PARTY, name: 'Test Shop', signer: 'C=UT, O=Test Registrar, CN=Test WRPRC Signer' })
    expect(describeReaderIdentity({ requestSigning: signing })).toMatchObject({
      request_signing: { registration: { relying_party: RELYING_PARTY, name: 'Test Shop', issued: new Date(NOW.getTime() - 30 * DAY).toISOString() } },
    })
  })

  test('with the roots both chains end at, the same; an access certificate alone sends no verifier_info', async () => {
    expect((await load({ registration: wrprc, roots: access.rootPem + registrar.rootPem })).requestSigning!.verifierInfo).toHaveLength(1)
    const alone = (await load({ roots: access.rootPem })).requestSigning!
    expect(alone.verifierInfo).toBeUndefined()
    expect(alone.registration).toBeUndefined()
  })

  test('a natural person’s: sub is the serialNumber of the access certificate (ETSI EN 319 412-1)', async () => {
    const person = await createAccessChain({ identifier: null, serialNumber: 'PNOUT-1234567' })
    const registration = await signRegistrationCertificate(registrar, registrationClaims({ sub: 'PNOUT-1234567' }))
    expect((await load({ chain: person, registration })).requestSigning!.registration!.relyingParty).toBe('PNOUT-1234567')
  })
})

describe('the access certificate (CREDENTIAL_VERIFIER_CERT_FILE, _KEY_FILE, _ROOTS_FILE)', () => {
  test('expired: CREDENTIAL_VERIFIER_CERT_FILE, with the date', async () => {
    const expired = await createAccessChain({ from: new Date(NOW.getTime() - 400 * DAY), until: new Date(NOW.getTime() - DAY) })
    const error = await failure({ chain: expired })
    expect(error.variable).toBe('CREDENTIAL_VERIFIER_CERT_FILE')
    expect(error.message).toContain(`expired on ${new Date(NOW.getTime() - DAY).toISOString().slice(0, 10)}`)
  })

  test('not yet valid: CREDENTIAL_VERIFIER_CERT_FILE', async () => {
    const early = await createAccessChain({ from: new Date(NOW.getTime() + DAY) })
    const error = await failure({ chain: early })
    expect(error.variable).toBe('CREDENTIAL_VERIFIER_CERT_FILE')
    expect(error.message).toContain('is not valid before')
  })

  test('a key that is not the access certificate’s: CREDENTIAL_VERIFIER_KEY_FILE', async () => {
    const other = await createAccessChain()
    expect((await failure({ key: other.keyPem })).variable).toBe('CREDENTIAL_VERIFIER_KEY_FILE')
  })

  test('a chain that does not verify (another CA after the leaf): CREDENTIAL_VERIFIER_CERT_FILE', async () => {
    const other = await createAccessChain()
    const error = await failure({ certificate: access.leafPem + other.rootPem })
    expect(error.variable).toBe('CREDENTIAL_VERIFIER_CERT_FILE')
    expect(error.message).toContain('did not issue certificate 1')
  })

  test('a chain that does not end at a root of CREDENTIAL_VERIFIER_ROOTS_FILE: CREDENTIAL_VERIFIER_CERT_FILE', async () => {
    const error = await failure({ roots: registrar.rootPem })
    expect(error.variable).toBe('CREDENTIAL_VERIFIER_CERT_FILE')
    expect(error.message).toContain('does not end at a root in CREDENTIAL_VERIFIER_ROOTS_FILE')
  })

  test('a leaf alone ends at the root that issued it', async () => {
    expect((await load({ certificate: access.leafPem, roots: access.rootPem })).requestSigning!.x5c).toHaveLength(1)
  })

  test('a roots file holding a leaf, or nothing: CREDENTIAL_VERIFIER_ROOTS_FILE', async () => {
    expect((await failure({ roots: access.leafPem })).variable).toBe('CREDENTIAL_VERIFIER_ROOTS_FILE')
    expect((await failure({ roots: 'no certificates here' })).variable).toBe('CREDENTIAL_VERIFIER_ROOTS_FILE')
  })
})

describe('the registration certificate (CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE)', () => {
  const refusal = async (registration: string | Uint8Array, files: Files = {}) => {
    const error = await failure({ registration, ...files })
    expect(error.variable).toBe('CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE')
    return error.message
  }

  test('not a JWT, or a private key: refused as not a registration certificate', async () => {
    expect(await refusal('hello')).toContain('is not a registration certificate in JWT form')
    expect(await refusal(access.keyPem)).toContain('holds a private key')
    expect(await refusal('e30.e30')).toContain('is not a registration certificate in JWT form')
  })

  test('a registration-certificate.json holding the JWT (as the German sandbox registrar hands it out) gives that JWT; one holding none or two is refused', async () => {
    for (const wrapped of [JSON.stringify(wrprc), JSON.stringify({ registration_certificate: wrprc }), JSON.stringify({ format: 'registration_cert', data: wrprc })]) {
      expect((await load({ registration: wrapped })).requestSigning!.verifierInfo).toEqual([{ format: 'registration_cert', data: wrprc }])
    }
    expect(await refusal(JSON.stringify({ jwt: 'not one' }))).toContain('no JWT in it')
    const other = await signRegistrationCertificate(registrar, registrationClaims({ name: 'Other' }))
    expect(await refusal(JSON.stringify({ a: wrprc, b: other }))).toContain('2 different JWTs')
    expect(await refusal('{not json')).toContain('neither a JWT nor JSON')
  })

  test('the CWT form (a COSE_Sign1, raw or base64): refused, asking for the JWT form that verifier_info carries', async () => {
    const coseSign1 = Uint8Array.from([0xd2, 0x84, 0x43, 0xa1, 0x01, 0x26, 0xa0, 0x50, ...new Uint8Array(16), 0x40])
    expect(await refusal(coseSign1)).toContain('CWT form (rc-wrp+cwt)')
    expect(await refusal(Buffer.from(coseSign1).toString('base64'))).toContain('CWT form (rc-wrp+cwt)')
  })

  test('an X.509 attribute certificate: refused, naming what it is', async () => {
    expect(await refusal('-----BEGIN ATTRIBUTE CERTIFICATE-----\nMIIB\n-----END ATTRIBUTE CERTIFICATE-----\n')).toContain('attribute certificate')
  })

  test('another JWT type (the request object’s, the German rc-rp+jwt): refused, naming the type', async () => {
    expect(await refusal(await signRegistrationCertificate(registrar, registrationClaims(), { typ: 'rc-rp+jwt' }))).toContain('"rc-rp+jwt"')
    expect(await refusal(await signRegistrationCertificate(registrar, registrationClaims(), { typ: undefined }))).toContain('null')
  })

  test('no signer chain in x5c, or one that is not certificates: refused', async () => {
    expect(await refusal(await signRegistrationCertificate(registrar, registrationClaims(), { x5c: undefined }))).toContain('x5c')
    expect(await refusal(await signRegistrationCertificate(registrar, registrationClaims(), { x5c: ['bm90IGEgY2VydA=='] }))).toContain('certificate 1 is not a readable')
  })

  test('a signature by another key than its x5c names: refused', async () => {
    const other = await createRegistrar()
    expect(await refusal(await signRegistrationCertificate(registrar, registrationClaims(), {}, other.signerKey))).toContain('signature does not verify')
    const [header, payload] = wrprc.split('.')
    const tampered = `${header}.${Buffer.from(JSON.stringify(registrationClaims({ name: 'Someone Else' }))).toString('base64url')}.${wrprc.split('.')[2]}`
    expect(payload).not.toBe(tampered.split('.')[1])
    expect(await refusal(tampered)).toContain('signature does not verify')
  })

  test('a critical header parameter no JOSE library processes: refused as a JWS that cannot be verified', async () => {
    expect(await refusal(await signRegistrationCertificate(registrar, registrationClaims(), { crit: ['sigX'], sigX: 1 }))).toContain('cannot be verified (ERR_JOSE_NOT_SUPPORTED)')
  })

  test('a signer chain out of order, or one that does not end at a root of CREDENTIAL_VERIFIER_ROOTS_FILE: refused', async () => {
    const reversed = await signRegistrationCertificate(registrar, registrationClaims(), { x5c: [...registrar.x5c].reverse() })
    expect(await refusal(reversed)).toContain('signer chain (x5c) is not a chain in order')
    const other = await createRegistrar()
    expect(await refusal(wrprc, { roots: access.rootPem + other.rootPem })).toContain('signer chain (x5c) does not end at a root in CREDENTIAL_VERIFIER_ROOTS_FILE')
  })

  test('a signer certificate that expired: refused with its date', async () => {
    const stale = await createRegistrar({ signerFrom: new Date(NOW.getTime() - 400 * DAY), signerUntil: new Date(NOW.getTime() - DAY) })
    expect(await refusal(await signRegistrationCertificate(stale, registrationClaims()))).toContain('signer chain (x5c): certificate C=UT, O=Test Registrar, CN=Test WRPRC Signer expired on')
  })

  test('expired (exp), not yet issued (iat, nbf), or without an issue date: refused', async () => {
    const seconds = (date: number) => Math.floor(date / 1000)
    expect(await refusal(await signRegistrationCertificate(registrar, registrationClaims({ exp: seconds(NOW.getTime() - DAY) })))).toContain('expired on')
    expect(await refusal(await signRegistrationCertificate(registrar, registrationClaims({ iat: seconds(NOW.getTime() + DAY) })))).toContain('is not valid before')
    expect(await refusal(await signRegistrationCertificate(registrar, registrationClaims({ nbf: seconds(NOW.getTime() + DAY) })))).toContain('(nbf)')
    expect(await refusal(await signRegistrationCertificate(registrar, registrationClaims({ iat: undefined })))).toContain('no issue date')
    // Within the five minutes of clock skew, and an exp still ahead: loads.
    const fresh = await signRegistrationCertificate(registrar, registrationClaims({ iat: seconds(NOW.getTime() + 60_000), exp: seconds(NOW.getTime() + DAY) }))
    expect((await load({ registration: fresh })).requestSigning!.registration!.expiresAt).toEqual(new Date(seconds(NOW.getTime() + DAY) * 1000))
  })

  test('one that names another relying party than the access certificate: refused, naming both', async () => {
    const message = await refusal(await signRegistrationCertificate(registrar, registrationClaims({ sub: 'VATUT-987654321' })))
    expect(message).toContain('"VATUT-987654321"')
    expect(message).toContain(`"${RELYING_PARTY}"`)
    expect(await refusal(await signRegistrationCertificate(registrar, registrationClaims({ sub: { id: RELYING_PARTY } })))).toContain('names no relying party')
  })

  test('an access certificate that names no relying party cannot carry one', async () => {
    const anonymous = await createAccessChain({ identifier: null })
    expect(await refusal(wrprc, { chain: anonymous })).toContain('cannot be tied to the access certificate in CREDENTIAL_VERIFIER_CERT_FILE')
  })

  test('a file far larger than a registration certificate: refused unread', async () => {
    expect(await refusal(`${wrprc}${' '.repeat(40_000)}`)).toContain('more than the 32768')
  })
})

describe('the settings (config.ts) and start-up (boot.ts)', () => {
  const configError = (env: Record<string, string>) => {
    try {
      loadConfig({ CREDENTIAL_TRUST_LIST: 'trust.pem', ...env })
    } catch (error) {
      return (error as ConfigError).variable
    }
    throw new Error('expected a ConfigError')
  }

  test('a registration certificate or roots without the access certificate they belong to: a configuration error', () => {
    expect(configError({ CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE: 'wrprc.jwt' })).toBe('CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE')
    expect(configError({ CREDENTIAL_VERIFIER_ROOTS_FILE: 'roots.pem' })).toBe('CREDENTIAL_VERIFIER_ROOTS_FILE')
    expect(loadConfig({ CREDENTIAL_TRUST_LIST: 't', CREDENTIAL_VERIFIER_CERT_FILE: 'c', CREDENTIAL_VERIFIER_KEY_FILE: 'k', CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE: 'r', CREDENTIAL_VERIFIER_ROOTS_FILE: 'o' }).credentials).toMatchObject({
      verifierRegistrationCertificateFile: 'r',
      verifierRootsFile: 'o',
    })
  })

  test('a registration certificate for another relying party stops start-up before the database is opened', async () => {
    const env = {
      DATABASE_URL: 'memory:',
      CREDENTIAL_TRUST_LIST: file(access.rootPem),
      CREDENTIAL_VERIFIER_CERT_FILE: file(access.leafPem + access.rootPem),
      CREDENTIAL_VERIFIER_KEY_FILE: file(access.keyPem),
      CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE: file(await signRegistrationCertificate(registrar, registrationClaims({ sub: 'LEIXG-0000' }))),
    }
    const error = await startServices(loadConfig(env), { clock: fixedClock(NOW), log: silentLogger }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe('CREDENTIAL_VERIFIER_REGISTRATION_CERT_FILE')
  })
})
