import { afterEach, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ENGINE_OPTIONS, FTL_VARIABLE, HEAP_GROWTH_VARIABLE } from '../src/ops/engine-options.ts'
import { freePort, waitUntilReady } from './helpers.ts'

/**
 * The server runs with its engine options (src/ops/engine-options.ts: JavaScriptCore's heap growth function
 * and its FTL compiler off): a process started without them starts itself again with them, keeping its process
 * id; an operator's own value of each stands.
 */
const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/** Starts `bun src/index.ts` with none of the engine's options but `extra`; its environment once it serves. */
async function serve(extra: Record<string, string>): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ofage-heap-'))
  const port = await freePort()
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, OFAGE_DEMO: '0', FACE_CHECK: '0' }
  for (const name of Object.keys(ENGINE_OPTIONS)) delete env[name]
  Object.assign(env, extra)
  const child = Bun.spawn(['bun', 'src/index.ts'], { env, stdout: 'ignore', stderr: 'ignore' })
  cleanups.push(async () => {
    child.kill('SIGTERM')
    await child.exited
    rmSync(dataDir, { recursive: true, force: true })
  })
  await waitUntilReady(`http://127.0.0.1:${port}`, 30_000)
  return readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0')
}

test.skipIf(process.platform !== 'linux')('a server started without the options serves with them, in the process that was started', async () => {
  // The pid the test spawned is the one that answers with the options set: it replaced itself, it did not fork.
  const environment = await serve({})
  expect(environment).toContain(`${HEAP_GROWTH_VARIABLE}=1048576`)
  expect(environment).toContain(`${FTL_VARIABLE}=false`)
}, 40_000)

test.skipIf(process.platform !== 'linux')("an operator's own setting of an option stands, and the other is still set", async () => {
  const environment = await serve({ [HEAP_GROWTH_VARIABLE]: '16384' })
  expect(environment).toContain(`${HEAP_GROWTH_VARIABLE}=16384`)
  expect(environment).toContain(`${FTL_VARIABLE}=false`)
  const withFtl = await serve({ [FTL_VARIABLE]: 'true' })
  expect(withFtl).toContain(`${FTL_VARIABLE}=true`)
  expect(withFtl).toContain(`${HEAP_GROWTH_VARIABLE}=1048576`)
}, 60_000)
