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
      port: 3000,
      host: '0.0.0.0',
      database: { kind: 'pglite', dataDir: './data' },
      dataDir: './data',
      publicUrl: 'http://localhost:3000',
      appUrl: 'http://localhost:3000',
      issuerUrl: 'http://localhost:3000',
      signingKeyFile: undefined,
      demo: true,
      face: { enabled: true, buffer: undefined, workers: 1, queue: 8, upload: false, uploadSeconds: 60 },
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
      },
      trustProxy: false,
      hstsIncludeSubDomains: false,
      production: false,
    })
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
    [{ FACE_QUEUE: 'many' }, 'FACE_QUEUE'],
    [{ FACE_UPLOAD: 'bogus' }, 'FACE_UPLOAD'],
  ])('%j stops start-up naming %s', (env, variable) => {
    const error = configError(env)
    expect(error.variable).toBe(variable)
    expect(error.message.startsWith(variable)).toBe(true)
    expect(error.message).not.toContain('\n')
  })
})
