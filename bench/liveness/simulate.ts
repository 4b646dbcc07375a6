import type { AgeViews, FrameAnalysis } from '../../src/estimator/types.ts'
import { checkLiveness, DEFAULT_LIVENESS_POLICY, type CapturedFrame } from '../../src/liveness/check.ts'
import { pickChallenge, type Challenge, type Pose } from '../../src/liveness/challenge.ts'
import { decideLiveFaceCheck, DEFAULT_FACE_POLICY } from '../../src/liveness/face-policy.ts'
import { defaultFaceBuffer } from '../../src/clients/face-buffer.ts'

/**
 * The face check's page, simulated exactly, against a camera that an attacker controls: the server
 * draws a challenge, the page shows each prompt for its hold and takes two frames late in it
 * (public/face-capture.js), and the server's own decision runs on what the real estimator says of those
 * frames. Nothing here is a model of the check: only the camera is simulated.
 */

export type { Challenge, Pose }

/** public/face-capture.js's FRAMES_AT: when, as shares of a prompt's hold, the page takes its two frames. */
export const PAGE_FRAMES_AT = [0.55, 0.85] as const

/** A picture the camera shows: `key` names it, for the analysis cache; `jpeg` makes its bytes when needed. */
export type Picture = { key: string; jpeg: () => Uint8Array | Promise<Uint8Array> }

/** What the page shows when a frame is taken: the prompt, and when it appeared. */
export type Prompted = { phase: number; pose: Pose; shownAtMs: number; holdMs: number }

/** A camera: the picture at `ms` after the check started. Attackers that read the prompt get it. */
export type Camera = (ms: number, prompt: Prompted) => Picture | Promise<Picture>

/** Draws a number in [0, count): the challenge's random source, seeded in the suite. */
export type Pick = (count: number) => number

/** The challenge as the server draws it (src/liveness/challenge.ts), from a seeded source. */
export const drawChallenge = (pick: Pick): Challenge => pickChallenge(pick)

/** The prompts in order: "look straight", each pose, "look straight again". */
export function promptsOf(challenge: Challenge): Prompted[] {
  const poses: Pose[] = ['straight', ...challenge.poses, 'straight']
  let shownAtMs = 0
  return poses.map((pose, phase) => {
    const prompt = { phase, pose, shownAtMs, holdMs: challenge.holdMs[phase]! }
    shownAtMs += prompt.holdMs
    return prompt
  })
}

/** The frames the page takes from `camera`, with the phase each was taken under. */
export async function takeFrames(challenge: Challenge, camera: Camera): Promise<{ picture: Picture; phase: number }[]> {
  const taken: { picture: Picture; phase: number }[] = []
  for (const prompt of promptsOf(challenge)) {
    for (const share of PAGE_FRAMES_AT) taken.push({ picture: await camera(prompt.shownAtMs + share * prompt.holdMs, prompt), phase: prompt.phase })
  }
  return taken
}

/**
 * The view the server's estimator reads of each frame (src/verification/methods/face.tsx, liveView): the
 * two frames under the opening and closing "look straight" alternate the face and its mirror image.
 */
export function viewOf(phases: number[], i: number, promptCount: number): AgeViews {
  const phase = phases[i]!
  if (phase !== 0 && phase !== promptCount + 1) return 'original'
  return phases.slice(0, i).filter((earlier) => earlier === phase).length % 2 === 0 ? 'original' : 'mirror'
}

export type Analyse = (image: Uint8Array, views: AgeViews) => Promise<FrameAnalysis>

/** The estimator, remembered per distinct picture and view: hundreds of trials show the same few pictures. */
export function cachedAnalyser(analyse: Analyse) {
  const cache = new Map<string, Promise<FrameAnalysis>>()
  return {
    analyse(picture: Picture, views: AgeViews): Promise<FrameAnalysis> {
      const key = `${picture.key}|${views}`
      let found = cache.get(key)
      if (!found) {
        found = Promise.resolve(picture.jpeg()).then((bytes) => analyse(bytes, views))
        cache.set(key, found)
      }
      return found
    },
    get size() {
      return cache.size
    },
  }
}

export type Outcome = { approved: boolean; stage: 'approved' | 'liveness' | 'age'; failure?: string }

/** The threshold the suite asks for: an adult face can pass it, so a refusal is the liveness check's doing. */
export const SUITE_THRESHOLD = 18

/**
 * One attempt: the challenge drawn, the frames taken from `camera`, analysed, and judged by the
 * server's decision. A refusal is put down to liveness when checkLiveness refuses, else to the age.
 */
export async function attempt(challenge: Challenge, camera: Camera, analyser: ReturnType<typeof cachedAnalyser>, attemptId: string): Promise<Outcome> {
  const taken = await takeFrames(challenge, camera)
  const phases = taken.map((frame) => frame.phase)
  const frames: CapturedFrame[] = []
  for (const [i, frame] of taken.entries()) {
    const analysis = await analyser.analyse(frame.picture, viewOf(phases, i, challenge.poses.length))
    // A camera's noise makes every frame's bytes differ, and an attacker adds some where it does not.
    frames.push({ phase: frame.phase, digest: `${attemptId}/${i}`, analysis })
  }
  const policy = { ...DEFAULT_FACE_POLICY, buffer: defaultFaceBuffer(SUITE_THRESHOLD) }
  const live = checkLiveness(frames, challenge, { ...DEFAULT_LIVENESS_POLICY, minFaceScore: policy.minFaceScore })
  const decision = decideLiveFaceCheck(frames, challenge, SUITE_THRESHOLD, policy)
  if (decision.approved) return { approved: true, stage: 'approved' }
  return { approved: false, stage: live.live ? 'age' : 'liveness', failure: decision.failure }
}

export { seededRandom } from '../../src/lib/seeded-random.ts'

export const pickFrom = (random: () => number): Pick => (count) => Math.floor(random() * count)
