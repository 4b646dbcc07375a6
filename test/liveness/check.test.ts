import { describe, expect, test } from 'bun:test'
import type { FrameAnalysis, MeshPoint } from '../../src/estimator/types.ts'
import { CHALLENGE_SEQUENCES, challengeDuration, formatChallenge, HOLD_MS, parseChallenge, pickChallenge, type Challenge, type Pose } from '../../src/liveness/challenge.ts'
import { checkLiveness, DEFAULT_LIVENESS_POLICY, type CapturedFrame } from '../../src/liveness/check.ts'
import { decideLiveFaceCheck } from '../../src/liveness/face-policy.ts'
import { fitRigid } from '../../src/liveness/rigid-fit.ts'
import { turnOf } from '../../src/liveness/turn.ts'
import { challengeFor, WARP_DIRECTIONS, WARP_PHOTOS, WARP_SETTINGS, warpKey } from './clips.ts'
import recorded from './fixtures/recorded-frames.json' with { type: 'json' }

/**
 * The pose, rigidity, identity and repetition checks on what the real estimator said of real camera
 * frames (recorded by test/liveness/record-frames.ts from shared/liveness): a woman turning her head, a
 * man looking straight, a portrait photo held still and waved about, and that photo (and frontal frames
 * of the two people) with the nose region slid in 2D, the cheapest attack on a head-turn check.
 */
const frames = recorded as unknown as Record<string, FrameAnalysis>
const female = (name: string) => frames[`intel-female-headturn/${name}`]!
const FRONTAL = ['frame_0010.jpg', 'frame_0011.jpg']
const LEFT = ['frame_0014.jpg', 'frame_0015.jpg']
const LEFT_AGAIN = ['frame_0016.jpg', 'frame_0017.jpg']
const RIGHT = ['frame_0024.jpg', 'frame_0025.jpg']
const BACK = ['frame_0020.jpg', 'frame_0021.jpg']
const LEFT_RIGHT_LEFT = challengeFor(['left', 'right', 'left'])

let digests = 0
const shot = (analysis: FrameAnalysis, phase: number, digest = `d${digests++}`): CapturedFrame => ({ analysis, phase, digest })
/** A capture as the page takes it: two frames under each prompt. */
function capture(phases: FrameAnalysis[][]): CapturedFrame[] {
  return phases.flatMap((group, phase) => group.map((analysis) => shot(analysis, phase)))
}
const femaleCapture = (...groups: string[][]) => capture(groups.map((group) => group.map(female)))
const genuine = () => femaleCapture(FRONTAL, LEFT, RIGHT, LEFT_AGAIN, BACK)
const face = (analysis: FrameAnalysis) => analysis.faces[0]!
const interocular = (analysis: FrameAnalysis) => {
  const { leftEye, rightEye } = face(analysis).landmarks!
  return Math.hypot(leftEye[0] - rightEye[0], leftEye[1] - rightEye[1])
}

