import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import jpeg from 'jpeg-js'
import type { Challenge, Pose } from '../../src/liveness/challenge.ts'

/**
 * The camera clips in shared/liveness (each folder's README.txt has its source and licence; the Intel
 * clips are CC BY 4.0, "head-pose-face-detection-female/male" by Intel IoT Devkit, cropped and upscaled;
 * the Grace Hopper portrait is a US Navy photo in the public domain). Nothing of them is copied into
 * the repository: tests read them from shared/ and skip with one line where it is missing.
 */
export const LIVENESS_DIR = join(import.meta.dir, '..', '..', '..', 'shared', 'liveness')
export const hasLivenessClips = existsSync(join(LIVENESS_DIR, 'intel-female-headturn', 'frames'))

/**
 * Frames of intel-female-headturn by what the head does (unmirrored camera: her left turn moves her
 * nose to the right of the picture). Chosen by the estimator's turn reading; see its README timeline.
 * The clip plays the GIF backwards then forwards, so later frames repeat earlier ones (0049 is 0010):
 * each list holds distinct pictures only.
 */
export const FEMALE = {
  frontal: ['frame_0010.jpg', 'frame_0011.jpg', 'frame_0020.jpg', 'frame_0021.jpg'],
  left: ['frame_0014.jpg', 'frame_0015.jpg', 'frame_0016.jpg', 'frame_0017.jpg'],
  right: ['frame_0023.jpg', 'frame_0024.jpg', 'frame_0025.jpg', 'frame_0026.jpg', 'frame_0027.jpg', 'frame_0028.jpg'],
}

/** The poses intel-female-headturn can answer: nobody in shared/liveness nods, so never up or down. */
export type ClipPose = 'straight' | 'left' | 'right'

/**
 * A challenge a recording of intel-female-headturn can answer, for a test to fix (AppDeps.pickChallenge):
 * these poses, each prompt held the shortest time.
 */
export function challengeFor(poses: readonly ClipPose[], holdMs = 1100): Challenge {
  return { poses: [...poses], holdMs: Array.from({ length: poses.length + 2 }, () => holdMs) }
}

/**
 * The frames a visitor answering `poses` sends (frames of intel-female-headturn, as the page takes
 * them): two under each prompt, "look straight", each prompt, "look straight again", with those phases.
 * A "straight" between turns shows 0039 and 0049, byte for byte 0020 and 0010: usable only where the
 * bytes are scripted (the unit and in-process tests), never as real frames of one capture.
 */
export function captureFor(poses: readonly Pose[]): { frame: string; phase: number; frontal: boolean }[] {
  const straight = (frames: string[], phase: number) => frames.map((frame) => ({ frame, phase, frontal: true }))
  return [
    ...straight([FEMALE.frontal[0]!, FEMALE.frontal[1]!], 0),
    // A second turn the same way shows other frames: a real camera never sends the same picture twice.
    ...poses.flatMap((pose, k) => {
      if (pose === 'straight') return straight(['frame_0039.jpg', 'frame_0049.jpg'], k + 1)
      if (pose !== 'left' && pose !== 'right') throw new Error(`intel-female-headturn never looks ${pose}`)
      const earlier = poses.slice(0, k).filter((other) => other === pose).length
      return FEMALE[pose].slice(2 * earlier, 2 * earlier + 2).map((frame) => ({ frame, phase: k + 1, frontal: false }))
    }),
    ...straight([FEMALE.frontal[2]!, FEMALE.frontal[3]!], poses.length + 1),
  ]
}

/** Her two frames nearest frontal: the rigid fit reads them within 5° of each other. */
const STRAIGHTEST = ['frame_0010.jpg', 'frame_0020.jpg']

/**
 * The segments of a fake camera clip (composeMjpeg) of intel-female-headturn that answers a challenge of
 * `poses`, each prompt shown `holdSeconds`, when the page starts the check `startAt` seconds into the
 * clip: the opening "look straight", each pose, the closing "look straight", each held from a fifth of
 * its prompt's hold on, so that the page's frames (at 55% and 85% of the hold, public/face-capture.js)
 * fall in the middle of the pose whether the check starts a little early or up to a third of a hold late.
 * The clip shows only what she did: straight, her left and her right.
 */
export function challengeSegments(poses: readonly ClipPose[], holdSeconds: number, startAt: number, clipSeconds: number): { frames: Uint8Array[]; seconds: number }[] {
  const phases = ['straight' as const, ...poses, 'straight' as const]
  const lead = startAt + 0.2 * holdSeconds
  const closingFrom = lead + (phases.length - 1) * holdSeconds
  if (closingFrom + holdSeconds > clipSeconds) throw new Error(`a clip of ${clipSeconds} s is too short for ${phases.length} prompts of ${holdSeconds} s`)
  const shown = { straight: 0, left: 0, right: 0 }
  return phases.map((pose, phase) => {
    // A look straight shows her two frames nearest frontal (the others are 9-13° off, which the check's
    // rigid fit does not count as straight); a second turn the same way shows other frames of it.
    const frames = pose === 'straight' ? STRAIGHTEST : [0, 1].map((k) => FEMALE[pose][(2 * shown[pose] + k) % FEMALE[pose].length]!)
    shown[pose]++
    const seconds = phase === 0 ? lead + holdSeconds : phase === phases.length - 1 ? clipSeconds - closingFrom : holdSeconds
    return { frames: frames.map((frame) => clipFrame('intel-female-headturn', frame)), seconds }
  })
}

