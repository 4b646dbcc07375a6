import { randomInt } from 'node:crypto'

/** Where the head points, in the visitor's own terms: "left" is their left, "up" their chin raised. */
export type Pose = 'straight' | 'left' | 'right' | 'up' | 'down'

/**
 * A live challenge: after the opening "look straight" (phase 0), `poses[k - 1]` is prompt k (phase k),
 * then a closing "look straight" (phase poses.length + 1). `holdMs[phase]` is how long each phase's
 * prompt is shown, the opening and the closing included (holdMs.length === poses.length + 2).
 */
export type Challenge = { poses: Pose[]; holdMs: number[] }

export const POSES: readonly Pose[] = ['straight', 'left', 'right', 'up', 'down']
const TURNED: readonly Pose[] = ['left', 'right', 'up', 'down']

/** How long a challenge may be answered after it is issued: enough to do it, too short to stage a replay. */
export const CHALLENGE_LIFETIME_MS = 2 * 60_000
/** Each prompt is shown for a random time in this range: a recording cannot know when the next one comes. */
export const HOLD_MS = { min: 1100, max: 2200 } as const

/**
 * Every sequence of prompts a challenge may ask for: three or four, no two in a row alike, the first
 * and the last a turn (a "straight" there would merge with the opening or closing phase), so at least
 * two turns. 52 sequences of three and 204 of four: a recording of one answers a drawn challenge once
 * in 256 (docs/decisions.md), before its timing is even considered.
 */
export const CHALLENGE_SEQUENCES: readonly (readonly Pose[])[] = [3, 4].flatMap((length) => sequences(length))

function sequences(length: number): Pose[][] {
  let partial: Pose[][] = TURNED.map((pose) => [pose])
  for (let k = 1; k < length; k++) {
    const last = k === length - 1
    partial = partial.flatMap((sequence) => (last ? TURNED : POSES).filter((pose) => pose !== sequence.at(-1)).map((pose) => [...sequence, pose]))
  }
  return partial
}

/**
 * Draws a challenge with a cryptographic random number: the sequence, then each phase's hold. A test
 * may pass a fixed picker (`pick(count)` returns 0..count-1), as it must to answer with a recording.
 */
export function pickChallenge(pick: (count: number) => number = randomInt): Challenge {
  const poses = [...CHALLENGE_SEQUENCES[pick(CHALLENGE_SEQUENCES.length)]!]
  const holdMs = Array.from({ length: poses.length + 2 }, () => HOLD_MS.min + pick(HOLD_MS.max - HOLD_MS.min + 1))
  return { poses, holdMs }
}

/** The least time a capture of `challenge` can take: every prompt shown for its hold. */
export const challengeDuration = (challenge: Challenge) => challenge.holdMs.reduce((total, ms) => total + ms, 0)

/** As stored (verification_sessions.challenge_turns): "left,up,down|1300,1800,1200,1500,1900". */
export const formatChallenge = (challenge: Challenge) => `${challenge.poses.join(',')}|${challenge.holdMs.join(',')}`

/** A stored challenge, or undefined for anything formatChallenge could not have written. */
export function parseChallenge(value: string | null | undefined): Challenge | undefined {
  const [posesPart, holdPart, extra] = (value ?? '').split('|')
  if (!posesPart || !holdPart || extra !== undefined) return undefined
  const poses = posesPart.split(',')
  const holdMs = holdPart.split(',').map(Number)
  if (!poses.every((pose): pose is Pose => (POSES as readonly string[]).includes(pose))) return undefined
  if (!CHALLENGE_SEQUENCES.some((sequence) => sequence.join(',') === posesPart)) return undefined
  if (holdMs.length !== poses.length + 2 || !holdMs.every((ms) => Number.isInteger(ms) && ms >= 0 && ms <= 60_000)) return undefined
  return { poses, holdMs }
}
