/**
 * Runs the Human engine on its own thread so that inference (hundreds of milliseconds of wasm) never
 * blocks the HTTP event loop. Frames arrive as transferred buffers and are dropped after analysis:
 * nothing here writes or logs them.
 */
import { setPriority } from 'node:os'
import { collectAfterFrame } from './collect.ts'
import { createHumanEngine, type HumanEngine } from './human-engine.ts'
import type { FromWorker, SerializedError, ToWorker } from './protocol.ts'

declare var self: Worker

let engine: HumanEngine | undefined

const send = (message: FromWorker) => self.postMessage(message)

function serialize(error: unknown): SerializedError {
  return error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) }
}

// Jobs are handled one at a time: the pool sends a worker its next frame only after the previous result.
self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const message = event.data
  if (message.type === 'init') {
    try {
      // This thread only (Linux: setpriority on the calling thread), and the threads the engine starts inherit
      // it. Raising one's own nice needs no privilege; where the system refuses, the thread runs at 0.
      if (message.nice > 0) {
        try {
          setPriority(message.nice)
        } catch {}
      }
      const started = performance.now()
      engine = await createHumanEngine(message.assets)
      const loaded = performance.now()
      await engine.warmUp()
      send({ type: 'ready', loadMs: Math.round(loaded - started), warmUpMs: Math.round(performance.now() - loaded), modelRuntime: engine.modelRuntime })
    } catch (error) {
      send({ type: 'failed', error: serialize(error) })
    }
    return
  }
  try {
    if (!engine) throw new Error('estimator worker is not initialised')
    const analysis = await engine.analyzeImage(new Uint8Array(message.image), message.views)
    send({ type: 'result', id: message.id, analysis })
  } catch (error) {
    send({ type: 'error', id: message.id, error: serialize(error) })
  } finally {
    collectAfterFrame()
  }
}
