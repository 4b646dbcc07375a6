import { beforeAll, describe, expect, test } from 'bun:test'
import type { HumanEngine } from '../../src/estimator/human-engine.ts'
import { sharedHumanEngine } from '../estimator/shared-engine.ts'
import type { FrameAnalysis } from '../../src/estimator/types.ts'
import { createReplayGuard } from '../../src/liveness/replay.ts'
import { seededRandom } from '../../src/lib/seeded-random.ts'
import { clipFrame, hasLivenessClips } from './clips.ts'
import { retouch } from './warp.ts'

/**
 * The content replay guard on what the real estimator says of real camera frames (shared/liveness): a
 * capture sent again re-encoded, noised, resized or shifted is refused; the same person captured at
 * other moments is not.
 */
/** The guard's projection is drawn from this seed, so that two runs agree (docs/decisions.md has the guard measured over 2,000 drawn at random). */
const SEED = 20261127
const frame = (n: number) => `frame_${String(n).padStart(4, '0')}.jpg`
const CAPTURE = [10, 11, 14, 15, 24, 25, 16, 17, 20, 21].map(frame)
// Other pictures of the same woman: the frames between and after those of CAPTURE.
const RECAPTURE = [9, 12, 13, 18, 19, 22, 23, 26, 27, 28].map(frame)

let engine: HumanEngine
const analyse = async (images: Uint8Array[]) => {
  const analyses: FrameAnalysis[] = []
  for (const image of images) analyses.push(await engine.analyzeImage(image, 'original'))
  return analyses
}
let digestCount = 0
const digests = (count: number) => Array.from({ length: count }, () => `bytes-${digestCount++}`)

describe.skipIf(!hasLivenessClips)('the content replay guard on real frames', () => {
  beforeAll(async () => {
    engine = await sharedHumanEngine()
  }, 180_000)

  const original = () => CAPTURE.map((name) => clipFrame('intel-female-headturn', name))
  const tampers: [string, (image: Uint8Array, i: number) => Uint8Array][] = [
    ['re-encoded at quality 70', (image) => retouch(image, { quality: 70 })],
    ['1% of pixels replaced by noise', (image, i) => retouch(image, { noise: 0.01, seed: i + 1 })],
    ['1% larger', (image) => retouch(image, { scale: 1.01 })],
    ['shifted 3 px and re-encoded', (image) => retouch(image, { shift: [3, -2], quality: 85 })],
  ]

  for (const [name, tamper] of tampers) {
    test(`replay with frames ${name} is refused`, async () => {
      const guard = createReplayGuard({ ttlMs: 60_000, maxEntries: 1000, random: seededRandom(SEED) })
      expect(guard.replayed(digests(CAPTURE.length), await analyse(original()), 0)).toBe(false)
      expect(guard.replayed(digests(CAPTURE.length), await analyse(original().map(tamper)), 1000)).toBe(true)
    }, 60_000)
  }

  test('a genuine re-capture of the same person at other moments is not a replay (two clips)', async () => {
    const guard = createReplayGuard({ ttlMs: 60_000, maxEntries: 1000, random: seededRandom(SEED) })
    expect(guard.replayed(digests(10), await analyse(original()), 0)).toBe(false)
    expect(guard.replayed(digests(10), await analyse(RECAPTURE.map((name) => clipFrame('intel-female-headturn', name))), 1000)).toBe(false)
    const sideways = (from: number) => Array.from({ length: 10 }, (_, i) => clipFrame('headtrackr-capture4-sideways', frame(from + i)))
    expect(guard.replayed(digests(10), await analyse(sideways(10)), 2000)).toBe(false)
    expect(guard.replayed(digests(10), await analyse(sideways(40)), 3000)).toBe(false)
  }, 60_000)

  test('the same bytes again are refused, and a capture is forgotten after the time to live', async () => {
    const guard = createReplayGuard({ ttlMs: 1000, maxEntries: 1000, random: seededRandom(SEED) })
    const analyses = await analyse(original().slice(0, 4))
    expect(guard.replayed(['a', 'b', 'c', 'd'], analyses, 0)).toBe(false)
    expect(guard.replayed(['x', 'b'], [], 500)).toBe(true)
    expect(guard.replayed(['e', 'f', 'g', 'h'], analyses, 2000)).toBe(false)
  }, 60_000)

  test('the guard holds at most maxEntries faces: the oldest are forgotten first', async () => {
    const guard = createReplayGuard({ ttlMs: 60_000, maxEntries: 4, random: seededRandom(SEED) })
    const analyses = await analyse(original().slice(0, 4))
    expect(guard.replayed(digests(4), analyses, 0)).toBe(false)
    expect(guard.replayed(digests(4), analyses, 1)).toBe(true)
    // Four other faces push the first four out.
    expect(guard.replayed(digests(4), await analyse(RECAPTURE.slice(0, 4).map((name) => clipFrame('intel-female-headturn', name))), 2)).toBe(false)
    expect(guard.replayed(digests(4), analyses, 3)).toBe(false)
  }, 60_000)
})
