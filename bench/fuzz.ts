/**
 * The extended run of the route fuzzer (issue 10; the quick run is test/fuzz/routes.test.ts):
 *
 *   bun run fuzz                                     # 100,000 requests, seed 1, PGlite in memory
 *   bun run fuzz --runs 20000 --seed 42              # another length, another sequence
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun run fuzz   # on a throwaway Postgres database
 *
 * Requests go in-process through the server's handler (`ctx.handle`), one at a time, with values up to
 * `--huge-bytes` (1 MiB by default). Unlike the quick run it does not stop at the first failure: it counts
 * them all, prints the first few with what the server logged, and exits 1 if there was any. The same seed
 * replays the same requests.
 */
import { parseArgs } from 'node:util'
import fc from 'fast-check'
import { createFuzzTarget, describeOutcome, requestArbitrary } from '../test/fuzz/routes.ts'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '1' },
    'huge-bytes': { type: 'string', default: String(1024 * 1024) },
  },
})
const runs = Number(values.runs)
const seed = Number(values.seed)
const hugeBytes = Number(values['huge-bytes'])
if (![runs, seed, hugeBytes].every(Number.isSafeInteger) || runs < 1 || hugeBytes < 1024) {
  console.error('usage: bun bench/fuzz.ts [--runs N] [--seed S] [--huge-bytes B ≥ 1024]')
  process.exit(2)
}

const SHOWN = 10
const target = await createFuzzTarget()
const counts = { requests: 0, unsendable: 0, serverErrors: 0, nonJsonOnApi: 0, otherFailures: 0 }
const statuses = new Map<number, number>()
const shown: string[] = []
const started = performance.now()
const elapsed = () => (performance.now() - started) / 1000

await fc.assert(
  fc.asyncProperty(requestArbitrary({ hugeBytes }), async (spec) => {
    const outcome = await target.probe(spec)
    if (!outcome) return void counts.unsendable++
    counts.requests++
    statuses.set(outcome.response.status, (statuses.get(outcome.response.status) ?? 0) + 1)
    const kinds = outcome.problems.map((problem) => problem.split(':')[0])
    if (kinds.includes('server_error')) counts.serverErrors++
    if (kinds.some((kind) => kind === 'html_on_api' || kind === 'non_json_on_api')) counts.nonJsonOnApi++
    if (kinds.some((kind) => !['server_error', 'html_on_api', 'non_json_on_api'].includes(kind!))) counts.otherFailures++
    if (kinds.length > 0 && shown.length < SHOWN) shown.push(`${spec.route}: ${describeOutcome(outcome)}\n  spec: ${fc.stringify(spec).slice(0, 2000)}`)
    if (counts.requests % 10_000 === 0) console.log(`… ${counts.requests} requests, ${(counts.requests / elapsed()).toFixed(0)}/s`)
  }),
  { seed, numRuns: runs },
)
const seconds = elapsed()
await target.close()

const failed = counts.serverErrors + counts.nonJsonOnApi + counts.otherFailures
console.log(`seed ${seed}, ${runs} runs, values up to ${hugeBytes} bytes, database ${process.env.DATABASE_URL ? 'Postgres' : 'PGlite (embedded, a copy of the migrated template)'}`)
console.log(`requests made:        ${counts.requests}${counts.unsendable ? ` (${counts.unsendable} more not sendable: no client could send them)` : ''}`)
console.log(`5xx:                  ${counts.serverErrors}`)
console.log(`non-JSON on /api/:    ${counts.nonJsonOnApi}`)
console.log(`other failures:       ${counts.otherFailures} (error body or status not the spec's, page without CSP, …)`)
console.log(`statuses:             ${[...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(', ')}`)
console.log(`elapsed:              ${seconds.toFixed(1)} s (${(counts.requests / seconds).toFixed(0)} requests/s)`)
for (const line of shown) console.log(`\n${line}`)
process.exit(failed > 0 ? 1 : 0)
