import { dlopen } from 'bun:ffi'
import { existsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type * as Ort from 'onnxruntime-node'
import { placeOnce } from './embedded-assets.ts'

/** A float32 tensor as onnxruntime takes and gives it: the values in row-major order, and the shape. */
export type OnnxTensor = { data: Float32Array; dims: readonly number[] }

export type OnnxSession = {
  /**
   * Runs the model on the calling thread, one intra-op thread, and returns its outputs by name when done.
   * Synchronous, because Human calls its models' `execute` synchronously (src/estimator/human-models.ts).
   */
  run(inputs: Record<string, OnnxTensor>): Record<string, OnnxTensor>
  release(): void
}

export type OnnxRuntime = { createSession(model: Uint8Array): OnnxSession }

// One thread: each estimator worker has its core, and runs a frame at a time.
const SESSION_OPTIONS: Ort.InferenceSession.SessionOptions = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3 }

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
  const [{ Tensor, env }, { binding, initOrt }] = await Promise.all([import('onnxruntime-node'), import('onnxruntime-node/dist/binding.js')])
  // Warnings (an unused initializer, say) would go to the service's stderr, one a worker.
  env.logLevel = 'error'
  initOrt()
  return {
    // The package's own InferenceSession runs a model only asynchronously (a setImmediate around this same
    // native call); the binding is called directly so that a run can stand in for tfjs' synchronous execute.
    createSession(model) {
      const session = new binding.InferenceSession()
      session.loadModel(model.buffer as ArrayBuffer, model.byteOffset, model.byteLength, SESSION_OPTIONS)
      const fetches = Object.fromEntries(session.outputMetadata.map(({ name }) => [name, null]))
      return {
        run(inputs) {
          const feeds = Object.fromEntries(Object.entries(inputs).map(([name, { data, dims }]) => [name, new Tensor('float32', data, dims)]))
          const outputs = session.run(feeds, fetches, {})
          return Object.fromEntries(Object.entries(outputs).map(([name, value]) => [name, { data: (value as Ort.Tensor).data as Float32Array, dims: (value as Ort.Tensor).dims }]))
        },
        release: () => session.dispose(),
      }
    },
  }
}