describe('fitRigid reads the pose of a solid head from the mesh', () => {
  const reference = face(female(FRONTAL[0]!)).mesh!
  /** The reference's points turned by a known rotation and seen by an orthographic camera. */
  function rotated(yawDeg: number, pitchDeg: number): MeshPoint[] {
    const [yaw, pitch] = [(-yawDeg * Math.PI) / 180, (pitchDeg * Math.PI) / 180]
    const centre = [0, 1, 2].map((axis) => reference.reduce((sum, point) => sum + point[axis]!, 0) / reference.length)
    return reference.map(([x, y, z]) => {
      const [cx, cy, cz] = [x - centre[0]!, y - centre[1]!, z - centre[2]!]
      // About the vertical axis (x' = cos·x + sin·z), then about the horizontal one (y' = cos·y + sin·z).
      const x1 = Math.cos(yaw) * cx + Math.sin(yaw) * cz
      const z1 = -Math.sin(yaw) * cx + Math.cos(yaw) * cz
      const y2 = Math.cos(pitch) * cy + Math.sin(pitch) * z1
      return [x1 + 300, y2 + 200, 0]
    })
  }

  test('a rotation applied to the mesh is read back: yaw, pitch and no residual', () => {
    for (const [yaw, pitch] of [[25, 0], [-30, 0], [0, 20], [0, -20], [15, 10]] as const) {
      const fit = fitRigid(reference, rotated(yaw, pitch), 100)!
      expect(fit.yaw).toBeCloseTo(yaw, 0)
      expect(fit.pitch).toBeCloseTo(pitch, 0)
      expect(fit.rigidResidual).toBeLessThan(0.001)
      // No flat map explains a turn: near and far points move differently.
      if (Math.abs(yaw) + Math.abs(pitch) >= 20) expect(fit.flatResidual).toBeGreaterThan(0.05)
    }
  })

  test("the woman's real turns read as turns her way, explained by a rotation (residual under the policy's bound)", () => {
    for (const name of [...LEFT, ...LEFT_AGAIN, ...RIGHT]) {
      const analysis = female(name)
      const fit = fitRigid(reference, face(analysis).mesh!, interocular(analysis))!
      const turn = turnOf(face(analysis).landmarks!)
      expect(Math.sign(fit.yaw)).toBe(Math.sign(turn))
      expect(Math.abs(fit.yaw)).toBeGreaterThan(DEFAULT_LIVENESS_POLICY.minYaw)
      expect(fit.rigidResidual).toBeLessThan(DEFAULT_LIVENESS_POLICY.maxRigidPerTurn * Math.abs(turn))
    }
  })

  test('no frame of a 2D warp of one photo reads as a rigid turn in any direction', () => {
    let reachedTurn = 0
    for (const [clip, photo] of WARP_PHOTOS) {
      const reference = frames[`${clip}/${photo}`]!
      for (const pose of Object.keys(WARP_DIRECTIONS) as (keyof typeof WARP_DIRECTIONS)[]) {
        for (const [strength, radius] of WARP_SETTINGS) {
          const warped = frames[warpKey(clip, photo, pose, strength, radius)]!
          if (!warped.faces[0]?.mesh) continue
          const fit = fitRigid(face(reference).mesh!, face(warped).mesh!, interocular(warped))!
          const turn = turnOf(face(warped).landmarks!)
          const policy = DEFAULT_LIVENESS_POLICY
          if (Math.abs(turn) >= policy.turnThreshold && Math.abs(fit.yaw) >= policy.minYaw) {
            reachedTurn++
            expect(fit.rigidResidual).toBeGreaterThan(policy.maxRigidPerTurn * Math.abs(turn))
          }
          // Up and down are read less surely (some vertical warps fit a nod: docs/decisions.md); every
          // challenge therefore also asks for a left or right turn, which no warp passes.
        }
      }
    }
    // The attack is strong enough to fool a check that reads angles alone.
    expect(reachedTurn).toBeGreaterThanOrEqual(5)
  })
})

