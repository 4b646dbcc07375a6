import { expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { faceCheckLine, goalReadings, writeReport, type Report } from '../../bench/report.ts'

/** `bun run bench` rewrites docs/performance.md: its figures and targets, and never the analysis below them. */
const result = (requestsPerSecond: number, p99Ms = 5) => ({ requestsPerSecond, p50Ms: 1, p99Ms, requests: requestsPerSecond * 10, errors: 0, tool: 'wrk' as const })
const cpu = { server: 0.6, postgres: 0.3, other: 0.1 }

const report: Report = {
  machine: { cpu: 'Test CPU', cores: 2, memory: '24 GiB', bun: '1.4.5', postgres: 'PostgreSQL 15', kernel: 'Linux 6' },
  seconds: 10,
  auditRows: 10_000_000,
  seedSeconds: 160,
  tool: 'wrk',
  signsOne: 5_000,
  signsAll: 10_000,
  signsBun: 4_000,
  commits: 30_000,
  helloWorld: result(100_000),
  peer: { result: result(3_000), runtime: 'Node v20' },
  workers: 2,
  load: { start: '0.52 0.40 0.31', end: '2.10 1.20 0.60' },
  peakRssMiB: 120,
  flowStatements: { open: 1, complete: 2 },
  faceCheck: { size: '960×720', msPerFrame: 110, checksPerMinute: { tenFrames: 54.5, twelveFrames: 45.5 }, pinned: true },
  rows: [
    { path: 'token exchange (c64)', result: result(4_500), cpu, ceiling: 10_000, ceilingName: 'RSA-2048 signing' },
    { path: 'JWKS (c64)', result: result(80_000), cpu, ceiling: 100_000, ceilingName: 'Elysia hello world' },
    { path: 'usage report, month (c64)', result: result(3_000, 25), cpu, ceiling: 100_000, ceilingName: 'Elysia hello world' },
  ],
}

test('figures against their ceilings, each target met or not, the chart, and the hand-written analysis kept', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ofage-report-'))
  const markdown = join(dir, 'performance.md')
  const svg = join(dir, 'performance.svg')
  writeReport(report, markdown, svg)
  const first = readFileSync(markdown, 'utf8')
  expect(first).toContain('| token exchange (c64) | 4,500 |')
  expect(first).toMatch(/\| token exchange \(c64\) .*\| 45%; 113% of the server's RS256 signing; 1\.50× the peer \| ≥ 0\.6× the peer \| yes \|/)
  expect(first).toContain('Load average (1, 5, 15 min) 0.52 0.40 0.31 at the start, 2.10 1.20 0.60 at the end.')
  expect(first).toContain("**Peer:** node-oidc-provider 9.13's token endpoint")
  expect(first).toContain("RS256 as the server signs (the system's OpenSSL where it loads, else WebCrypto; a process a core, `bench/bun-signs.ts`): 4,000/s")
  expect(first).toMatch(/\| JWKS \(c64\) .*\| 80% \| ≥ 90% of hello world \| \*\*no\*\* \|/)
  expect(first).toMatch(/\| usage report, month \(c64\) .*\| p99 < 20 ms \| \*\*no\*\* \|/)
  expect(first).toContain("One visitor's flow sends 3 statements to the database (counted in process, `BEGIN` and `COMMIT` included): 1 to open the page, 2 to complete the form.")
  expect(first).toContain('Face check (`bench/face-stages.ts --side 960`, frames of 960×720 as the page sends them, on one core, first in the run): 110.0 ms a frame from decoding to garbage collection; 55 checks a core a minute for three prompts (10 frames), 46 for four (12 frames) (target ≥ 80 for four: **no**, 43% short).')
  expect(readFileSync(svg, 'utf8')).toStartWith('<svg')
  // wrk corrects its percentiles for coordinated omission; the report says so, and only of wrk's.
  expect(first).toContain("wrk's p50 and p99 are corrected for coordinated omission")
  writeReport({ ...report, tool: 'autocannon' }, join(dir, 'autocannon.md'), svg)
  expect(readFileSync(join(dir, 'autocannon.md'), 'utf8')).not.toContain('coordinated omission')

  writeFileSync(markdown, `${first}\nThe exchange is bound by X, measured by Y.\n`)
  writeReport({ ...report, rows: [{ ...report.rows[0]!, result: result(1_790) }] }, markdown, svg)
  const second = readFileSync(markdown, 'utf8')
  // 0.597× the peer misses issue 34's 0.6×.
  expect(second).toMatch(/\| token exchange \(c64\) \| 1,790 \|.*\| 18%; 45% of the server's RS256 signing; 0\.60× the peer \| ≥ 0\.6× the peer \| \*\*no\*\* \|/)
  expect(second).toContain('The exchange is bound by X, measured by Y.')
  expect(second.match(/<!-- analysis/g)).toHaveLength(1)
})

test('the face check line: met when a four-prompt capture reaches 80 a core a minute; said when not measured', () => {
  const cost = (twelveFrames: number) => ({ size: '640×480', msPerFrame: 60, checksPerMinute: { tenFrames: 100, twelveFrames }, pinned: false })
  expect(faceCheckLine(cost(83.3))).toEndWith('(target ≥ 80 for four: yes).')
  expect(faceCheckLine(cost(83.3))).toContain('not pinned to a core (no taskset)')
  expect(faceCheckLine(cost(79))).toEndWith('(target ≥ 80 for four: **no**, 1% short).')
  expect(faceCheckLine(undefined)).toBe('Face check: not measured in this run (no camera clips in ../shared/liveness, or left out by --only).')
})


test("issue 34's goals: each met or by how much it is missed, with what bounds it from the run's own figures", () => {
  const stages = { decode: 6, detect: 38, age: 60, collect: 6 }
  const slower: Report = {
    ...report,
    peakRssMiB: 190,
    idleRssMiB: 98,
    faceCheck: { ...report.faceCheck!, stages },
    rows: [
      { path: 'token exchange (c64)', result: result(1_400), cpu, ceiling: 10_000, ceilingName: 'RSA-2048 signing' },
      { path: 'validation GET /api/verify/token (c64)', result: result(50_000), cpu, ceiling: 100_000, ceilingName: 'Elysia hello world' },
      { path: 'JWKS (c64)', result: result(120_000), cpu, ceiling: 100_000, ceilingName: 'Elysia hello world' },
      { path: 'hosted page flow: GET page + POST form (c16)', result: result(700), cpu, ceiling: undefined, ceilingName: undefined },
    ],
  }
  const byGoal = Object.fromEntries(goalReadings(slower).map((g) => [g.goal, g]))
  expect(Object.keys(byGoal)).toEqual([
    'the flow ≥ 500 completions/s',
    'exchange ≥ 0.6× the peer',
    'validation ≥ 50% of hello world',
    'JWKS ≥ 90% of hello world',
    '< 150 MiB a process under the load',
    '≥ 80 face checks a core a minute',
  ])
  expect(byGoal['the flow ≥ 500 completions/s']).toMatchObject({ met: true, measured: '700/s, 3 statements a flow', shortBy: '' })
  // 1,400 against 0.6 × 3,000 = 1,800: 22% short; the peer on Node signs with OpenSSL.
  expect(byGoal['exchange ≥ 0.6× the peer']).toMatchObject({ met: false, measured: "1,400/s = 0.47× the peer's 3,000/s", shortBy: '22% (1,800/s)' })
  expect(byGoal['exchange ≥ 0.6× the peer']!.bound).toBe(
    "the server used 60% of the cores, Postgres 30%; RSA signing: the server signs 4,000 RS256 signatures/s with every core, openssl 10,000/s; the peer signs with OpenSSL. The exchange reaches 35% of the server's signing rate, the peer 30% of openssl's",
  )
  expect(byGoal['validation ≥ 50% of hello world']).toMatchObject({ met: true, measured: '50,000/s = 50%' })
  expect(byGoal['JWKS ≥ 90% of hello world']).toMatchObject({ met: true, measured: '120,000/s = 120%' })
  expect(byGoal['< 150 MiB a process under the load']).toMatchObject({ met: false, measured: '190 MiB peak (98 MiB idle)', shortBy: '40 MiB' })
  expect(byGoal['< 150 MiB a process under the load']!.bound).toContain('the load adds 92 MiB for the requests in flight')
  expect(byGoal['≥ 80 face checks a core a minute']).toMatchObject({ met: false, shortBy: '43%' })
  expect(byGoal['≥ 80 face checks a core a minute']!.bound).toBe(
    'the models: of 110.0 ms a frame, the age and identity model (FaceRes) 60.0 ms, the detector with the mesh 38.0 ms, decoding 6.0 ms, collection 6.0 ms',
  )

  // Memory a hair over the goal: 150.3 MiB is neither "150 MiB" nor missed by "0 MiB"; 149.6 is met, and says so to a tenth.
  const memory = (peak: number) => goalReadings({ ...slower, peakRssMiB: peak }).find((g) => g.goal.startsWith('< 150 MiB'))
  expect(memory(150.3)).toMatchObject({ met: false, measured: '150.3 MiB peak (98 MiB idle)', shortBy: '0.3 MiB' })
  expect(memory(149.6)).toMatchObject({ met: true, measured: '149.6 MiB peak (98 MiB idle)', shortBy: '' })
  expect(memory(140.4)).toMatchObject({ met: true, measured: '140 MiB peak (98 MiB idle)' })

  // Missed by a little: validation at 49% is short by 2% of its goal; and the table is written into the page.
  const missed = goalReadings({ ...slower, rows: [{ ...slower.rows[1]!, result: result(49_000) }] })
  expect(missed.find((g) => g.goal.startsWith('validation'))).toMatchObject({ met: false, shortBy: '2%' })
  // Missed by a hair: 49.96% is neither "50%" nor short by "0%".
  const hair = goalReadings({ ...slower, rows: [{ ...slower.rows[1]!, result: result(49_960) }] })
  expect(hair.find((g) => g.goal.startsWith('validation'))).toMatchObject({ met: false, measured: '49,960/s = 49.9%', shortBy: '0.1%' })
  // Its bound: the server's CPU a request (60% of two cores over 49,000/s) against the hello world's (50% over 100,000/s).
  const helloCpu = { server: 0.5, postgres: 0, other: 0.5 }
  const bounded = goalReadings({ ...slower, helloCpu, rows: [{ ...slower.rows[1]!, result: result(49_000) }] })
  expect(bounded.find((g) => g.goal.startsWith('validation'))!.bound).toBe(
    "24.5 µs of server CPU a request against the hello world's 10.0 µs (2.4×); the server had 60% of the cores, the load generator and the rest 10%, the hello world's server 50%",
  )
  const dir = mkdtempSync(join(tmpdir(), 'ofage-report-'))
  writeReport(slower, join(dir, 'performance.md'), join(dir, 'performance.svg'))
  const page = readFileSync(join(dir, 'performance.md'), 'utf8')
  expect(page).toContain("| exchange ≥ 0.6× the peer | 1,400/s = 0.47× the peer's 3,000/s | **no** | 22% (1,800/s) | the server used 60% of the cores, Postgres 30%; RSA signing: the server signs 4,000")
  expect(page).toContain('| JWKS ≥ 90% of hello world | 120,000/s = 120% | yes | — | — |')
})
