import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../../src/cli.ts'
import { testConfig } from '../helpers.ts'
import { closeUpJpeg } from './sample-photos.ts'

/**
 * `ofage estimator eval` on a tiny labelled set made here: two close-ups with labels we chose and a
 * photo without a face. It checks the tool, not the model: the ages are labels for the test only.
 */
const dataset = mkdtempSync(join(tmpdir(), 'ofage-eval-'))

beforeAll(async () => {
  writeFileSync(join(dataset, 'a.jpg'), await closeUpJpeg('olderLooking'))
  writeFileSync(join(dataset, 'b.jpg'), await closeUpJpeg('youngerLooking'))
  writeFileSync(join(dataset, 'blank.jpg'), new Uint8Array(await Bun.file(join(dataset, 'a.jpg')).arrayBuffer()).slice(0, 100))
  writeFileSync(join(dataset, 'labels.csv'), 'path,age\na.jpg,30\nb.jpg,16\nblank.jpg,40\n')
})
afterAll(() => rmSync(dataset, { recursive: true, force: true }))

async function cli(...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const status = await runCli(argv, testConfig(), { out: (t) => out.push(t), err: (t) => err.push(t) })
  return { status, out: out.join('\n'), err: err.join('\n') }
}

test('prints MAE by band and false-accept rates; a photo without one face is counted apart', async () => {
  const result = await cli('estimator', 'eval', '--dataset', dataset, '--thresholds', '18', '--buffers', '0,7', '--json')
  expect(result.status).toBe(0)
  const evaluation = JSON.parse(result.out)
  expect(evaluation).toMatchObject({ samples: 3, estimated: 2, noSingleFace: 1 })
  expect(evaluation.rates).toHaveLength(2)
  // The 16-year-old label: a false accept exactly when the estimate clears the cut-off.
  for (const row of evaluation.rates) expect(row.under).toBe(1)
  const text = await cli('estimator', 'eval', '--dataset', dataset, '--thresholds', '18', '--buffers', '7')
  expect(text.out).toContain('mean absolute error')
  expect(text.out).toContain('13-17')
}, 120_000)

test('a missing dataset or a bad list is a clear error', async () => {
  expect((await cli('estimator', 'eval', '--dataset', join(dataset, 'nope'))).err).toContain('labels.csv')
  expect((await cli('estimator', 'eval', '--dataset', dataset, '--buffers', 'seven')).status).toBe(2)
  expect((await cli('estimator', 'eval')).status).toBe(2)
})
