import { wilsonInterval } from '../../src/estimator/proportion.ts'
import { CHALLENGE_SEQUENCES } from '../../src/liveness/challenge.ts'
import type { Attack } from './attacks.ts'
import { attempt, drawChallenge, pickFrom, seededRandom, type Challenge, type Pose, type cachedAnalyser } from './simulate.ts'

export type AttackResult = {
  attack: string
  summary: string
  expected: Attack['expected']
  trials: number
  passed: number
  /** Refused by the liveness check, and (having passed it) by the age. */
  livenessFailures: number
  ageFailures: number
  /** How often each failure came up, by its name in FaceFailure. */
  failures: Record<string, number>
  rate: number
  low: number
  high: number
  /** Sequences of poses this attack is tried against (src/liveness/challenge.ts), each with random holds. */
  challengeSpace: number
}

/** Draws until the challenge asks only for `poses` (the answerable subset, with the server's own odds within it). */
export function drawChallengeOf(pick: (count: number) => number, poses: Pose[] | undefined): Challenge {
  for (;;) {
    const challenge = drawChallenge(pick)
    if (!poses || challenge.poses.every((pose) => poses.includes(pose))) return challenge
  }
}

/** The sequences of poses the server may draw that this attack is tried against. */
export function challengeSpace(poses: Pose[] | undefined): number {
  return CHALLENGE_SEQUENCES.filter((sequence) => !poses || sequence.every((pose) => poses.includes(pose))).length
}

/** `trials` attempts of `attack`, each against a fresh challenge; the same seed gives the same attempts. */
export async function runAttack(attack: Attack, options: { trials: number; seed: number; analyser: ReturnType<typeof cachedAnalyser> }): Promise<AttackResult> {
  const random = seededRandom(options.seed)
  const pick = pickFrom(random)
  let passed = 0
  let livenessFailures = 0
  let ageFailures = 0
  const failures: Record<string, number> = {}
  for (let trial = 0; trial < options.trials; trial++) {
    const challenge = drawChallengeOf(pick, attack.posesOnly)
    const outcome = await attempt(challenge, attack.camera(random, challenge), options.analyser, `${attack.name}/${options.seed}/${trial}`)
    if (outcome.approved) passed++
    else if (outcome.stage === 'liveness') livenessFailures++
    else ageFailures++
    if (outcome.failure) failures[outcome.failure] = (failures[outcome.failure] ?? 0) + 1
  }
  const interval = wilsonInterval(passed, options.trials)!
  return {
    attack: attack.name,
    summary: attack.summary,
    expected: attack.expected,
    trials: options.trials,
    passed,
    livenessFailures,
    ageFailures,
    failures,
    rate: passed / options.trials,
    low: interval.low,
    high: interval.high,
    challengeSpace: challengeSpace(attack.posesOnly),
  }
}

const percent = (value: number) => `${(100 * value).toFixed(1)}%`

/** One line of the table. */
export function formatResult(result: AttackResult): string {
  const failures = Object.entries(result.failures)
    .sort((a, b) => b[1] - a[1])
    .map(([failure, count]) => `${failure} ${count}`)
    .join(', ')
  return [
    result.attack.padEnd(28),
    `${percent(result.rate).padStart(6)} (${percent(result.low)}-${percent(result.high)})`.padEnd(24),
    `${result.passed}/${result.trials}`.padEnd(9),
    `liveness ${result.livenessFailures}, age ${result.ageFailures}`.padEnd(24),
    `space ${result.challengeSpace}`.padEnd(11),
    failures,
  ].join(' ')
}
