/**
 * Benchmark of the face age estimator's worker pool (src/estimator/pool.ts).
 *
 *   bun bench/face-estimator.ts                          # workers=1, then workers=2; 24 concurrent frames
 *   bun bench/face-estimator.ts --workers 2 --frames 48  # one pool size only
 *   bun bench/face-estimator.ts --workers 1 --passes 10  # per-frame latency on one core, more samples
 *   bun bench/face-estimator.ts --workers 1 --views original  # a live capture's frame: one view of the face
 *
 * Frames: the six group photos shipped by @vladmandic/face-api (demo/sample*.jpg) and the two single-face
 * close-ups the tests cut from them (test/estimator/sample-photos.ts), encoded in memory; nothing is
 * written to disk. For each pool size: model load (createAgeEstimator until `ready`, which includes the
 * workers' warm-up frame), 2 warm-up frames, sequential latency (caller-side round trip, --passes (2) over
 * the frames), then N frames submitted at once (maxQueue = N, so none is refused). A 10 ms timer records
 * the longest event-loop gap while analyses run; RSS (the whole process, workers included) is sampled
 * every 20 ms; "per worker" is the growth over the RSS before load, divided by the workers. The engine is
 * whatever the pool loads (src/estimator/human-engine.ts: Human's face models and the full-precision
 * age model); a close-up's "in-worker" time is one frame's
 * cost on one core. `--views` chooses what the age model reads: `both` (a still photo: the face and its
 * mirror image, two passes; the default) or `original` (a frame of a live capture, one pass). Last, a workers=1 / maxQueue=2 pool gets 10 frames at once to show the queue bound.
 */
import { createAgeEstimator } from '../src/estimator/pool.ts'
import { EstimatorBusyError, type AgeEstimator, type AgeViews } from '../src/estimator/types.ts'
import { closeUpJpeg, readSample } from '../test/estimator/sample-photos.ts'

function arg(name: string): number | undefined {
  const i = process.argv.indexOf(`--${name}`)
  const value = i >= 0 ? Number(process.argv[i + 1]) : undefined
  if (value !== undefined && !(Number.isInteger(value) && value > 0)) throw new Error(`--${name} needs a positive integer`)
  return value
}
const WORKER_COUNTS = arg('workers') ? [arg('workers')!] : [1, 2]
const FRAMES = arg('frames') ?? 24
const SEQ_PASSES = arg('passes') ?? 2
const viewsArg = process.argv.includes('--views') ? process.argv[process.argv.indexOf('--views') + 1] : 'both'
if (viewsArg !== 'both' && viewsArg !== 'original' && viewsArg !== 'mirror') throw new Error('--views is both, original or mirror')
const VIEWS: AgeViews = viewsArg

const groups = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => readSample(`sample${n}.jpg`)))
// closeUpJpeg returns a Node Buffer, whose .slice() is a view: copy into plain Uint8Arrays instead.
const closeUps = (await Promise.all([closeUpJpeg('olderLooking'), closeUpJpeg('youngerLooking')])).map((b) => new Uint8Array(b))
const all = [...groups, ...closeUps]

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0)
const ms = (x: number) => x.toFixed(0)
function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN
}
const lat = (v: number[]) => `${ms(pct(v, 50))} / ${ms(pct(v, 95))} / ${ms(Math.max(...v))}`

let peakRss = 0
const sampleRss = () => void (peakRss = Math.max(peakRss, process.memoryUsage().rss))
const rssTimer = setInterval(sampleRss, 20)

/** Longest gap between ticks of a 10 ms timer while `work` runs (the gap up to the end counts too). */
async function withLoopGap<T>(work: () => Promise<T>): Promise<{ result: T; maxGap: number }> {
  let last = performance.now()
  let maxGap = 0
  const timer = setInterval(() => {
    const now = performance.now()
    maxGap = Math.max(maxGap, now - last)
    last = now
  }, 10)
  try {
    const result = await work()
    return { result, maxGap: Math.max(maxGap, performance.now() - last) }
  } finally {
    clearInterval(timer)
  }
}

/** One analysis, timed from the caller; each call gets its own copy (the pool transfers the buffer). */
async function timed(estimator: AgeEstimator, frame: Uint8Array) {
  const started = performance.now()
  const analysis = await estimator.analyze(new Uint8Array(frame), VIEWS)
  return { latency: performance.now() - started, inside: analysis.ms, faces: analysis.faces.length }
}

