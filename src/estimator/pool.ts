import type { EngineAssets } from './human-engine.ts'
import type { FromWorker, SerializedError, ToWorker } from './protocol.ts'
import { EstimatorBusyError, ImageDecodeError, type AgeEstimator, type AgeViews, type FrameAnalysis, type ModelRuntime } from './types.ts'

export type AgeEstimatorOptions = {
  /** Worker threads, each with its own copy of the models (peak RSS ~250 MiB per worker under load) and one core. */
  workers?: number
  /** Frames that may wait beyond those being analysed; past that, analyze() rejects with EstimatorBusyError. */
  maxQueue?: number
  /** Where the models and wasm binaries are, when not in node_modules (e.g. beside a compiled binary). */
  assets?: EngineAssets
  /** The worker script; the default suits `bun src/...` and a binary compiled from src/cli.ts. */
  workerUrl?: string | URL
  /** A frame still unanswered after this long is given up: its worker is replaced, the caller hears "busy". */
  frameTimeoutMs?: number
  /**
   * The threads' nice value (Linux keeps one per thread): above the HTTP thread's 0, so that a burst of face
   * checks takes the cores HTTP leaves and never the other way round (FACE_NICE; 0 keeps them equal).
   */
  nice?: number
}

/**
 * `bun build --compile` inlines this module into the entry (src/cli.ts), so import.meta.url is then the
 * entry's; the worker, compiled as a second entrypoint, sits at estimator/worker.ts relative to it.
 */
function defaultWorkerUrl(): URL {
  const compiled = import.meta.url.startsWith('file:///$bunfs/')
  return new URL(compiled ? './estimator/worker.ts' : './worker.ts', import.meta.url)
}

type Job = { id: number; image: ArrayBuffer; views: AgeViews; resolve: (analysis: FrameAnalysis) => void; reject: (error: Error) => void }

type Slot = { worker: Worker; ready: boolean; job?: Job; timer?: Timer }

/** Also the readiness signal: a pool that never loaded rejects every frame with the load error. */
class EstimatorUnavailableError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'EstimatorUnavailableError'
  }
}

function revive(error: SerializedError): Error {
  if (error.name === 'ImageDecodeError') return new ImageDecodeError(error.message)
  const revived = new Error(error.message)
  revived.name = error.name
  return revived
}

/**
 * Starts the estimator's worker threads. `analyze` hands a copy of the frame's bytes to a worker (the
 * copy is transferred, the caller's array is left as it was) and resolves with the numbers it sends back.
 */
export function createAgeEstimator(options: AgeEstimatorOptions = {}): AgeEstimator {
  const workerCount = Math.max(1, Math.floor(options.workers ?? 1))
  const maxQueue = Math.max(0, Math.floor(options.maxQueue ?? 8))
  const assets = options.assets ?? {}
  const workerUrl = options.workerUrl ?? defaultWorkerUrl()
  // Ten times a slow frame: long enough never to cut a real analysis, short enough that a wedged worker
  // (a pathological image, a wasm fault) does not hold its slot for good.
  const frameTimeoutMs = options.frameTimeoutMs ?? 15_000
  const queue: Job[] = []
  const slots: Slot[] = []
  let nextId = 1
  let closed = false
  let loadError: Error | undefined
  let modelRuntime: ModelRuntime | undefined

  let settleReady!: { resolve: () => void; reject: (error: Error) => void }
  const ready = new Promise<void>((resolve, reject) => (settleReady = { resolve, reject }))
  // Callers that never await `ready` must not crash the process with an unhandled rejection.
  ready.catch(() => {})

  function fail(error: Error) {
    loadError ??= error
    settleReady.reject(error)
    for (const job of queue.splice(0)) job.reject(error)
  }

  function spawn(): Slot {
    const worker = new Worker(workerUrl)
    const slot: Slot = { worker, ready: false }
    worker.onmessage = (event: MessageEvent<FromWorker>) => onMessage(slot, event.data)
    worker.onerror = (event: ErrorEvent) => onCrash(slot, event.message || 'estimator worker crashed')
    worker.postMessage({ type: 'init', assets, nice: options.nice ?? 0 } satisfies ToWorker)
    return slot
  }

  function onMessage(slot: Slot, message: FromWorker) {
    if (message.type === 'ready') {
      slot.ready = true
      modelRuntime ??= message.modelRuntime
      if (slots.every((s) => s.ready)) settleReady.resolve()
    } else if (message.type === 'failed') {
      fail(new EstimatorUnavailableError(`estimator failed to load: ${message.error.message}`))
    } else {
      const job = slot.job
      slot.job = undefined
      clearTimeout(slot.timer)
      if (job?.id === message.id) {
        if (message.type === 'result') job.resolve(message.analysis)
        else job.reject(revive(message.error))
      }
    }
    dispatch()
  }

  /** A worker that dies (e.g. wasm out of memory) loses its frame; a ready one is replaced, a loading one fails the pool. */
  function onCrash(slot: Slot, reason: string, error: Error = new Error(reason)) {
    clearTimeout(slot.timer)
    slot.job?.reject(error)
    slot.job = undefined
    slot.worker.terminate()
    const index = slots.indexOf(slot)
    if (closed || index < 0) return
    if (!slot.ready) return fail(new EstimatorUnavailableError(`estimator failed to load: ${reason}`))
    slots[index] = spawn()
  }

  function dispatch() {
    for (const slot of slots) {
      if (!slot.ready || slot.job) continue
      const job = queue.shift()
      if (!job) return
      slot.job = job
      slot.timer = setTimeout(() => onCrash(slot, 'estimator frame timed out', new EstimatorBusyError()), frameTimeoutMs)
      slot.worker.postMessage({ type: 'analyze', id: job.id, image: job.image, views: job.views } satisfies ToWorker, [job.image])
    }
  }

  for (let i = 0; i < workerCount; i++) slots.push(spawn())

  return {
    ready,
    get modelRuntime() {
      return modelRuntime
    },
    analyze(image: Uint8Array, views: AgeViews = 'both'): Promise<FrameAnalysis> {
      if (closed) return Promise.reject(new EstimatorUnavailableError('estimator is closed'))
      if (loadError) return Promise.reject(loadError)
      const busy = slots.filter((slot) => slot.job).length
      if (busy + queue.length >= workerCount + maxQueue) return Promise.reject(new EstimatorBusyError())
      // Always a copy: transferring the caller's own buffer would empty a Node Buffer that merely views a
      // larger pool, or any array the caller still uses. A frame's copy costs far less than its analysis.
      const buffer = new Uint8Array(image).buffer
      return new Promise<FrameAnalysis>((resolve, reject) => {
        queue.push({ id: nextId++, image: buffer, views, resolve, reject })
        dispatch()
      })
    },
    async close() {
      if (closed) return
      closed = true
      const error = new EstimatorUnavailableError('estimator is closed')
      settleReady.reject(error)
      for (const job of queue.splice(0)) job.reject(error)
      for (const slot of slots) {
        clearTimeout(slot.timer)
        slot.job?.reject(error)
        slot.job = undefined
        slot.worker.terminate()
      }
    },
  }
}
