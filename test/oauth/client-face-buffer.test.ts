import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../../src/cli/run.ts'
import type { Config } from '../../src/config.ts'
import { freshDatabase, REDIRECT_URI, testConfig } from '../helpers.ts'

/**
 * A client's face buffer may only raise the default (issue 22, item 1), for every threshold the client may
 * ask for: from its minimum age (or 1 without one) to 99, and never under the deployment's FACE_AGE_BUFFER.
 * Run as an operator's shell runs `ofage clients create/update`; every refusal names the threshold and changes nothing.
 */

/**
 * The floor a client's buffer may not go under: the highest default over the thresholds it may ask for, from
 * its minimum age to 99. docs/accuracy.md's published buffers are 12 under 16, 11 for 16–20, 9 for 21–24 and
 * 12 from 25, so the floor is 12 whatever the minimum age: every client may ask for 25 or more.
 */
const FLOOR = 12

describe('ofage clients --face-buffer', () => {
  let dataDir: string
  let drop: () => Promise<void>
  let config: Config

  beforeAll(async () => {
    // On PGlite a copy of the migrated template, which each command opens as an operator's shell would.
    const database = await freshDatabase()
    dataDir = database.env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'ofage-buffer-cli-'))
    drop = database.drop
    config = testConfig({ DATA_DIR: dataDir, ...database.env })
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
    const low = await create('--face-buffer', String(FLOOR - 1))
    expect(low.status).toBe(1)
    expect(low.err).toContain(`face_buffer ${FLOOR - 1} is under the default of ${FLOOR} years`)
    expect(low.err).toContain('without a minimum age it may ask for any age')
    // A minimum age narrows the thresholds, but 25 and over stay among them: the floor stays 12.
    const at21 = await create('--min-age', '21', '--face-buffer', String(FLOOR), '--json')
    expect(at21.status).toBe(0)
    expect(at21.json().face_buffer).toBe(FLOOR)
    const id = at21.json().client_id
    expect((await cli(config, 'clients', 'update', id, '--face-buffer', String(FLOOR - 1))).err).toContain('its minimum age is 21')
    expect((await cli(config, 'clients', 'show', id, '--json')).json()).toMatchObject({ min_age: 21, face_buffer: FLOOR })
    // The floor is the same without a minimum age, so lowering it keeps the buffer valid.
    expect((await cli(config, 'clients', 'update', id, '--min-age', 'none', '--json')).json()).toMatchObject({ min_age: null, face_buffer: FLOOR })
    expect((await cli(config, 'clients', 'update', id, '--face-buffer', 'none', '--min-age', 'none', '--json')).json()).toMatchObject({ min_age: null, face_buffer: null })
  })

  test("a buffer under the deployment's FACE_AGE_BUFFER is refused too", async () => {
    const deployment = { ...config, face: { ...config.face, buffer: FLOOR + 4 } }
    const refused = await cli(deployment, 'clients', 'create', '--name', 'Bar', '--redirect-uri', REDIRECT_URI, '--face-buffer', String(FLOOR + 3))
    expect(refused.status).toBe(1)
    expect(refused.err).toContain(`under the default of ${FLOOR + 4} years`)
    const kept = await cli(deployment, 'clients', 'create', '--name', 'Bar', '--redirect-uri', REDIRECT_URI, '--face-buffer', String(FLOOR + 4), '--json')
    expect(kept.status).toBe(0)
  })
})
