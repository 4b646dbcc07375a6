import { expect, test } from 'bun:test'
import { createAgeEstimator } from '../../src/estimator/pool.ts'
import { EstimatorBusyError } from '../../src/estimator/types.ts'

/** The pool's failure paths, with a scripted worker in place of the model (test/estimator/fixtures). */
const workerUrl = new URL('./fixtures/scripted-worker.ts', import.meta.url)
const frame = (script: string) => new TextEncoder().encode(script)

test('a frame that never finishes is given up after frameTimeoutMs as busy, and its worker is replaced', async () => {
  const estimator = createAgeEstimator({ workerUrl, frameTimeoutMs: 300 })
  try {
    await estimator.ready
    const started = performance.now()
    const hung = await estimator.analyze(frame('hang')).catch((error) => error)
    expect(hung).toBeInstanceOf(EstimatorBusyError)
    expect(performance.now() - started).toBeLessThan(2_000)
    // The replacement worker serves the next frame.
    expect(await estimator.analyze(frame('ok'))).toEqual({ width: 1, height: 1, faces: [], ms: 0 })
  } finally {
    await estimator.close()
  }
})

test('a worker that crashes loses only its frame; the frames queued behind it are served by its replacement', async () => {
  const estimator = createAgeEstimator({ workerUrl, maxQueue: 4 })
  try {
    await estimator.ready
    const results = await Promise.allSettled([estimator.analyze(frame('crash')), estimator.analyze(frame('ok')), estimator.analyze(frame('ok'))])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled'])
    expect(await estimator.analyze(frame('ok'))).toMatchObject({ faces: [] })
  } finally {
    await estimator.close()
  }
})
