import { describe, expect, test } from 'bun:test'
import type { FaceObservation, FrameAnalysis } from '../../src/estimator/types.ts'
import { decideFaceCheck, DEFAULT_FACE_POLICY, type FacePolicy } from '../../src/liveness/face-policy.ts'
import { defaultFaceBuffer, faceBufferFor } from '../../src/clients/face-buffer.ts'

const face = (overrides: Partial<FaceObservation> = {}): FaceObservation => ({
  age: 30,
  faceScore: 0.95,
  box: { x: 100, y: 80, width: 200, height: 240 },
  sharpness: 150,
  ...overrides,
})
const frame = (...faces: FaceObservation[]): FrameAnalysis => ({ width: 640, height: 480, faces, ms: 200 })
const policy: FacePolicy = { ...DEFAULT_FACE_POLICY, buffer: 7 }

describe('decideFaceCheck', () => {
  test('approves when the median estimate is at least threshold + buffer', () => {
    const decision = decideFaceCheck([frame(face({ age: 24 })), frame(face({ age: 27 })), frame(face({ age: 40 }))], 18, policy)
    expect(decision).toEqual({ approved: true, medianAge: 27, goodFrames: 3 })
  })

  test('exactly at threshold + buffer passes; a year under fails with not_over_threshold', () => {
    expect(decideFaceCheck([frame(face({ age: 25 }))], 18, policy).approved).toBe(true)
    expect(decideFaceCheck([frame(face({ age: 24.9 }))], 18, policy)).toEqual({ approved: false, failure: 'not_over_threshold', medianAge: 24.9 })
  })

  test('an estimate over the threshold but inside the buffer is refused (the model errs by years)', () => {
    expect(decideFaceCheck([frame(face({ age: 21 }))], 18, policy)).toMatchObject({ approved: false, failure: 'not_over_threshold' })
  })

  test('the median resists one wild frame', () => {
    const decision = decideFaceCheck([frame(face({ age: 19 })), frame(face({ age: 20 })), frame(face({ age: 70 }))], 18, policy)
    expect(decision).toMatchObject({ approved: false, medianAge: 20 })
  })

  test('an even number of good frames averages the middle two', () => {
    expect(decideFaceCheck([frame(face({ age: 26 })), frame(face({ age: 30 }))], 18, policy)).toMatchObject({ approved: true, medianAge: 28 })
  })

  test.each([
    ['no face', frame(), 'no_face'],
    ['a face under the detector bound only', frame(face({ faceScore: 0.3 })), 'no_face'],
    ['two faces', frame(face(), face({ box: { x: 400, y: 80, width: 180, height: 200 } })), 'several_faces'],
    ['a small face', frame(face({ box: { x: 0, y: 0, width: 60, height: 70 } })), 'face_too_small'],
    ['a blurred face', frame(face({ sharpness: 5 })), 'too_blurry'],
  ])('%s fails with %s, whatever the age', (_, bad, failure) => {
    expect(decideFaceCheck([{ ...bad, faces: bad.faces.map((f) => ({ ...f, age: 60 })) }], 18, policy)).toEqual({ approved: false, failure: failure as never })
  })

  test('bad frames are dropped and the good ones decide', () => {
    const decision = decideFaceCheck([frame(), frame(face({ sharpness: 1 })), frame(face({ age: 33 }))], 18, policy)
    expect(decision).toEqual({ approved: true, medianAge: 33, goodFrames: 1 })
  })

  test('minGoodFrames demands that many good frames', () => {
    const strict = { ...policy, minGoodFrames: 2 }
    expect(decideFaceCheck([frame(), frame(face({ age: 40 }))], 18, strict)).toEqual({ approved: false, failure: 'no_face' })
    expect(decideFaceCheck([frame(face({ age: 40 })), frame(face({ age: 41 }))], 18, strict).approved).toBe(true)
  })

  test('several faces is reported before a missing face: it is the more basic problem to fix', () => {
    expect(decideFaceCheck([frame(), frame(face(), face())], 18, policy)).toEqual({ approved: false, failure: 'several_faces' })
  })

  test('no frames at all is no_face', () => {
    expect(decideFaceCheck([], 18, policy)).toEqual({ approved: false, failure: 'no_face' })
  })

  test('the buffer follows the policy: 0 means the bare threshold', () => {
    expect(decideFaceCheck([frame(face({ age: 18 }))], 18, { ...policy, buffer: 0 })).toMatchObject({ approved: true, medianAge: 18 })
    expect(decideFaceCheck([frame(face({ age: 30 }))], 21, { ...policy, buffer: 10 })).toMatchObject({ approved: false })
  })
})

describe('the default buffer per threshold (measured on the dev set, docs/accuracy.md)', () => {
  test('by the interval rule: 18 asks for 29, 21 for 30, 25 for 37, and younger thresholds for more', () => {
    // docs/accuracy.md: the interval rule's buffers on the dev set, cut-offs 29, 30 and 37.
    expect(18 + defaultFaceBuffer(18)).toBe(29)
    expect(21 + defaultFaceBuffer(21)).toBe(30)
    expect(25 + defaultFaceBuffer(25)).toBe(37)
    expect(defaultFaceBuffer(13)).toBeGreaterThan(defaultFaceBuffer(18))
  })

  test("a client's own buffer beats the deployment's, which beats the default", () => {
    // A client may only raise the buffer: its own under the deployment's or the measured default does not apply.
    expect(faceBufferFor({ faceBuffer: 3 }, 18, 10)).toBe(10)
    expect(faceBufferFor({ faceBuffer: 12 }, 18, 10)).toBe(12)
    expect(faceBufferFor({ faceBuffer: 1 }, 18, undefined)).toBe(defaultFaceBuffer(18))
    expect(faceBufferFor({ faceBuffer: null }, 18, 10)).toBe(10)
    expect(faceBufferFor({ faceBuffer: null }, 18, undefined)).toBe(defaultFaceBuffer(18))
    expect(faceBufferFor({}, 21, undefined)).toBe(defaultFaceBuffer(21))
  })
})
