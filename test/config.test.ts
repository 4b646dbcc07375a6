import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServices } from '../src/boot.ts'
import { loadConfig } from '../src/config.ts'
import { loadTrustList } from '../src/credentials/trust/trust-list.ts'
import { ConfigError } from '../src/errors.ts'

function failureOf(run: () => unknown): ConfigError {
  try {
    run()
  } catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
  throw new Error('expected a ConfigError')
}

const configError = (env: Record<string, string>): ConfigError => failureOf(() => loadConfig(env))

describe('loadConfig (DESIGN.md "Configuration")', () => {
  test('defaults: port 3000, embedded database in ./data, every URL from PUBLIC_URL, demo on', () => {
    expect(loadConfig({})).toEqual({
      passwordHash: { memoryCost: 65_536, timeCost: 2 },
      port: 3000,
      host: '0.0.0.0',
      database: { kind: 'pglite', dataDir: './data' },
      dataDir: './data',
      publicUrl: 'http://localhost:3000',
      appUrl: 'http://localhost:3000',
      issuerUrl: 'http://localhost:3000',
      signingKeyFile: undefined,
      demo: true,
      face: { enabled: true, buffer: undefined, workers: 1, queue: 8, nice: 5, upload: false, uploadSeconds: 60 },
      workers: 1,
      databasePool: 20,
      metricsToken: undefined,
      metricsPublic: false,
      credentials: undefined,
      trust: { vicalSignerFile: undefined, trustedListSignerFile: undefined, refreshHours: 24, revocationUnreachable: 'refuse' },
      limits: {
        authFailures: { max: 30, windowMs: 60_000 },
        sessions: { max: 120, windowMs: 60_000 },
        checks: { max: 300, windowMs: 600_000 },
        signInAccount: { max: 10, windowMs: 900_000 },
        signInAccountCeiling: { max: 100, windowMs: 900_000 },
        signInAddress: { max: 30, windowMs: 900_000 },
        passwordResetEmail: { max: 3, windowMs: 3_600_000 },
        passwordResetAddress: { max: 10, windowMs: 3_600_000 },
      },
      trustProxy: false,
      hstsIncludeSubDomains: false,
      production: false,
      outbound: { allowLoopback: true, allowedNetworks: [] },
      mail: undefined,
    })
  })

  test('OUTBOUND_ALLOWED_NETWORKS names addresses and prefixes outbound requests may reach; production alone turns loopback off', () => {
    expect(loadConfig({ OUTBOUND_ALLOWED_NETWORKS: ' 10.0.5.7, 10.9.0.0/16,fd00:5::/64 ,' }).outbound).toEqual({ allowLoopback: true, allowedNetworks: ['10.0.5.7', '10.9.0.0/16', 'fd00:5::/64'] })
    expect(loadConfig({ NODE_ENV: 'production' }).outbound).toEqual({ allowLoopback: false, allowedNetworks: [] })
    for (const value of ['intranet.example', '10.0.0.0/33', '10.0.0.0/8/8', 'fd00::/129', '10.0.0.0/x', '*']) {
      expect([value, configError({ OUTBOUND_ALLOWED_NETWORKS: value }).variable]).toEqual([value, 'OUTBOUND_ALLOWED_NETWORKS'])
    }
  })

  test('PORT flows into the default PUBLIC_URL; APP_URL and ISSUER_URL default to PUBLIC_URL', () => {
    const config = loadConfig({ PORT: '8080', PUBLIC_URL: 'https://api.example/' })
    expect(config.publicUrl).toBe('https://api.example')
    expect(config.appUrl).toBe('https://api.example')
    expect(config.issuerUrl).toBe('https://api.example')
    expect(loadConfig({ PORT: '8080' }).publicUrl).toBe('http://localhost:8080')
  })

  test('ISSUER_URL is kept exactly as written, trailing slash included', () => {
    expect(loadConfig({ ISSUER_URL: 'https://issuer.example/' }).issuerUrl).toBe('https://issuer.example/')
  })

  test('DATABASE_URL selects Postgres or in-memory PGlite; Postgres turns the demo off unless asked', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db' }).database).toEqual({ kind: 'postgres', url: 'postgres://u@h:5432/db' })
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@h/db' }).database.kind).toBe('postgres')
    expect(loadConfig({ DATABASE_URL: 'memory:' }).database).toEqual({ kind: 'memory' })
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).demo).toBe(false)
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/db', OFAGE_DEMO: '1' }).demo).toBe(true)
  })

  test('FACE_UPLOAD turns the still-photo upload on; it is off unless set', () => {
    expect(loadConfig({ FACE_UPLOAD: 'on' }).face.upload).toBe(true)
    expect(loadConfig({ FACE_UPLOAD: 'off' }).face.upload).toBe(false)
    expect(loadConfig({ FACE_UPLOAD: '' }).face.upload).toBe(false)
  })

  test('FACE_AGE_BUFFER, when set, is one buffer for every threshold; unset, each threshold gets its measured default', () => {
    expect(loadConfig({ FACE_AGE_BUFFER: '5' }).face.buffer).toBe(5)
    expect(loadConfig({ FACE_AGE_BUFFER: '0' }).face.buffer).toBe(0)
    expect(loadConfig({}).face.buffer).toBeUndefined()
  })

  test('CREDENTIAL_TRUST_LIST turns the digital credential method on; the test issuer is refused in production', async () => {
    const { createDevIssuer } = await import('../src/credentials/dev/issuer.ts')
    const dir = mkdtempSync(join(tmpdir(), 'ofage-config-'))
    const file = join(dir, 'trust.pem')
    writeFileSync(file, (await createDevIssuer(new Date())).rootCertificate)
    expect(loadConfig({}).credentials).toBeUndefined()
    expect(loadConfig({ CREDENTIAL_TRUST_LIST: file }).credentials?.trustListFile).toBe(file)
    expect(loadTrustList(file, { production: false }).roots).toHaveLength(1)
    expect(failureOf(() => loadTrustList(file, { production: true })).message).toContain('test issuer')
    expect(failureOf(() => loadTrustList(join(dir, 'missing.pem'), { production: false })).variable).toBe('CREDENTIAL_TRUST_LIST')
    writeFileSync(join(dir, 'empty.pem'), 'nothing here')
    expect(failureOf(() => loadTrustList(join(dir, 'empty.pem'), { production: false })).variable).toBe('CREDENTIAL_TRUST_LIST')
    // The server reads it before anything else: a bad list stops start-up with its one line.
    const start = await startServices(loadConfig({ DATABASE_URL: 'memory:', CREDENTIAL_TRUST_LIST: join(dir, 'empty.pem') })).catch((error: unknown) => error)
    expect(start).toBeInstanceOf(ConfigError)
    expect(configError({ CREDENTIAL_TRUST_LIST: file, CREDENTIAL_VERIFIER_KEY_FILE: file }).variable).toBe('CREDENTIAL_VERIFIER_KEY_FILE')
  })

  test('CREDENTIAL_AV_PROFILE: the EU age verification app is offered wherever the digital ID is, unless switched off', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ofage-config-')), 'trust.pem')
    writeFileSync(file, '')
    expect(loadConfig({ CREDENTIAL_TRUST_LIST: file }).credentials?.avProfile).toBe(true)
    expect(loadConfig({ CREDENTIAL_TRUST_LIST: file, CREDENTIAL_AV_PROFILE: 'off' }).credentials?.avProfile).toBe(false)
    expect(loadConfig({ CREDENTIAL_TRUST_LIST: file, CREDENTIAL_AV_PROFILE: '0' }).credentials?.avProfile).toBe(false)
    expect(configError({ CREDENTIAL_TRUST_LIST: file, CREDENTIAL_AV_PROFILE: 'maybe' }).variable).toBe('CREDENTIAL_AV_PROFILE')
  })

  test('SMTP_URL and SMTP_FROM: where the dashboard’s emails go out, the account percent-decoded; smtps on 465, smtp on 587 by default', () => {
    const from = 'ofage <no-reply@age.example>'
    expect(loadConfig({ SMTP_URL: 'smtp://mailer:p%40ss%3Aw%2Fo@mail.example:2525', SMTP_FROM: from }).mail).toEqual({
      secure: false,
      host: 'mail.example',
      port: 2525,
      auth: { user: 'mailer', pass: 'p@ss:w/o' },
      from,
    })
    expect(loadConfig({ SMTP_URL: 'smtps://mail.example', SMTP_FROM: 'no-reply@age.example' }).mail).toEqual({ secure: true, host: 'mail.example', port: 465, auth: undefined, from: 'no-reply@age.example' })
    expect(loadConfig({ SMTP_URL: 'smtp://[::1]/', SMTP_FROM: 'root@localhost' }).mail).toMatchObject({ secure: false, host: '::1', port: 587 })
    expect(loadConfig({ SMTP_URL: ' ', SMTP_FROM: '' }).mail).toBeUndefined()
  })

  test.each([
    [{ SMTP_URL: 'http://mail.example', SMTP_FROM: 'a@b.example' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://u:secret-word@mail.example/inbox', SMTP_FROM: 'a@b.example' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://u:secret-word@mail.example?tls.rejectUnauthorized=false', SMTP_FROM: 'a@b.example' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://u:secret-word@mail.example:0', SMTP_FROM: 'a@b.example' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://u:secret-word@mail.example:70000', SMTP_FROM: 'a@b.example' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://u:secret-word%E0%A4%A@mail.example', SMTP_FROM: 'a@b.example' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp:/secret-word', SMTP_FROM: 'a@b.example' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://u:secret-word@mail.example' }, 'SMTP_FROM'],
    [{ SMTP_FROM: 'a@b.example' }, 'SMTP_FROM'],
    [{ SMTP_URL: 'smtp://mail.example', SMTP_FROM: 'not an address' }, 'SMTP_FROM'],
    [{ SMTP_URL: 'smtp://mail.example', SMTP_FROM: 'a@b.example\r\nBcc: c@d.example' }, 'SMTP_FROM'],
    [{ SMTP_URL: 'smtp://mail.example', SMTP_FROM: 'Name <a@b.example' }, 'SMTP_FROM'],
  ])('%j stops start-up naming %s, and never says the SMTP password', (env, variable) => {
    const error = configError(env)
    expect(error.variable).toBe(variable)
    expect(error.message.startsWith(variable)).toBe(true)
    expect(error.message).not.toContain('\n')
    expect(error.message).not.toContain('secret-word')
  })

  test('a bad SMTP_URL stops the server before it starts: exit 1, one line naming the variable, not its password', async () => {
    const child = Bun.spawn(['bun', 'src/cli.ts', 'serve'], {
      env: { ...process.env, SMTP_URL: 'smtp://mailer:secret-word@mail.example/inbox', SMTP_FROM: 'no-reply@age.example', DATABASE_URL: 'memory:' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    try {
      const [status, err] = await Promise.all([child.exited, new Response(child.stderr).text()])
      expect(status).toBe(1)
      expect(err.trim().split('\n')).toEqual([expect.stringMatching(/^ofage: configuration error: SMTP_URL must be /)])
      expect(err).not.toContain('secret-word')
    } finally {
      child.kill()
    }
  }, 30_000)

  test.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '0' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '80.5' }, 'PORT'],
    [{ HOST: 'not a host' }, 'HOST'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'memory' }, 'DATABASE_URL'],
    [{ PUBLIC_URL: 'not a url' }, 'PUBLIC_URL'],
    [{ PUBLIC_URL: 'ftp://x.example' }, 'PUBLIC_URL'],
    [{ APP_URL: 'https://x.example/?a=1' }, 'APP_URL'],
    [{ ISSUER_URL: 'issuer' }, 'ISSUER_URL'],
    [{ OFAGE_DEMO: 'maybe' }, 'OFAGE_DEMO'],
    [{ FACE_CHECK: 'perhaps' }, 'FACE_CHECK'],
    [{ FACE_AGE_BUFFER: '-1' }, 'FACE_AGE_BUFFER'],
    [{ FACE_AGE_BUFFER: '31' }, 'FACE_AGE_BUFFER'],
    [{ FACE_WORKERS: '0' }, 'FACE_WORKERS'],
    [{ FACE_NICE: '20' }, 'FACE_NICE'],
    [{ FACE_QUEUE: 'many' }, 'FACE_QUEUE'],
    [{ FACE_UPLOAD: 'bogus' }, 'FACE_UPLOAD'],
    [{ RATE_LIMIT_PASSWORD_RESET_EMAIL: '0' }, 'RATE_LIMIT_PASSWORD_RESET_EMAIL'],
    [{ RATE_LIMIT_PASSWORD_RESET_ADDRESS: 'ten' }, 'RATE_LIMIT_PASSWORD_RESET_ADDRESS'],
    [{ PASSWORD_HASH_MEMORY_KIB: '7' }, 'PASSWORD_HASH_MEMORY_KIB'],
    // Under OWASP's 19 MiB for argon2id only outside production (the test suite's cheap hashes).
    [{ PASSWORD_HASH_MEMORY_KIB: '19455', NODE_ENV: 'production' }, 'PASSWORD_HASH_MEMORY_KIB'],
  ])('%j stops start-up naming %s', (env, variable) => {
    const error = configError(env)
    expect(error.variable).toBe(variable)
    expect(error.message.startsWith(variable)).toBe(true)
    expect(error.message).not.toContain('\n')
  })
})

test('a dashboard password hash costs PASSWORD_HASH_MEMORY_KIB, and one made at another cost still verifies', async () => {
  const { hashPassword, verifyPassword } = await import('../src/dashboard/passwords.ts')
  const cheap = loadConfig({ PASSWORD_HASH_MEMORY_KIB: '8' }).passwordHash
  const production = loadConfig({ NODE_ENV: 'production', PASSWORD_HASH_MEMORY_KIB: '19456' }).passwordHash
  const made = await hashPassword('a passphrase of mine', cheap)
  // The PHC string names its parameters (RFC 9106's encoding): m in KiB, t passes.
  expect(made).toStartWith('$argon2id$v=19$m=8,t=2,')
  expect(await verifyPassword('a passphrase of mine', made, production)).toBe(true)
  expect(await verifyPassword('another passphrase', made, production)).toBe(false)
  expect(await hashPassword('x', loadConfig({}).passwordHash)).toStartWith('$argon2id$v=19$m=65536,t=2,')
})
