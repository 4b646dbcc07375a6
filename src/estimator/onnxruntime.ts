import { dlopen } from 'bun:ffi'
import { existsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { placeOnce } from './embedded-assets.ts'

export type OnnxRuntime = typeof import('onnxruntime-node')

// The handle keeps the preloaded library in the process for its life: it is never closed.
let preloaded: unknown

/**
 * onnxruntime-node, imported on first use (the server process never loads it: only the estimator's
 * workers do). From a checkout its binding finds libonnxruntime beside itself. Inside the compiled binary
 * (`bun run build`) Bun embeds the binding but cannot place the 45 MB library beside it, so the build embeds
 * the library as a file of its own (package.json's build script, Linux only); it is written out once to a
 * folder named after the embedded file (whose name carries a content hash) and loaded before the binding,
 * whose dependency on `libonnxruntime.so.1` the dynamic linker then answers with the loaded library.
 */
export async function loadOnnxRuntime(): Promise<OnnxRuntime> {
  const library = Bun.embeddedFiles.find((file) => (file as Blob & { name: string }).name.startsWith('libonnxruntime.')) as (Blob & { name: string }) | undefined
  if (library && !preloaded) {
    const folder = join(tmpdir(), `ofage-${library.name}`)
    const path = join(folder, 'libonnxruntime.so.1')
    // Read out of the binary (45 MB) only when the folder is not there yet.
    const bytes = existsSync(folder) ? undefined : new Uint8Array(await library.arrayBuffer())
    placeOnce(folder, (staging) => writeFileSync(join(staging, 'libonnxruntime.so.1'), bytes!))
    try {
      preloaded = dlopen(path, { OrtGetApiBase: { args: [], returns: 'ptr' } })
    } catch (error) {
      // What the loader says of a noexec mount ("failed to map segment from shared object") names no cause.
      throw new Error(`cannot load ${path} (a noexec mount refuses it: docs/deploy.md): ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  const runtime = await import('onnxruntime-node')
  // Warnings (an unused initializer, say) would go to the service's stderr, one a worker.
  runtime.env.logLevel = 'error'
  return runtime
}