/**
 * The 2D warp attack's frames as recorded (record-frames.ts): a frontal photo with the nose region slid
 * `direction` by `strength` inter-ocular distances over a Gaussian of `radius` inter-ocular distances.
 */
export const WARP_PHOTOS = [
  ['intel-female-headturn', 'frame_0010.jpg'],
  ['intel-male-frontal', 'frame_0001.jpg'],
  ['spoof-gracehopper-still', 'frame_0001.jpg'],
] as const
export const WARP_DIRECTIONS = { left: [1, 0], right: [-1, 0], up: [0, -1], down: [0, 1] } as const
export const WARP_SETTINGS = [
  [0.5, 0.6],
  [0.75, 0.9],
  [1, 0.9],
  [1.3, 0.9],
  [1.3, 1.2],
] as const
export const warpKey = (clip: string, frame: string, pose: keyof typeof WARP_DIRECTIONS, strength: number, radius: number) => `warp:${clip}/${frame}:${pose}:${strength}:${radius}`

export const RECORDED_FRAMES: Record<string, string[]> = {
  // 0049 and 0039 repeat 0010 and 0020: the unit tests use them as a later look straight.
  'intel-female-headturn': [...FEMALE.frontal, 'frame_0039.jpg', 'frame_0049.jpg', ...FEMALE.left, ...FEMALE.right],
  'intel-male-frontal': ['frame_0001.jpg', 'frame_0013.jpg', 'frame_0025.jpg', 'frame_0037.jpg', 'frame_0049.jpg', 'frame_0061.jpg'],
  'spoof-gracehopper-still': ['frame_0001.jpg'],
  'headtrackr-capture4-sideways': ['frame_0010.jpg', 'frame_0020.jpg', 'frame_0030.jpg', 'frame_0040.jpg'],
  'spoof-gracehopper-waved': ['frame_0001.jpg', 'frame_0009.jpg', 'frame_0017.jpg', 'frame_0025.jpg', 'frame_0033.jpg', 'frame_0041.jpg', 'frame_0049.jpg', 'frame_0057.jpg'],
}

/** The face form's post of a capture of intel-female-headturn: the page's CSRF token, the challenge, the phases and the frames. */
export function captureForm(csrf: string, challenge: string, capture: { frame: string; phase: number }[]): FormData {
  const form = new FormData()
  form.set('csrf', csrf)
  form.set('challenge', challenge)
  form.set('phases', capture.map((shot) => shot.phase).join(','))
  for (const shot of capture) form.append('frame', new File([clipFrame('intel-female-headturn', shot.frame)], shot.frame, { type: 'image/jpeg' }))
  return form
}

export const clipFrame = (clip: string, frame: string) => new Uint8Array(readFileSync(join(LIVENESS_DIR, clip, 'frames', frame)))

/**
 * A fake camera clip for Chromium (MJPEG: JPEG frames back to back, played at 30 fps, looped): each
 * segment cycles through its frames, each shown `hold` times, for `seconds`. Like a real camera's
 * sensor noise, a faint mark in the corner makes every picture of the clip unique, and `variant` makes
 * every clip unique: without it two grabs, or two sessions, could send the very same bytes, which the
 * service refuses as a replay.
 */
export function composeMjpeg(segments: { frames: Uint8Array[]; seconds: number; hold?: number }[], variant: number): Buffer {
  const parts: Uint8Array[] = []
  let slot = 0
  for (const segment of segments) {
    const decoded = segment.frames.map((frame) => jpeg.decode(frame, { useTArray: true }))
    const slots = Math.round(segment.seconds * 30)
    const hold = segment.hold ?? 3
    for (let i = 0; i < slots; i++, slot++) {
      const source = decoded[Math.floor(i / hold) % decoded.length]!
      const data = new Uint8Array(source.data)
      // Black or white 8×8 blocks along the top edge spell (variant, slot) in bits, far from the face and
      // bold enough to survive the JPEG encodings on the way (a faint mark is quantised away).
      const bits = (variant << 10) | slot
      for (let bit = 0; bit < 14; bit++) {
        const value = (bits >> bit) & 1 ? 255 : 0
        for (let y = 0; y < 8; y++) data.fill(value, (y * source.width + bit * 8) * 4, (y * source.width + bit * 8 + 8) * 4)
      }
      parts.push(jpeg.encode({ width: source.width, height: source.height, data }, 90).data)
    }
  }
  return Buffer.concat(parts)
}
