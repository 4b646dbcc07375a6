import { createHumanEngine, type HumanEngine } from '../../src/estimator/human-engine.ts'

let shared: Promise<HumanEngine> | undefined

/** Every URL the shared engine fetched while it loaded its models (all must be local files). */
export const fetchedWhileLoading: string[] = []

/**
 * One Human engine for every test file of a test process that runs the estimator in-process. tfjs keeps one
 * global engine per process: a second Human made after another test file closed the first fails
 * mid-inference ("info.backend" of a disposed tensor). It did when bun ran test/liveness/attacks.test.ts
 * and replay.test.ts in one process, and again in the full run, where test/estimator/estimator.test.ts
 * closed its own engine before the liveness files made theirs. Never closed: it ends with the process.
 */
export function sharedHumanEngine(): Promise<HumanEngine> {
  shared ??= loadRecordingFetches()
  return shared
}

async function loadRecordingFetches(): Promise<HumanEngine> {
  const realFetch = globalThis.fetch
  globalThis.fetch = Object.assign((input: string | URL | Request, init?: RequestInit) => {
    fetchedWhileLoading.push(input instanceof Request ? input.url : String(input))
    return realFetch(input, init)
  }, realFetch)
  try {
    return await createHumanEngine()
  } finally {
    globalThis.fetch = realFetch
  }
}
