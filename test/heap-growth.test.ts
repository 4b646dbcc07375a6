import { afterEach, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HEAP_GROWTH_VARIABLE } from '../src/ops/heap-growth.ts'
import { freePort, waitUntilReady } from './helpers.ts'

/**
 * The server runs with JavaScriptCore's heap growth function off (src/ops/heap-growth.ts): a process started
 * without the option starts itself again with it, keeping its process id; an operator's own value stands.
 */
const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

async function serve(extra: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'ofage-heap-'))
  const port = await freePort()
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, OFAGE_DEMO: '0', FACE_CHECK: '0' }
  delete env[HEAP_GROWTH_VARIABLE]
  Object.assign(env, extra)
  const child = Bun.spawn(['bun', 'src/index.ts'], { env, stdout: 'ignore', stderr: 'ignore' })
  cleanups.push(async () => {
    child.kill('SIGTERM')
    await child.exited
    rmSync(dataDir, { recursive: true, force: true })
  })
  await waitUntilReady(`http://127.0.0.1:${port}`, 30_000)
  const environment = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0')
  return environment.find((entry) => entry.startsWith(`${HEAP_GROWTH_VARIABLE}=`))
}

test.skipIf(process.platform !== 'linux')('a server started without the option serves with the heap growth function off, in the process that was started', async () => {
  // The pid the test spawned is the one that answers with the option set: it replaced itself, it did not fork.
  expect(await serve({})).toBe(`${HEAP_GROWTH_VARIABLE}=1048576`)
}, 40_000)

test.skipIf(process.platform !== 'linux')("an operator's own setting of the option stands", async () => {
  expect(await serve({ [HEAP_GROWTH_VARIABLE]: '16384' })).toBe(`${HEAP_GROWTH_VARIABLE}=16384`)
}, 40_000)
