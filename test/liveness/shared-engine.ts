import { createHumanEngine, type HumanEngine } from '../../src/estimator/human-engine.ts'

let shared: Promise<HumanEngine> | undefined

/**
 * One Human engine for the liveness tests of a test process. tfjs keeps one global engine per process: a
 * second Human made after another test file closed the first failed mid-inference ("info.backend" of a
 * disposed tensor) when bun ran test/liveness/attacks.test.ts and replay.test.ts in one process. Never
 * closed: it ends with the process.
 */
export function sharedHumanEngine(): Promise<HumanEngine> {
  shared ??= createHumanEngine()
  return shared
}
