import type { EngineAssets } from './human-engine.ts'
import type { AgeViews, FrameAnalysis, ModelRuntime } from './types.ts'

/** Messages between the pool (request thread) and an estimator worker. Only numbers come back. */
export type ToWorker = { type: 'init'; assets: EngineAssets; nice: number } | { type: 'analyze'; id: number; image: ArrayBuffer; views: AgeViews }

export type SerializedError = { name: string; message: string }

export type FromWorker =
  | { type: 'ready'; loadMs: number; warmUpMs: number; modelRuntime: ModelRuntime }
  | { type: 'failed'; error: SerializedError }
  | { type: 'result'; id: number; analysis: FrameAnalysis }
  | { type: 'error'; id: number; error: SerializedError }