async function settle() {
  Bun.gc(true)
  await Bun.sleep(500)
  Bun.gc(true)
  return process.memoryUsage().rss
}

type Column = Record<string, string>
async function runPool(workers: number): Promise<Column> {
  const col: Column = {}
  peakRss = await settle()
  const before = peakRss
  col['RSS before load, after GC (MiB)'] = mib(peakRss)
  const loadStart = performance.now()
  const estimator = createAgeEstimator({ workers, maxQueue: FRAMES })
  await estimator.ready
  col['model load, to ready (ms)'] = ms(performance.now() - loadStart)
  for (const frame of all.slice(0, 2)) await estimator.analyze(new Uint8Array(frame))

  for (const [label, frames] of [['group photos', groups], ['close-ups', closeUps]] as const) {
    const { result, maxGap } = await withLoopGap(async () => {
      const runs: Awaited<ReturnType<typeof timed>>[] = []
      const started = performance.now()
      for (let pass = 0; pass < SEQ_PASSES; pass++) for (const frame of frames) runs.push(await timed(estimator, frame))
      return { runs, wall: performance.now() - started }
    })
    const { runs, wall } = result
    col[`seq ${label}: n`] = `${runs.length} (faces ${Math.min(...runs.map((r) => r.faces))}-${Math.max(...runs.map((r) => r.faces))})`
    col[`seq ${label}: p50/p95/max (ms)`] = lat(runs.map((r) => r.latency))
    col[`seq ${label}: in-worker p50 (ms)`] = ms(pct(runs.map((r) => r.inside), 50))
    col[`seq ${label}: frames/s`] = (runs.length / (wall / 1000)).toFixed(2)
    col[`seq ${label}: max loop gap (ms)`] = maxGap.toFixed(1)
  }

  const { result, maxGap } = await withLoopGap(async () => {
    const started = performance.now()
    const runs = await Promise.all(Array.from({ length: FRAMES }, (_, i) => timed(estimator, all[i % all.length]!)))
    return { runs, wall: performance.now() - started }
  })
  col[`concurrent ${FRAMES}: wall (ms)`] = ms(result.wall)
  col[`concurrent ${FRAMES}: frames/s`] = (FRAMES / (result.wall / 1000)).toFixed(2)
  col[`concurrent ${FRAMES}: p50/p95/max (ms)`] = lat(result.runs.map((r) => r.latency))
  col[`concurrent ${FRAMES}: max loop gap (ms)`] = maxGap.toFixed(1)

  sampleRss()
  col['peak RSS (MiB)'] = mib(peakRss)
  col['peak RSS over before load, per worker (MiB)'] = mib((peakRss - before) / workers)
  await estimator.close()
  col['RSS after close + GC (MiB)'] = mib(await settle())
  return col
}

console.log(`bun ${Bun.version}, ${process.platform}/${process.arch}, ${navigator.hardwareConcurrency} cores; ` +
  `frames: ${groups.length} group photos + ${closeUps.length} close-ups; warm-up 2 frames per pool`)
const columns: [string, Column][] = []
for (const workers of WORKER_COUNTS) {
  process.stdout.write(`running workers=${workers}...\n`)
  columns.push([`workers=${workers}`, await runPool(workers)])
}

// Queue bound: one busy worker + 2 queued are accepted, the other 7 refused at once.
const bounded = createAgeEstimator({ workers: 1, maxQueue: 2 })
await bounded.ready
const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => bounded.analyze(new Uint8Array(groups[0]!))))
const resolved = outcomes.filter((o) => o.status === 'fulfilled').length
const busy = outcomes.filter((o) => o.status === 'rejected' && o.reason instanceof EstimatorBusyError).length
await bounded.close()
clearInterval(rssTimer)

const rows = Object.keys(columns[0]![1])
const widths = [Math.max(...rows.map((r) => r.length)), ...columns.map(([h, c]) => Math.max(h.length, ...Object.values(c).map((v) => v.length)))]
const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')
console.log(`\n${line(['metric', ...columns.map(([h]) => h)])}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`)
for (const row of rows) console.log(line([row, ...columns.map(([, c]) => c[row] ?? '')]))
const other = outcomes.length - resolved - busy
console.log(`\nqueue bound (workers=1, maxQueue=2, 10 at once): ${resolved} resolved, ${busy} EstimatorBusyError${other ? `, ${other} other errors` : ''}`)
console.log(`RSS at exit (all pools closed, after GC): ${mib(await settle())} MiB`)