describe('checkLiveness', () => {
  test('a live person who turns left, right, left, as asked, passes with the frontal frames kept for the age', () => {
    const result = checkLiveness(genuine(), LEFT_RIGHT_LEFT)
    expect(result).toMatchObject({ live: true })
    if (result.live) expect(result.frontal.length).toBe(4)
  })

  test('a "look straight" prompt between turns is answered by looking straight', () => {
    const answer = femaleCapture(FRONTAL, LEFT, ['frame_0039.jpg', 'frame_0049.jpg'], RIGHT, BACK)
    expect(checkLiveness(answer, challengeFor(['left', 'straight', 'right'])).live).toBe(true)
    expect(checkLiveness(answer, challengeFor(['left', 'right', 'left']))).toMatchObject({ live: false, failure: 'wrong_turn' })
  })

  test('blind replay of a recording with a different challenge is refused: it answers 1 of the 240 sequences', () => {
    const passing = CHALLENGE_SEQUENCES.filter((poses) => checkLiveness(genuine(), { poses: [...poses], holdMs: [] }).live)
    expect(passing).toEqual([['left', 'right', 'left']])
    expect(CHALLENGE_SEQUENCES.length).toBe(240)
  })

  test('a turn made before its prompt was shown fails: a recording does not wait for the page', () => {
    // The right turn already under the first (left) prompt.
    const early = capture([FRONTAL.map(female), [female(LEFT[0]!), female(RIGHT[0]!)], [female(LEFT[1]!), female(RIGHT[1]!)], LEFT_AGAIN.map(female), BACK.map(female)])
    expect(checkLiveness(early, LEFT_RIGHT_LEFT)).toMatchObject({ live: false, failure: 'wrong_turn' })
  })

  test('a slow visitor who turns late, each prompt shown by the end of its phase, passes', () => {
    const late = femaleCapture([FRONTAL[0]!], [FRONTAL[1]!, LEFT[0]!], [LEFT[1]!, RIGHT[0]!], [RIGHT[1]!, LEFT_AGAIN[0]!], [LEFT_AGAIN[1]!, ...BACK])
    expect(checkLiveness(late, LEFT_RIGHT_LEFT).live).toBe(true)
  })

  for (const [clip, photo] of WARP_PHOTOS) {
    for (const [first, second] of [['left', 'right'], ['up', 'down']] as const) {
      test(`2D warp of one photo (${first}/${second}, ${clip}) is refused: no solid head turns so, or the face is no longer the same`, () => {
        const still = frames[`${clip}/${photo}`]!
        const reference = face(still).mesh!
        /** How strongly a warped frame reads as `pose` (nose across the eye line, or the fitted pitch). */
        const reading = (analysis: FrameAnalysis, pose: string) => {
          const turn = turnOf(face(analysis).landmarks!)
          const pitch = fitRigid(reference, face(analysis).mesh!, interocular(analysis))!.pitch
          return { left: turn, right: -turn, up: pitch, down: -pitch }[pose]!
        }
        const warps = (pose: keyof typeof WARP_DIRECTIONS) =>
          WARP_SETTINGS.map(([s, r]) => frames[warpKey(clip, photo, pose, s, r)]!)
            .filter((analysis) => analysis.faces.length === 1)
            .sort((a, b) => reading(b, pose) - reading(a, pose))
        // The warps that read most like each pose, two per prompt, as the attacker's canvas would show them.
        const attack = capture([[still, still], warps(first).slice(0, 2), warps(second).slice(0, 2), warps(first).slice(2, 4), [still, still]])
        const result = checkLiveness(attack, challengeFor([first, second, first] as never))
        expect(result.live).toBe(false)
        // Refused because no solid head explains a warp, or a warp does not read as the pose at all.
        if (!result.live) expect(['face_changed', 'wrong_turn', 'no_turn']).toContain(result.failure)
      })
    }
  }

  test('one still photo repeated fails as repeated frames, before anything else', () => {
    const still = frames['spoof-gracehopper-still/frame_0001.jpg']!
    const repeated = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4].map((phase) => shot(still, phase, 'same-bytes'))
    expect(checkLiveness(repeated, LEFT_RIGHT_LEFT)).toEqual({ live: false, failure: 'repeated_frames' })
  })

  test('the same picture re-encoded (new bytes, identical landmarks) fails as still', () => {
    const still = frames['spoof-gracehopper-still/frame_0001.jpg']!
    expect(checkLiveness(capture([[still, still], [still, still], [still, still], [still, still], [still, still]]), LEFT_RIGHT_LEFT)).toEqual({ live: false, failure: 'still' })
  })

  test('a photo moved and rotated in the image plane fails: it never turns', () => {
    const waved = Object.entries(frames).filter(([key]) => key.startsWith('spoof-gracehopper-waved/')).map(([, analysis]) => analysis)
    const attack = capture([waved.slice(0, 2), waved.slice(2, 4), waved.slice(4, 6), waved.slice(6, 8)])
    expect(checkLiveness(attack, challengeFor(['left', 'right']))).toMatchObject({ live: false, failure: 'no_turn' })
  })

  test('a live person who only looks straight fails: a real face is not enough without the turns', () => {
    const male = Object.entries(frames).filter(([key]) => key.startsWith('intel-male-frontal/')).map(([, analysis]) => analysis)
    expect(checkLiveness(capture([male.slice(0, 2), male.slice(2, 4), male.slice(4, 6)]), challengeFor(['left']))).toMatchObject({ live: false, failure: 'no_turn' })
  })

  test("someone else's face in the frontal frames fails: the turns and the age must come from one person", () => {
    const male = frames['intel-male-frontal/frame_0001.jpg']!
    const swapped = capture([[male, frames['intel-male-frontal/frame_0013.jpg']!], LEFT.map(female), RIGHT.map(female), LEFT_AGAIN.map(female), BACK.map(female)])
    expect(checkLiveness(swapped, LEFT_RIGHT_LEFT)).toEqual({ live: false, failure: 'face_changed' })
  })

  test('two faces in any frame fail', () => {
    const two = { ...female(LEFT[0]!), faces: [...female(LEFT[0]!).faces, ...female(FRONTAL[0]!).faces] }
    const result = checkLiveness(capture([FRONTAL.map(female), [two, female(LEFT[1]!)], RIGHT.map(female), LEFT_AGAIN.map(female), BACK.map(female)]), LEFT_RIGHT_LEFT)
    expect(result).toEqual({ live: false, failure: 'several_faces' })
  })

  test('frames without a face beyond the allowance fail as no_face', () => {
    const empty: FrameAnalysis = { width: 640, height: 480, faces: [], ms: 0 }
    expect(checkLiveness(capture([[empty, empty], [female(LEFT[0]!), empty], [female(RIGHT[0]!), empty], [empty, empty], [empty, empty]]), LEFT_RIGHT_LEFT)).toEqual({ live: false, failure: 'no_face' })
  })

  test('a capture that does not open looking straight has no reference to read the turns against', () => {
    expect(checkLiveness(femaleCapture(LEFT, RIGHT, LEFT_AGAIN, BACK), challengeFor(['right', 'left']))).toEqual({ live: false, failure: 'no_frontal' })
    expect(checkLiveness(capture([[], LEFT.map(female), RIGHT.map(female), LEFT_AGAIN.map(female), BACK.map(female)]), LEFT_RIGHT_LEFT)).toMatchObject({ live: false, failure: 'no_frontal' })
  })
})

