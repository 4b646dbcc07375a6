/**
 * Records what the real estimator says of chosen frames of the camera clips in shared/liveness, so that
 * the liveness unit tests run on real numbers without loading the models. Run by hand after changing
 * the estimator: `bun test/liveness/record-frames.ts` (writes test/liveness/fixtures/recorded-frames.json).
 * Only numbers are kept (descriptors rounded to 3 decimals), never a picture. Besides the clips' own
 * frames, the 2D warp attack (warp.ts) on frontal frames of them, in each direction at a few strengths.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createHumanEngine } from '../../src/estimator/human-engine.ts'
import type { FrameAnalysis } from '../../src/estimator/types.ts'
import { LIVENESS_DIR, RECORDED_FRAMES, WARP_DIRECTIONS, WARP_PHOTOS, WARP_SETTINGS, warpKey } from './clips.ts'
import { warpNose } from './warp.ts'

const engine = await createHumanEngine()
const recorded: Record<string, FrameAnalysis> = {}
for (const [clip, frames] of Object.entries(RECORDED_FRAMES)) {
  for (const frame of frames) {
    const analysis = await engine.analyzeImage(new Uint8Array(readFileSync(join(LIVENESS_DIR, clip, 'frames', frame))))
    for (const face of analysis.faces) if (face.descriptor) face.descriptor = face.descriptor.map((value) => Math.round(value * 1000) / 1000)
    recorded[`${clip}/${frame}`] = { ...analysis, ms: 0 }
  }
}
for (const [clip, frame] of WARP_PHOTOS) {
  const photo = new Uint8Array(readFileSync(join(LIVENESS_DIR, clip, 'frames', frame)))
  const landmarks = (await engine.analyzeImage(photo)).faces[0]!.landmarks!
  const interocular = Math.hypot(landmarks.leftEye[0] - landmarks.rightEye[0], landmarks.leftEye[1] - landmarks.rightEye[1])
  for (const [pose, [dx, dy]] of Object.entries(WARP_DIRECTIONS)) {
    for (const [strength, radius] of WARP_SETTINGS) {
      const warped = warpNose(photo, landmarks.nose, [dx * strength * interocular, dy * strength * interocular], radius * interocular)
      const analysis = await engine.analyzeImage(warped)
      for (const face of analysis.faces) if (face.descriptor) face.descriptor = face.descriptor.map((value) => Math.round(value * 1000) / 1000)
      recorded[warpKey(clip, frame, pose as keyof typeof WARP_DIRECTIONS, strength, radius)] = { ...analysis, ms: 0 }
    }
  }
}
engine.close()
writeFileSync(join(import.meta.dir, 'fixtures', 'recorded-frames.json'), `${JSON.stringify(recorded)}\n`)
console.log(`recorded ${Object.keys(recorded).length} frames`)
