import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../../src/cli.ts'
import type { Config } from '../../src/config.ts'
import { defaultFaceBuffer } from '../../src/verification/methods/face-policy.ts'
import { freshDatabaseUrl, onPostgres, REDIRECT_URI, testConfig } from '../helpers.ts'

/**
 * A client's face buffer may only raise the default (issue 22, item 1), for every threshold the client may
 * ask for: from its minimum age (or 1 without one) to 99, and never under the deployment's FACE_AGE_BUFFER.
 * Run as an operator's shell runs `ofage clients create/update`; every refusal names the threshold and changes nothing.
 */

/** The highest default buffer over the thresholds from `from` to 99: what docs/accuracy.md's table gives a client. */
const defaultFrom = (from: number) => Math.max(...Array.from({ length: 100 - from }, (_, i) => defaultFaceBuffer(from + i)))

describe('ofage clients --face-buffer', () => {
  let dataDir: string
  let drop: () => Promise<void>
  let config: Config

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'ofage-buffer-cli-'))
    const database = await freshDatabaseUrl()
    drop = database.drop
    config = testConfig({ DATA_DIR: dataDir, DATABASE_URL: onPostgres ? database.url : undefined })
  })
  afterAll(async () => {
    await drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  async function cli(target: Config, ...argv: string[]) {
    const out: string[] = []
    const err: string[] = []
    const status = await runCli(argv, target, { out: (text) => out.push(text), err: (text) => err.push(text) })
    return { status, out: out.join('\n'), err: err.join('\n'), json: () => JSON.parse(out.join('\n')) }
  }
  const create = (...flags: string[]) => cli(config, 'clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI, ...flags)

  test("a face buffer under the default for any threshold the client may ask for is refused; at the default it is kept", async () => {
    const low = await create('--face-buffer', String(defaultFrom(1) - 1))
    expect(low.status).toBe(1)
    expect(low.err).toContain(`face_buffer ${defaultFrom(1) - 1} is under the default of ${defaultFrom(1)} years`)
    expect(low.err).toContain('without a minimum age it may ask for any age')
    // A minimum age narrows the thresholds, and so the floor.
    const at21 = await create('--min-age', '21', '--face-buffer', String(defaultFrom(21)), '--json')
    expect(at21.status).toBe(0)
    expect(at21.json().face_buffer).toBe(defaultFrom(21))
    const id = at21.json().client_id
    expect((await cli(config, 'clients', 'update', id, '--face-buffer', String(defaultFrom(21) - 1))).err).toContain('its minimum age is 21')
    if (defaultFrom(1) > defaultFrom(21)) {
      // Lowering the minimum age would let it ask for a threshold its buffer is too small for.
      const lowered = await cli(config, 'clients', 'update', id, '--min-age', 'none')
      expect(lowered.status).toBe(1)
      expect(lowered.err).toContain(`under the default of ${defaultFrom(1)} years`)
    }
    expect((await cli(config, 'clients', 'show', id, '--json')).json()).toMatchObject({ min_age: 21, face_buffer: defaultFrom(21) })
    expect((await cli(config, 'clients', 'update', id, '--face-buffer', 'none', '--min-age', 'none', '--json')).json()).toMatchObject({ min_age: null, face_buffer: null })
  })

  test("a buffer under the deployment's FACE_AGE_BUFFER is refused too", async () => {
    const deployment = { ...config, face: { ...config.face, buffer: defaultFrom(1) + 4 } }
    const refused = await cli(deployment, 'clients', 'create', '--name', 'Bar', '--redirect-uri', REDIRECT_URI, '--face-buffer', String(defaultFrom(1) + 3))
    expect(refused.status).toBe(1)
    expect(refused.err).toContain(`under the default of ${defaultFrom(1) + 4} years`)
    const kept = await cli(deployment, 'clients', 'create', '--name', 'Bar', '--redirect-uri', REDIRECT_URI, '--face-buffer', String(defaultFrom(1) + 4), '--json')
    expect(kept.status).toBe(0)
  })
})
