import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * The load generator of `bun run bench`, always in a process of its own: wrk when it is installed (the
 * reviewers' tool), else autocannon under Node. One plan per path: a method, a path, headers, and either
 * one body or a file of bodies sent once each (codes can be exchanged once).
 */
export type LoadPlan = {
  url: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  /** One body per request, in order, split between wrk's threads; never sent twice. */
  bodies?: string[]
  connections: number
  seconds: number
}

export type LoadResult = { requestsPerSecond: number; p50Ms: number; p99Ms: number; requests: number; errors: number; tool: 'wrk' | 'autocannon' }

const WRK_THREADS = 2

export const hasWrk = Bun.spawnSync(['sh', '-c', 'command -v wrk']).exitCode === 0

export async function runLoad(plan: LoadPlan, tool: LoadResult['tool'] = hasWrk ? 'wrk' : 'autocannon'): Promise<LoadResult> {
  return tool === 'wrk' ? runWrk(plan) : runAutocannon(plan)
}

async function output(argv: string[]): Promise<string> {
  const child = Bun.spawn(argv, { stdout: 'pipe', stderr: 'pipe' })
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()])
  if ((await child.exited) !== 0) throw new Error(`${argv[0]} failed: ${err || out}`)
  return out
}

async function runWrk(plan: LoadPlan): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'ofage-bench-'))
  const bodiesFile = join(dir, 'bodies.txt')
  if (plan.bodies) writeFileSync(bodiesFile, `${plan.bodies.join('\n')}\n`)
  const headers = Object.entries(plan.headers ?? {})
    .map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
    .join('\n')
  // Each thread takes every WRK_THREADS-th body; a thread that runs out sends its last one again (it fails
  // and is counted as an error, so a run never reports successes it did not have).
  const script = `
wrk.method = ${JSON.stringify(plan.method ?? 'GET')}
${headers}
${plan.body !== undefined ? `wrk.body = ${JSON.stringify(plan.body)}` : ''}
local counter = 0
function setup(thread) thread:set("id", counter); counter = counter + 1 end
local bodies, next = {}, 1
function init(args)
  if ${plan.bodies ? 'true' : 'false'} then
    local i = 0
    for line in io.lines(${JSON.stringify(bodiesFile)}) do
      if i % ${WRK_THREADS} == id then bodies[#bodies + 1] = line end
      i = i + 1
    end
  end
end
function request()
  if #bodies == 0 then return wrk.format() end
  local body = bodies[math.min(next, #bodies)]
  next = next + 1
  return wrk.format(nil, nil, nil, body)
end
local errors = 0
function response(status) if status >= 400 then errors = errors + 1 end end
function done(summary, latency, requests)
  io.write(string.format("JSON{\\"p50\\":%f,\\"p99\\":%f,\\"requests\\":%d,\\"socket_errors\\":%d}\\n", latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.requests, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout + summary.errors.status))
end
`
  writeFileSync(join(dir, 'plan.lua'), script)
  let out: string
  try {
    out = await output(['wrk', '-t', String(WRK_THREADS), '-c', String(plan.connections), '-d', `${plan.seconds}s`, '--timeout', '10s', '-s', join(dir, 'plan.lua'), plan.url])
  } finally {
    // The plan and its bodies (codes the bench seeded) go with the run: one folder a run was left behind.
    rmSync(dir, { recursive: true, force: true })
  }
  const summary = JSON.parse(/JSON(\{.*\})/.exec(out)![1]!) as { p50: number; p99: number; requests: number; socket_errors: number }
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1])
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0)
  return { requestsPerSecond: rps, p50Ms: summary.p50, p99Ms: summary.p99, requests: summary.requests, errors: non2xx + summary.socket_errors, tool: 'wrk' }
}

async function runAutocannon(plan: LoadPlan): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'ofage-bench-'))
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan))
  const script = `
const autocannon = require(${JSON.stringify(require.resolve('autocannon'))})
const plan = require(${JSON.stringify(join(dir, 'plan.json'))})
let next = 0
const request = plan.bodies ? { setupRequest: (req) => ({ ...req, body: plan.bodies[Math.min(next++, plan.bodies.length - 1)] }) } : {}
autocannon({ url: plan.url, method: plan.method || 'GET', headers: plan.headers || {}, body: plan.body, connections: plan.connections, duration: plan.seconds, requests: [request] }, (error, result) => {
  if (error) throw error
  console.log(JSON.stringify({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, requests: result.requests.total, errors: result.errors + result.non2xx + result.timeouts }))
})`
  const out = await output(['node', '-e', script])
  const result = JSON.parse(out.trim().split('\n').at(-1)!) as { rps: number; p50: number; p99: number; requests: number; errors: number }
  return { requestsPerSecond: result.rps, p50Ms: result.p50, p99Ms: result.p99, requests: result.requests, errors: result.errors, tool: 'autocannon' }
}