describe('decideLiveFaceCheck: the age of the frontal frames, and of the head that turned', () => {
  /** The genuine capture with every turned frame's age read as `age`: what the model would say of someone else's head. */
  const turnedReading = (age: number) =>
    genuine().map((frame) =>
      frame.phase === 0 || frame.phase === 4 ? frame : { ...frame, analysis: { ...frame.analysis, faces: frame.analysis.faces.map((f) => ({ ...f, age })) } },
    )

  test('a genuine capture is approved: her frontal frames read over the cut-off, her turned ones over the threshold', () => {
    const turnedAges = [...LEFT, ...RIGHT, ...LEFT_AGAIN].map((name) => face(female(name)).age)
    expect(Math.min(...turnedAges)).toBeGreaterThan(29)
    expect(decideLiveFaceCheck(genuine(), LEFT_RIGHT_LEFT, 18)).toMatchObject({ approved: true, goodFrames: 4 })
  })

  test("an adult's frontal frames beside a turning head that reads under the threshold are refused", () => {
    // The identity check lets a stranger's turned face through at a cosine of 0.55 (8.9% of pairs of strangers);
    // here the turned frames keep her descriptors, so only their ages tell the heads apart.
    expect(checkLiveness(turnedReading(15), LEFT_RIGHT_LEFT)).toMatchObject({ live: true })
    expect(decideLiveFaceCheck(turnedReading(15), LEFT_RIGHT_LEFT, 18)).toEqual({ approved: false, failure: 'not_over_threshold', medianAge: 15 })
    expect(decideLiveFaceCheck(turnedReading(17.9), LEFT_RIGHT_LEFT, 18)).toMatchObject({ approved: false, failure: 'not_over_threshold' })
    // The bare threshold, not the cut-off: a turned face that reads 18 is enough beside frontal frames over 29.
    expect(decideLiveFaceCheck(turnedReading(18), LEFT_RIGHT_LEFT, 18)).toMatchObject({ approved: true })
    expect(decideLiveFaceCheck(turnedReading(20), LEFT_RIGHT_LEFT, 21)).toMatchObject({ approved: false, failure: 'not_over_threshold', medianAge: 20 })
  })
})

