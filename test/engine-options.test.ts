import { afterEach, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { ENGINE_OPTIONS, FTL_VARIABLE, HEAP_GROWTH_VARIABLE } from '../src/ops/engine-options.ts'
import { freePort, freshDataDir, startServerProcess } from './helpers.ts'

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
  const dataDir = await freshDataDir()
  cleanups.push(() => dataDir.remove())
  const port = await freePort()
  const none = Object.fromEntries(Object.keys(ENGINE_OPTIONS).map((name) => [name, undefined]))
  const server = await startServerProcess({ ...none, ...extra, DATA_DIR: dataDir.path, DATABASE_URL: '', PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, OFAGE_DEMO: '0', FACE_CHECK: '0', WORKERS: '1' })
  cleanups.unshift(() => server.stop())
  return readFileSync(`/proc/${server.pid}/environ`, 'utf8').split('\0')
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
