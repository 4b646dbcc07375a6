/**
 * The hosted page's load for `bun run bench`, in a process of its own: `connections` visitors at once,
 * each opening the page (GET, a new session) and completing the sandbox form (POST, a code and a 303 to
 * the site), again and again for `seconds`. Prints one JSON line: completions/s, p50 and p99 of a whole
 * completion (both requests), and failures.
 *
 *   bun bench/page-flow.ts BASE_URL CLIENT_ID REDIRECT_URI CONNECTIONS SECONDS
 */
import { completeForm, openPage } from './page-visit.ts'

const [baseUrl, clientId, redirectUri, connections, seconds] = process.argv.slice(2)
const deadline = performance.now() + Number(seconds) * 1000
const latencies: number[] = []
let failures = 0
const send = (request: Request) => fetch(request, { redirect: 'manual' })

async function visitor() {
  while (performance.now() < deadline) {
    const started = performance.now()
    try {
      await completeForm(send, baseUrl!, await openPage(send, baseUrl!, clientId!, redirectUri!))
      latencies.push(performance.now() - started)
    } catch {
      failures++
    }
  }
}

const started = performance.now()
await Promise.all(Array.from({ length: Number(connections) }, visitor))
const elapsed = (performance.now() - started) / 1000
latencies.sort((a, b) => a - b)
const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN
console.log(JSON.stringify({ rps: latencies.length / elapsed, p50: at(50), p99: at(99), requests: latencies.length, errors: failures }))
