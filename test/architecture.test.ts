import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const SRC = resolve(import.meta.dir, '../src')

/** Every module of src/ and the src/ modules it imports (type-only imports included: they are a dependency too). */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => /\.tsx?$/.test(file) && !file.endsWith('.d.ts'))
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const text = readFileSync(join(SRC, file), 'utf8')
    const targets = [...text.matchAll(/^(?:import|export)\s[^'"]*?\sfrom\s+'(\.{1,2}\/[^']+)'/gm)].map((match) => relative(SRC, resolve(SRC, dirname(file), match[1]!)))
    graph.set(file, targets)
  }
  return graph
}

/** Each circle once, as the path that closes it. */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (node: string) => {
    state.set(node, 'open')
    path.push(node)
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    path.pop()
    state.set(node, 'done')
  }
  for (const node of graph.keys()) if (!state.has(node)) visit(node)
  return found
}

describe('the layout of src/ (STYLE.md)', () => {
  const graph = importGraph()

  test('the graph is read: it knows the modules and their imports', () => {
    expect(graph.get('config.ts')).toContain('errors.ts')
    expect(graph.get('app.tsx')?.length).toBeGreaterThan(10)
    // The reader finds a circle when there is one.
    expect(circles(new Map([['a.ts', ['b.ts']], ['b.ts', ['a.ts']]]))).toEqual([['a.ts', 'b.ts', 'a.ts']])
  })

  test('no import circle (config.ts → ratelimit/limits.ts → db/client.ts → config.ts was one)', () => {
    expect(circles(graph).map((circle) => circle.join(' → '))).toEqual([])
  })

  test('config.ts reads the environment and imports no feature: the trust list is only a path there', () => {
    expect(graph.get('config.ts')).toEqual(['errors.ts'])
  })

  test('src/web/ serves every browser-facing surface and imports none of them', () => {
    const surfaces = /^(verification|dashboard|demo|oauth|gate)\//
    for (const [file, targets] of graph) {
      if (file.startsWith('web/')) expect(targets.filter((target) => surfaces.test(target)), file).toEqual([])
    }
  })
})

