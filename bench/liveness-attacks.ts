/**
 * The attack suite of the live face check (issue 22): each attack's pass rate per attempt with its 95%
 * Wilson interval, against challenges drawn by the server's own picker, frames taken at the page's times
 * (public/face-capture.js), the real estimator and the server's decision at 18 (an adult face can pass,
 * so a refusal is the liveness check's; refusals are counted by liveness and by age apart).
 *
 *   bun run attacks                       # every attack, 100 attempts each
 *   bun run attacks --trials 300 --seed 7
 *   bun run attacks --attack warp-0.6 --attack still
 *   bun run attacks --json                # one JSON object, for docs or a comparison
 *
 * Needs the camera clips in ../shared/liveness (bench/liveness/attacks.ts says which and why). The
 * estimator runs in this process; each distinct picture is analysed once per view and remembered.
 */
import { createHumanEngine } from '../src/estimator/human-engine.ts'
import { hasLivenessClips, LIVENESS_DIR } from '../test/liveness/clips.ts'
import { buildAttacks } from './liveness/attacks.ts'
import { cachedAnalyser } from './liveness/simulate.ts'
import { formatResult, runAttack, type AttackResult } from './liveness/suite.ts'

const args = process.argv.slice(2)
const valuesOf = (name: string) => args.flatMap((arg, i) => (arg === `--${name}` && args[i + 1] !== undefined ? [args[i + 1]!] : []))
const numberOf = (name: string, fallback: number) => {
  const value = valuesOf(name)[0]
  if (value === undefined) return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${name} needs a positive whole number`)
  return parsed
}
const trials = numberOf('trials', 100)
const seed = numberOf('seed', 1)
const json = args.includes('--json')
if (!hasLivenessClips) {
  console.error(`no camera clips in ${LIVENESS_DIR}: the attack suite needs them`)
  process.exit(1)
}

const started = performance.now()
const engine = await createHumanEngine()
const analyser = cachedAnalyser((image, views) => engine.analyzeImage(image, views))
const attacks = await buildAttacks(analyser)
const chosen = valuesOf('attack')
const unknown = chosen.filter((name) => !attacks.some((attack) => attack.name === name))
if (unknown.length) throw new Error(`unknown attack ${unknown.join(', ')}; known: ${attacks.map((attack) => attack.name).join(', ')}`)

const results: AttackResult[] = []
if (!json) console.log(`${trials} attempts per attack, seed ${seed}, threshold 18\n`)
for (const attack of attacks.filter((attack) => chosen.length === 0 || chosen.includes(attack.name))) {
  const result = await runAttack(attack, { trials, seed, analyser })
  results.push(result)
  if (!json) console.log(formatResult(result))
}
engine.close()
const wallSeconds = (performance.now() - started) / 1000
if (json) {
  console.log(JSON.stringify({ trials, seed, threshold: 18, wall_seconds: Math.round(wallSeconds), pictures_analysed: analyser.size, results }, null, 2))
} else {
  console.log(`\n${analyser.size} distinct pictures analysed; wall time ${wallSeconds.toFixed(0)} s`)
  const surprises = results.filter((result) => (result.expected === 'refused' ? result.passed > 0 : result.passed < result.trials))
  for (const result of surprises) console.log(`note: ${result.attack} ${result.expected === 'refused' ? 'passed sometimes' : 'was refused sometimes'}: ${result.summary}`)
}
