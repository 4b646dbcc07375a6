import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../../src/cli/run.ts'
import { DEFAULT_FACE_POLICY } from '../../src/liveness/face-policy.ts'
import { testConfig } from '../helpers.ts'
import { closeUpJpeg } from './sample-photos.ts'

/**
 * `ofage estimator eval` on a tiny labelled set made here: two close-ups with labels we chose (named the
 * UTKFace way, age_gender_race_…, so that the group table appears) and a photo without a face. It checks
 * the tool, not the model: the ages are labels for the test only.
 */
const dataset = mkdtempSync(join(tmpdir(), 'ofage-eval-'))

beforeAll(async () => {
  writeFileSync(join(dataset, '30_0_0_a.jpg'), await closeUpJpeg('olderLooking'))
  writeFileSync(join(dataset, '16_1_1_b.jpg'), await closeUpJpeg('youngerLooking'))
  writeFileSync(join(dataset, 'blank.jpg'), new Uint8Array(await Bun.file(join(dataset, '30_0_0_a.jpg')).arrayBuffer()).slice(0, 100))
  writeFileSync(join(dataset, 'labels.csv'), 'path,age\n30_0_0_a.jpg,30\n16_1_1_b.jpg,16\nblank.jpg,40\n')
})
afterAll(() => rmSync(dataset, { recursive: true, force: true }))

async function cli(...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const status = await runCli(argv, testConfig(), { out: (t) => out.push(t), err: (t) => err.push(t) })
  return { status, out: out.join('\n'), err: err.join('\n') }
}

test('without --buffers it reports the live check\'s default policy at 18, 21 and 25, with groups', async () => {
  const result = await cli('estimator', 'eval', '--dataset', dataset, '--json', '--workers', '2')
  expect(result.status).toBe(0)
  const report = JSON.parse(result.out)
  expect(report).toMatchObject({ mode: 'policy', minFaceScore: DEFAULT_FACE_POLICY.minFaceScore, samples: 3, estimated: 2, noSingleFace: 1 })
  // docs/accuracy.md: "11 years at 18, 9 at 21 and 12 at 25, which gives cut-offs of 29, 30 and 37".
  expect(report.decisions.map((row: { threshold: number; buffer: number; cutoff: number }) => [row.threshold, row.buffer, row.cutoff])).toEqual([
    [18, 11, 29],
    [21, 9, 30],
    [25, 12, 37],
  ])
  const [at18] = report.decisions
  expect(at18.falseAccepts.fiveYearsUnder).toMatchObject({ from: 13, to: 17, n: 1 })
  expect(at18.falseRejects.sevenYearsOver).toMatchObject({ from: 25, to: null, n: 1 })
  expect(report.groups).toHaveLength(3)
  expect(report.groups[0].rows.find((row: { label: string }) => row.label === 'black').falseAccepts.n).toBe(1)
}, 120_000)

test('with --buffers it keeps the grid, and prints text by default', async () => {
  const grid = await cli('estimator', 'eval', '--dataset', dataset, '--thresholds', '18', '--buffers', '0,7', '--json')
  expect(grid.status).toBe(0)
  expect(JSON.parse(grid.out)).toMatchObject({ mode: 'grid', decisions: [{ buffer: 0 }, { buffer: 7 }] })
  const text = await cli('estimator', 'eval', '--dataset', dataset, '--thresholds', '18', '--buffers', '7')
  expect(text.out).toContain('mean absolute error')
  expect(text.out).toContain('threshold 18, buffer 7, cut-off 25')
  expect(text.out).toContain('By gender and group')
}, 120_000)

test('--help lists the JSON fields', async () => {
  const help = await cli('estimator', 'eval', '--help')
  expect(help.status).toBe(0)
  for (const field of ['fiveYearsUnder', 'nearThreshold', 'sevenYearsOver', 'twelveYearsOver', 'groups']) expect(help.out).toContain(field)
})

test('a missing dataset or a bad list is a clear error', async () => {
  expect((await cli('estimator', 'eval', '--dataset', join(dataset, 'nope'))).err).toContain('labels.csv')
  expect((await cli('estimator', 'eval', '--dataset', dataset, '--buffers', 'seven')).status).toBe(2)
  expect((await cli('estimator', 'eval')).status).toBe(2)
  expect((await cli('estimator', 'eval', '--dataset', dataset, '--workers', '0')).status).toBe(2)
})
