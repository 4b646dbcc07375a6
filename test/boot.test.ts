import { expect, test } from 'bun:test'
import { startServices } from '../src/boot.ts'
import { jsonLogger } from '../src/lib/log.ts'
import { testConfig } from './helpers.ts'

test('a server stopped while the face models still load logs no error (the models did not fail to load: they were not given the time)', async () => {
  const lines: string[] = []
  const services = await startServices(testConfig({ DATABASE_URL: 'memory:', FACE_CHECK: '1' }), { log: jsonLogger((line) => lines.push(line)), estimator: true })
  expect(services.deps.estimator).toBeDefined()
  const ready = services.deps.estimator!.ready.catch((cause: unknown) => cause)
  await services.close()
  // The models had no time to load: their promise fails, and that is not reported as the face check failing.
  expect(await ready).toBeInstanceOf(Error)
  await Bun.sleep(10)
  expect(lines.filter((line) => line.includes('face_check_unavailable'))).toEqual([])
})