describe('the challenge', () => {
  test('sequences: three or four prompts of five poses, none twice in a row, opening and closing on a turn, one at least left or right; 240 in all', () => {
    const seen = new Set(CHALLENGE_SEQUENCES.map((poses) => poses.join(',')))
    expect(seen.size).toBe(CHALLENGE_SEQUENCES.length)
    // Counted by hand: 4 first turns × (1 straight × 4 + 3 turns × 3) = 52 of three, 204 of four; less
    // those with no left or right (only up, down, straight): 2 × 3 = 6 of three, 10 of four.
    expect(CHALLENGE_SEQUENCES.filter((poses) => poses.length === 3).length).toBe(52 - 6)
    expect(CHALLENGE_SEQUENCES.filter((poses) => poses.length === 4).length).toBe(204 - 10)
    for (const poses of CHALLENGE_SEQUENCES) {
      expect(poses.some((pose) => pose === 'left' || pose === 'right')).toBe(true)
      expect(poses.every((pose, k) => k === 0 || pose !== poses[k - 1])).toBe(true)
      expect(poses.filter((pose) => pose !== 'straight').length).toBeGreaterThanOrEqual(2)
      expect(poses[0]).not.toBe('straight')
      expect(poses.at(-1)).not.toBe('straight')
    }
    expect(new Set(CHALLENGE_SEQUENCES.flat())).toEqual(new Set<Pose>(['straight', 'left', 'right', 'up', 'down']))
  })

  test('a drawn challenge holds each phase for a random time, the opening and closing included', () => {
    const drawn = Array.from({ length: 300 }, () => pickChallenge())
    for (const challenge of drawn) {
      expect(challenge.holdMs.length).toBe(challenge.poses.length + 2)
      for (const ms of challenge.holdMs) expect(ms >= HOLD_MS.min && ms <= HOLD_MS.max).toBe(true)
    }
    expect(new Set(drawn.map((challenge) => challenge.poses.join(','))).size).toBeGreaterThan(150)
    expect(new Set(drawn.flatMap((challenge) => challenge.holdMs)).size).toBeGreaterThan(300)
    expect(pickChallenge(() => 0)).toEqual({ poses: [...CHALLENGE_SEQUENCES[0]!], holdMs: [1100, 1100, 1100, 1100, 1100] })
  })

  test('stored challenges parse back, and anything formatChallenge could not write is refused', () => {
    const challenge: Challenge = { poses: ['left', 'up', 'down'], holdMs: [1300, 1800, 1200, 1500, 1900] }
    expect(formatChallenge(challenge)).toBe('left,up,down|1300,1800,1200,1500,1900')
    expect(parseChallenge(formatChallenge(challenge))).toEqual(challenge)
    expect(challengeDuration(challenge)).toBe(7700)
    for (const bad of ['', 'left,right', 'left,left,up|1,2,3,4,5', 'left,up,down|1,2,3', 'left,up,sideways|1,2,3,4,5', 'straight,up,down|1,2,3,4,5', 'left,up,down|1,2,3,4,x', 'left,up,down|1,2,3,4,5|6']) {
      expect(parseChallenge(bad)).toBeUndefined()
    }
  })
})
