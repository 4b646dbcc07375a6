import { describe, expect, test } from 'bun:test'
import type { FrameAnalysis } from '../../src/estimator/types.ts'
import { CHALLENGE_ORDERS, parseTurns, pickChallengeTurns } from '../../src/liveness/challenge.ts'
import { checkLiveness, type CapturedFrame } from '../../src/liveness/check.ts'
import { createReplayGuard } from '../../src/liveness/replay.ts'
import { turnOf } from '../../src/liveness/turn.ts'
import recorded from './fixtures/recorded-frames.json' with { type: 'json' }

/**
 * The pose, identity and repetition checks on what the real estimator said of real camera frames
 * (recorded by test/liveness/record-frames.ts from shared/liveness): a woman turning her head, a man
 * looking straight, and a portrait photo held still and waved about.
 */
const frames = recorded as unknown as Record<string, FrameAnalysis>
const female = (name: string) => frames[`intel-female-headturn/${name}`]!
const FRONTAL = ['frame_0010.jpg', 'frame_0020.jpg']
const LEFT = ['frame_0015.jpg', 'frame_0016.jpg']
const RIGHT = ['frame_0024.jpg', 'frame_0025.jpg']
const BACK = ['frame_0049.jpg', 'frame_0039.jpg']

let digests = 0
const shot = (analysis: FrameAnalysis, phase: number, digest = `d${digests++}`): CapturedFrame => ({ analysis, phase, digest })
/** A capture as the page takes it: two frames under each prompt. */
function capture(phases: FrameAnalysis[][]): CapturedFrame[] {
  return phases.flatMap((group, phase) => group.map((analysis) => shot(analysis, phase)))
}
const femaleCapture = (...groups: string[][]) => capture(groups.map((group) => group.map(female)))

describe('turnOf reads the head turn from the landmarks', () => {
  test('frontal frames read near 0, her left turn positive, her right turn negative', () => {
    for (const name of FRONTAL) expect(Math.abs(turnOf(female(name).faces[0]!.landmarks!))).toBeLessThan(0.1)
    for (const name of LEFT) expect(turnOf(female(name).faces[0]!.landmarks!)).toBeGreaterThan(0.45)
    for (const name of RIGHT) expect(turnOf(female(name).faces[0]!.landmarks!)).toBeLessThan(-0.6)
  })

  test('a photo waved and rotated in front of the camera never reads as a turn', () => {
    const waved = Object.entries(frames).filter(([key]) => key.startsWith('spoof-gracehopper-waved/'))
    expect(waved.length).toBeGreaterThanOrEqual(8)
    for (const [, analysis] of waved) expect(Math.abs(turnOf(analysis.faces[0]!.landmarks!))).toBeLessThan(0.05)
  })

  test('moving, rotating and scaling the image does not change the reading (only a solid head turning does)', () => {
    const landmarks = female('frame_0015.jpg').faces[0]!.landmarks!
    const angle = 0.4
    const move = ([x, y]: [number, number]): [number, number] => [
      1.7 * (x * Math.cos(angle) - y * Math.sin(angle)) + 90,
      1.7 * (x * Math.sin(angle) + y * Math.cos(angle)) - 40,
    ]
    const moved = Object.fromEntries(Object.entries(landmarks).map(([key, point]) => [key, move(point)])) as typeof landmarks
    expect(turnOf(moved)).toBeCloseTo(turnOf(landmarks), 6)
  })
})