describe("what a route reads of an error (issue 33: a reworded message silently broke a form)", () => {
  /** Reading a caught error's text: `.description` or `.message` followed by a string test. */
  const READS_TEXT = /\.(description|message)\s*\.\s*(startsWith|includes|endsWith|match|indexOf)\s*\(|\.(description|message)\s*===?\s*['"`]/

  test('the pattern finds what it is for', () => {
    expect(READS_TEXT.test("error.description.startsWith('face_buffer')")).toBe(true)
    expect(READS_TEXT.test("error.description.includes('already has')")).toBe(true)
    expect(READS_TEXT.test("ruleProblem(error) === 'webhook_endpoint_known'")).toBe(false)
  })

  test('no route, page or command of src/ switches on an error message: they switch on its code (RuleError.problem, OAuthError.code)', () => {
    const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => /\.tsx?$/.test(file) && !file.endsWith('.d.ts'))
    const offenders = files.filter((file) => READS_TEXT.test(readFileSync(join(SRC, file), 'utf8')))
    expect(offenders).toEqual([])
  })
})

describe('the rooms of src/ (issue 33: the client registry in its own room)', () => {
  const graph = importGraph()

  test('src/clients/ (the registry, its rules, its methods and face buffer) imports no surface or feature above it: only the database, lib, errors, config, keys, rate limits, the usage counters and the webhook outbox', () => {
    const allowed = /^(db\/|lib\/|errors\.ts$|config\.ts$|keys\/|ratelimit\/|usage\/counters\.ts$|webhooks\/events\.ts$|clients\/)/
    for (const [file, targets] of graph) {
      if (file.startsWith('clients/')) expect(targets.filter((target) => !allowed.test(target)), file).toEqual([])
    }
  })

  test('no room below the surfaces reaches up into oauth/ for a client: branding, usage counters, webhooks and gate settings use src/clients/', () => {
    const lower = /^(branding|webhooks|clients|estimator|liveness|credentials|keys|db|lib|ratelimit|mail|i18n)\//
    for (const [file, targets] of graph) {
      if (lower.test(file)) expect(targets.filter((target) => target.startsWith('oauth/')), file).toEqual([])
    }
  })

  test('authentication of a client stays in oauth/: src/clients/ has no authenticateClient', () => {
    expect([...graph.keys()].filter((file) => file.startsWith('clients/') && readFileSync(join(SRC, file), 'utf8').includes('export async function authenticateClient'))).toEqual([])
  })

  test('background jobs live in src/jobs/: server.ts starts them with one call and runs no timer of its own; only the server imports them', () => {
    expect(readFileSync(join(SRC, 'server.ts'), 'utf8')).not.toContain('setInterval')
    for (const [file, targets] of graph) {
      if (!file.startsWith('jobs/') && file !== 'server.ts') expect(targets.filter((target) => target.startsWith('jobs/')), file).toEqual([])
    }
  })

  test('db/schema.ts is split by concept: each file under src/db/schema/ stays under 300 lines, and schema.ts only re-exports them', () => {
    const dir = join(SRC, 'db', 'schema')
    for (const file of readdirSync(dir)) expect(readFileSync(join(dir, file), 'utf8').split('\n').length, file).toBeLessThan(300)
    const barrel = readFileSync(join(SRC, 'db', 'schema.ts'), 'utf8')
    expect(barrel.split('\n').filter((line) => line.trim() && !line.startsWith('export * from') && !/^\s*(\/\*\*|\*)/.test(line))).toEqual([])
  })

  test('surfaces render their own pages: src/pages/ (the layout and the error page) and src/i18n/ reach into no surface (verification, dashboard, gate, oauth, demo)', () => {
    const surfaces = /^(verification|dashboard|gate|oauth|demo)\//
    for (const [file, targets] of graph) {
      if (file.startsWith('pages/') || file.startsWith('i18n/')) expect(targets.filter((target) => surfaces.test(target)), file).toEqual([])
    }
  })

  test("the face check's liveness, challenge and policy live together in src/liveness/, below the page: it imports only the estimator's types, the client's face buffer, lib and errors", () => {
    const allowed = /^(liveness\/|estimator\/types\.ts$|clients\/face-buffer\.ts$|lib\/|errors\.ts$)/
    for (const [file, targets] of graph) {
      if (file.startsWith('liveness/')) expect(targets.filter((target) => !allowed.test(target)), file).toEqual([])
    }
  })
})

describe('the command line in one room (issue 33: six *-command.ts files in feature folders imported boot.ts)', () => {
  const graph = importGraph()
  /** The files that know every room: the entries, the server, the start-up, the app and its dependencies. */
  const compositionRoot = new Set(['cli.ts', 'index.ts', 'server.ts', 'boot.ts', 'admin-socket.ts', 'app.tsx', 'deps.ts'])

  test('no file outside src/cli/ and the composition root imports boot.ts: feature folders keep framework-free services that the commands call', () => {
    for (const [file, targets] of graph) {
      if (!file.startsWith('cli/') && !compositionRoot.has(file)) expect(targets.filter((target) => target === 'boot.ts'), file).toEqual([])
    }
  })

  test('src/cli/ is imported only by itself and the composition root: no feature folder reaches into the command line', () => {
    for (const [file, targets] of graph) {
      if (!file.startsWith('cli/') && !compositionRoot.has(file)) expect(targets.filter((target) => target.startsWith('cli/')), file).toEqual([])
    }
  })

  test('src/cli.ts, the binary\'s entry, stays thin: it runs a command line (src/cli/run.ts) and prints a failure', () => {
    expect(graph.get('cli.ts')?.toSorted()).toEqual(['cli/run.ts', 'config.ts', 'errors.ts'])
  })

  test('each command declares its own flags in its own file, src/cli/<command>.ts, and its usage names each of them: there is no table of every flag', async () => {
    const { COMMANDS } = await import('../src/cli/commands.ts')
    const { jsonOption } = await import('../src/cli/command.ts')
    for (const command of COMMANDS) {
      const flags = Object.keys(command.options)
      if (command.kind === 'answer') {
        expect(flags, command.name).toEqual([])
        continue
      }
      const source = readFileSync(join(SRC, 'cli', `${command.name}.ts`), 'utf8')
      expect(source, command.name).toContain(`name: '${command.name}'`)
      for (const flag of flags) {
        if (flag in jsonOption) continue
        expect(source, `${command.name} --${flag}`).toMatch(new RegExp(`(^|[{,])\\s*'?${flag}'?: \\{ type: '(string|boolean)'`, 'm'))
        expect(command.usage, `${command.name} --${flag}`).toContain(`--${flag}`)
      }
    }
    // A flag another command takes is an unknown option here: `clients` does not take `keys rotate --leaked`.
    const everyFlag = new Set(COMMANDS.flatMap((command) => Object.keys(command.options)))
    for (const command of COMMANDS) expect(Object.keys(command.options).length, command.name).toBeLessThan(everyFlag.size)
  })

  test('only src/cli/ declares command-line flags', () => {
    const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => /\.tsx?$/.test(file) && !file.startsWith('cli/'))
    expect(files.filter((file) => /\{ type: '(string|boolean)'(, (multiple|short):[^}]*)? \}/.test(readFileSync(join(SRC, file), 'utf8')))).toEqual([])
  })
})