describe('checkLiveness', () => {
  test('a live person who turns left then right, as asked, passes with the frontal frames kept for the age', () => {
    const result = checkLiveness(femaleCapture(FRONTAL, LEFT, RIGHT, BACK), ['left', 'right'])
    expect(result.live).toBe(true)
    if (result.live) expect(result.frontal.length).toBe(4)
  })

  test('the same recording answering the other order fails (a recording follows one challenge only)', () => {
    expect(checkLiveness(femaleCapture(FRONTAL, LEFT, RIGHT, BACK), ['right', 'left'])).toMatchObject({ live: false, failure: 'wrong_turn' })
    expect(checkLiveness(femaleCapture(FRONTAL, LEFT, RIGHT, BACK), ['left', 'right', 'left'])).toMatchObject({ live: false, failure: 'wrong_turn' })
  })

  test('a turn made before its prompt was shown fails: a recording does not wait for the page', () => {
    // Both turns already under the "look straight" prompt, then straight under the turn prompts.
    const early = capture([[female(FRONTAL[0]!), female(LEFT[0]!), female(RIGHT[0]!)], [female(FRONTAL[1]!)], [female(BACK[0]!)], [female(BACK[1]!)]])
    expect(checkLiveness(early, ['left', 'right'])).toMatchObject({ live: false, failure: 'wrong_turn' })
  })

  test('a slow visitor who turns late, still in order, passes', () => {
    const late = femaleCapture(FRONTAL, [FRONTAL[1]!, LEFT[0]!], [LEFT[1]!, RIGHT[0]!], [RIGHT[1]!, ...BACK])
    expect(checkLiveness(late, ['left', 'right']).live).toBe(true)
  })

  test('one still photo repeated fails as repeated frames, before anything else', () => {
    const still = frames['spoof-gracehopper-still/frame_0001.jpg']!
    const repeated = [0, 0, 1, 1, 2, 2, 3, 3].map((phase) => shot(still, phase, 'same-bytes'))
    expect(checkLiveness(repeated, ['left', 'right'])).toEqual({ live: false, failure: 'repeated_frames' })
  })

  test('the same picture re-encoded (new bytes, identical landmarks) fails as still', () => {
    const still = frames['spoof-gracehopper-still/frame_0001.jpg']!
    expect(checkLiveness(capture([[still, still], [still, still], [still, still], [still, still]]), ['left', 'right'])).toEqual({ live: false, failure: 'still' })
  })

  test('a photo moved and rotated in the image plane fails: it never turns', () => {
    const waved = Object.entries(frames).filter(([key]) => key.startsWith('spoof-gracehopper-waved/')).map(([, analysis]) => analysis)
    const attack = capture([waved.slice(0, 2), waved.slice(2, 4), waved.slice(4, 6), waved.slice(6, 8)])
    expect(checkLiveness(attack, ['left', 'right'])).toEqual({ live: false, failure: 'no_turn', turns: [] })
  })

  test('a live person who only looks straight fails: a real face is not enough without the turns', () => {
    const male = Object.entries(frames).filter(([key]) => key.startsWith('intel-male-frontal/')).map(([, analysis]) => analysis)
    expect(checkLiveness(capture([male.slice(0, 2), male.slice(2, 4), male.slice(4, 6)]), ['left'])).toMatchObject({ live: false, failure: 'no_turn' })
  })

  test("someone else's face in the frontal frames fails: the turns and the age must come from one person", () => {
    const male = frames['intel-male-frontal/frame_0001.jpg']!
    const swapped = capture([[male, frames['intel-male-frontal/frame_0013.jpg']!], LEFT.map(female), RIGHT.map(female), BACK.map(female)])
    expect(checkLiveness(swapped, ['left', 'right'])).toEqual({ live: false, failure: 'face_changed' })
  })

  test('two faces in any frame fail', () => {
    const two = { ...female(LEFT[0]!), faces: [...female(LEFT[0]!).faces, ...female(FRONTAL[0]!).faces] }
    const result = checkLiveness(capture([FRONTAL.map(female), [two, female(LEFT[1]!)], RIGHT.map(female), BACK.map(female)]), ['left', 'right'])
    expect(result).toEqual({ live: false, failure: 'several_faces' })
  })

  test('frames without a face beyond the allowance fail as no_face', () => {
    const empty: FrameAnalysis = { width: 640, height: 480, faces: [], ms: 0 }
    expect(checkLiveness(capture([[empty, empty], [female(LEFT[0]!), empty], [female(RIGHT[0]!), empty], [empty, empty]]), ['left', 'right'])).toEqual({ live: false, failure: 'no_face' })
  })

  test('turns without a frontal frame leave nothing to judge the age on', () => {
    // Captured from the first phase on, the left turn came before the prompt asked for it: that fails first.
    expect(checkLiveness(femaleCapture(LEFT, RIGHT), ['left', 'right'])).toEqual({ live: false, failure: 'wrong_turn', turns: ['left', 'right'] })
    expect(checkLiveness(capture([[], LEFT.map(female), RIGHT.map(female), []]), ['left', 'right'])).toMatchObject({ live: false, failure: 'no_frontal' })
  })
})

describe('the challenge and the replay guard', () => {
  test('turns are chosen from the fixed orders; a picker decides which', () => {
    expect(pickChallengeTurns(() => 0)).toEqual(['left', 'right'])
    expect(pickChallengeTurns(() => 3)).toEqual(['right', 'left', 'right'])
    const seen = new Set(Array.from({ length: 200 }, () => pickChallengeTurns().join(',')))
    expect(seen.size).toBe(CHALLENGE_ORDERS.length)
  })

  test('stored turns parse back, and anything else is refused', () => {
    expect(parseTurns('left,right')).toEqual(['left', 'right'])
    expect(parseTurns('left,up')).toBeUndefined()
    expect(parseTurns('')).toBeUndefined()
  })

  test('a frame digest seen in another capture is reported; it is forgotten after the time to live', () => {
    const guard = createReplayGuard({ ttlMs: 1000, maxEntries: 10 })
    expect(guard.anySeen(['a', 'b'], 0)).toBe(false)
    expect(guard.anySeen(['c', 'b'], 500)).toBe(true)
    expect(guard.anySeen(['a'], 1200)).toBe(false)
  })

  test('the guard holds at most maxEntries digests', () => {
    const guard = createReplayGuard({ ttlMs: 60_000, maxEntries: 3 })
    guard.anySeen(['1', '2', '3', '4'], 0)
    expect(guard.anySeen(['1'], 1)).toBe(false)
    expect(guard.anySeen(['4'], 2)).toBe(true)
  })
})
