import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parser } from '@prometheus-io/lezer-promql'
import { presentToVerifier } from '../../src/credentials/dev/wallet.ts'
import { signDevStatusList, startStatusServer, type StatusServer } from '../credentials/status-fixtures.ts'
import { basic, REDIRECT_URI, type TestContext } from '../helpers.ts'
import { callback, testBrowser } from '../verification/browser.ts'
import { NOW, openCredentialFlow, type CredentialFlow } from '../verification/credential-flow.ts'

/**
 * docs/ops/: the Prometheus alerting rules and the Grafana dashboard name only what a real /metrics
 * exposes. Every query is parsed with Prometheus's own grammar (@prometheus-io/lezer-promql, the parser of
 * Prometheus's web UI, not ours), and each metric, label and label value it names is looked up in the
 * scrape of a running instance after a little traffic (a sandbox check passed and failed, a code redeemed
 * and replayed, a token validated, a digital ID with a status list, the gate asked). `promtool check rules`
 * runs too where Prometheus is installed.
 */
const RULES_FILE = join(import.meta.dir, '../../docs/ops/prometheus-rules.yml')
const DASHBOARD_FILE = join(import.meta.dir, '../../docs/ops/grafana-dashboard.json')
const TOKEN = 'scrape-me'

/** Prometheus's own: the labels it adds to every scraped series, and the series it writes for each scrape. */
const TARGET_LABELS = new Set(['job', 'instance'])
const PROMETHEUS_SERIES = new Set(['up'])

type Rule = { alert?: string; record?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> }
type RuleFile = { groups: { name: string; rules: Rule[] }[] }
type Target = { refId: string; expr: string; datasource?: { uid?: string } }
type Panel = { id: number; type: string; title: string; gridPos?: unknown; datasource?: { type?: string; uid?: string }; targets?: Target[] }
type Variable = { name: string; type: string; query: string | { query: string } }
type Dashboard = { uid: string; title: string; panels: Panel[]; templating: { list: Variable[] } }

const rules = Bun.YAML.parse(readFileSync(RULES_FILE, 'utf8')) as RuleFile
const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard

/** Grafana's variables, as Grafana replaces them before a query is sent: an interval, or every value. */
function asPromQL(expr: string): string {
  return expr.replaceAll(/\$__(rate_interval|interval|range)\b/g, '5m').replaceAll(/\$(job|instance)\b/g, '.+')
}

/** Every PromQL query of both files, with where it comes from. */
function queries(): { where: string; expr: string }[] {
  const fromRules = rules.groups.flatMap((group) => group.rules.map((rule) => ({ where: `rule ${rule.alert ?? rule.record}`, expr: rule.expr })))
  const fromPanels = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}" ${target.refId}`, expr: asPromQL(target.expr) })))
  // label_values(selector, label) is Grafana's, not PromQL: its selector is, and its label is a label of it.
  const fromVariables = dashboard.templating.list.flatMap((variable) => {
    if (variable.type !== 'query') return []
    const text = typeof variable.query === 'string' ? variable.query : variable.query.query
    const [, selector, label] = /^label_values\((.+),\s*(\w+)\)$/.exec(text) ?? []
    if (!selector || !label) throw new Error(`variable ${variable.name}: not label_values(selector, label): ${text}`)
    return [{ where: `variable ${variable.name}`, expr: `sum by (${label}) (${asPromQL(selector)})` }]
  })
  return [...fromRules, ...fromPanels, ...fromVariables]
}

type Matcher = { label: string; op: string; value: string }
type Selector = { metric: string; matchers: Matcher[] }

/** The selectors and grouping labels of one query, read from its syntax tree; a syntax error throws. */
function readQuery(expr: string): { selectors: Selector[]; grouping: string[] } {
  const tree = parser.parse(expr)
  const text = (node: { from: number; to: number }) => expr.slice(node.from, node.to)
  const selectors: Selector[] = []
  const grouping: string[] = []
  let error: string | undefined
  tree.iterate({
    enter(ref) {
      if (ref.type.isError) error ??= `syntax error at ${ref.from}: …${expr.slice(Math.max(0, ref.from - 20), ref.from + 20)}…`
      if (ref.name === 'VectorSelector') {
        const node = ref.node
        const metric = node.getChild('Identifier')
        const matchers = node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []
        if (node.getChild('LabelMatchers')?.getChild('QuotedLabelMatcher')) error ??= 'quoted label matchers are not read here'
        selectors.push({
          metric: metric ? text(metric) : '',
          matchers: matchers.map((m) => ({ label: text(m.getChild('LabelName')!), op: text(m.getChild('MatchOp')!), value: JSON.parse(text(m.getChild('StringLiteral')!)) as string })),
        })
      }
      if (ref.name === 'GroupingLabels') for (const label of ref.node.getChildren('LabelName')) grouping.push(text(label))
    },
  })
  if (error) throw new Error(error)
  return { selectors, grouping }
}

/** A scrape in the text exposition format: per metric name, its labels and each label's values, and its HELP. */
type Exposition = Map<string, { help: string; labels: Map<string, Set<string>> }>

function readExposition(text: string): Exposition {
  const metrics: Exposition = new Map()
  const entry = (name: string) => metrics.get(name) ?? metrics.set(name, { help: '', labels: new Map() }).get(name)!
  for (const line of text.split('\n')) {
    const help = /^# HELP (\w+) (.*)$/.exec(line)
    if (help) entry(help[1]!).help = help[2]!
    const type = /^# TYPE (\w+) (\w+)$/.exec(line)
    if (type) {
      entry(type[1]!)
      if (type[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) entry(`${type[1]}${suffix}`).help = metrics.get(type[1]!)!.help
    }
    const sample = /^(\w+)(?:\{(.*)\})? \S+$/.exec(line)
    if (!sample) continue
    const labels = entry(sample[1]!).labels
    for (const [, name, value] of (sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels.get(name!)?.add(value!) ?? labels.set(name!, new Set([value!]))
    }
  }
  return metrics
}

/** Plain values a matcher names: its value, or each word of an alternation; undefined for a real regex. */
function plainValues(matcher: Matcher): string[] | undefined {
  if (matcher.op === '=' || matcher.op === '!=') return [matcher.value]
  return /^[\w:/-]+(\|[\w:/-]+)*$/.test(matcher.value) ? matcher.value.split('|') : undefined
}

/** What in a query the scrape does not have, one line each. */
function missingFrom(scrape: Exposition, where: string, expr: string): string[] {
  const problems: string[] = []
  const { selectors, grouping } = readQuery(expr)
  const known = new Set(TARGET_LABELS)
  for (const { metric, matchers } of selectors) {
    if (PROMETHEUS_SERIES.has(metric)) {
      for (const m of matchers) if (!TARGET_LABELS.has(m.label)) problems.push(`${where}: ${metric} has no label ${m.label}`)
      continue
    }
    const exposed = scrape.get(metric)
    if (!exposed) {
      problems.push(`${where}: no metric ${metric || '(a selector without a name)'} on /metrics`)
      continue
    }
    for (const label of exposed.labels.keys()) known.add(label)
    for (const matcher of matchers) {
      if (TARGET_LABELS.has(matcher.label)) continue
      const values = exposed.labels.get(matcher.label)
      if (!values) {
        problems.push(`${where}: ${metric} has no label ${matcher.label}`)
        continue
      }
      if (matcher.label === 'status') {
        // Any HTTP status may be answered; the traffic here makes few of them.
        if (!/^[1-5][\d.]{2}$/.test(matcher.value)) problems.push(`${where}: status ${matcher.op}"${matcher.value}" is no HTTP status`)
        continue
      }
      const words = new Set(exposed.help.match(/[a-z_]+/g))
      const plain = plainValues(matcher)
      if (plain) {
        // Seen on this scrape, or named by the metric's own HELP where this traffic does not reach it (a busy face check).
        for (const value of plain) if (!values.has(value) && !words.has(value)) problems.push(`${where}: ${metric}{${matcher.label}} never "${value}"`)
      } else if (![...values].some((value) => new RegExp(`^(?:${matcher.value})$`).test(value))) {
        problems.push(`${where}: ${metric}{${matcher.label}${matcher.op}"${matcher.value}"} matches no value on /metrics`)
      }
    }
  }
  for (const label of grouping) if (!known.has(label)) problems.push(`${where}: grouped by ${label}, a label none of its metrics has`)
  return problems
}

let flow: CredentialFlow
let ctx: TestContext
let lists: StatusServer
let server: ReturnType<typeof Bun.serve>
let scrape: Exposition

/** Traffic that gives the labelled series values: each is created by its first event. */
async function driveTraffic() {
  const sandbox = await ctx.createClient({ name: 'Sandbox shop', sandbox: true })
  const pass = async (age: string) => {
    const browser = testBrowser(ctx)
    const { page } = await browser.open({ client_id: sandbox.id, state: 'st' })
    return browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, age, method_class: 'age_only' })
  }
  expect(callback(await pass('10'))).toBeUndefined()
  const approved = callback(await pass('30'))!
  const exchange = { grant_type: 'authorization_code', code: approved.code, redirect_uri: REDIRECT_URI, state: 'st' }
  const token = await ctx.exchange(sandbox.authorization, exchange)
  expect(token.status).toBe(200)
  expect((await ctx.exchange(sandbox.authorization, exchange)).status).toBe(400)
  const { access_token } = (await token.json()) as { access_token: string }
  await ctx.request(`/api/verify/token/${access_token}`)
  await ctx.request('/api/oauth/validate', { method: 'POST', headers: { 'content-type': 'application/json', authorization: basic(sandbox.id, sandbox.secret) }, body: JSON.stringify({ token: access_token }) })

  const uri = lists.url('/metrics-valid.jwt')
  lists.route('/metrics-valid.jwt', await signDevStatusList(flow.issuer, { statuses: [0, 0], sub: uri, iat: Math.floor(NOW.getTime() / 1000), ttl: 300 }))
  const started = await flow.startRequest()
  const wallet = await flow.walletWith('sd-jwt', 30, { status: { idx: 1, uri } })
  expect(await presentToVerifier(wallet, started.request.wallet_url, { now: NOW, fetcher: flow.fetcher })).toEqual({ status: 200, body: {} })
  expect(callback(await started.redeem())).toBeDefined()

  await ctx.request('/gate/auth', { headers: { 'x-forwarded-host': 'not-gated.example', 'x-forwarded-proto': 'https' } })
  await ctx.request('/readyz')
}

beforeAll(async () => {
  flow = await openCredentialFlow({ METRICS_TOKEN: TOKEN })
  ctx = flow.ctx
  lists = startStatusServer()
  // The scrape goes over HTTP with the bearer token, as Prometheus's does.
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: ctx.handle })
  await driveTraffic()
  const response = await fetch(`http://127.0.0.1:${server.port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  expect(response.status).toBe(200)
  scrape = readExposition(await response.text())
}, 60_000)
afterAll(async () => {
  await server?.stop(true)
  lists?.stop()
  await ctx?.close()
})

describe('the files', () => {
  test('the rules are a Prometheus rule file: groups of alerts, each with an expression, a severity, a summary and what to do', () => {
    const names = rules.groups.flatMap((group) => group.rules.map((rule) => rule.alert))
    expect(names.length).toBeGreaterThan(10)
    expect(new Set(names).size).toBe(names.length)
    for (const group of rules.groups) {
      expect(group.name).toMatch(/^ofage-[a-z-]+$/)
      for (const rule of group.rules) {
        expect(Object.keys(rule).filter((key) => !['alert', 'expr', 'for', 'labels', 'annotations'].includes(key))).toEqual([])
        expect(rule.alert).toMatch(/^Ofage[A-Za-z]+$/)
        expect(['critical', 'warning', 'info']).toContain(rule.labels?.severity ?? '')
        if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/)
        expect(Object.keys(rule.annotations ?? {}).sort()).toEqual(['description', 'summary'])
        expect(rule.annotations!.description!.length).toBeGreaterThan(100)
      }
    }
  })

  test('the dashboard is a Grafana dashboard: every query on the chosen Prometheus data source, ids and refIds unique', () => {
    expect(dashboard.uid).toBe('ofage-overview')
    const ids = dashboard.panels.map((panel) => panel.id)
    expect(new Set(ids).size).toBe(ids.length)
    const charts = dashboard.panels.filter((panel) => panel.type !== 'row')
    expect(charts.length).toBeGreaterThan(10)
    for (const panel of charts) {
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' })
      expect(panel.gridPos).toBeDefined()
      const refIds = panel.targets!.map((target) => target.refId)
      expect(new Set(refIds).size).toBe(refIds.length)
      for (const target of panel.targets!) expect(target.datasource?.uid).toBe('${datasource}')
    }
    expect(dashboard.templating.list.map((variable) => variable.name)).toEqual(['datasource', 'job', 'instance'])
  })

  test('a query the grammar cannot read, or a name /metrics lacks, is reported (the check itself)', () => {
    expect(() => readQuery('sum by (route (rate(x[5m]))')).toThrow('syntax error')
    expect(missingFrom(scrape, 'q', 'rate(ofage_verification_total[5m])')).toEqual(['q: no metric ofage_verification_total on /metrics'])
    expect(missingFrom(scrape, 'q', 'ofage_codes_total{event="lost"}')).toEqual(['q: ofage_codes_total{event} never "lost"'])
    expect(missingFrom(scrape, 'q', 'sum by (client) (ofage_codes_total{kind="x"})')).toEqual(['q: ofage_codes_total has no label kind', 'q: grouped by client, a label none of its metrics has'])
    expect(missingFrom(scrape, 'q', 'ofage_http_requests_total{route=~"/api/nothing.*"}')).toEqual(['q: ofage_http_requests_total{route=~"/api/nothing.*"} matches no value on /metrics'])
  })
})

describe('every name they use is on /metrics', () => {
  test('the scrape has each of the service metrics, with its labels', () => {
    for (const name of ['ofage_http_requests_total', 'ofage_http_request_duration_seconds_bucket', 'ofage_verifications_total', 'ofage_codes_total', 'ofage_credential_revocation_checks_total', 'ofage_gate_checks_total', 'ofage_webhook_attempts_total', 'ofage_rate_limited_total', 'ofage_plan_limit_refusals_total', 'ofage_process_memory_bytes']) {
      expect(scrape.get(name)?.labels.get('worker')).toEqual(new Set(['0']))
    }
    expect([...scrape.get('ofage_verifications_total')!.labels.get('method')!].sort()).toEqual(['credential', 'sandbox'])
  })

  test.each(queries().map((query) => [query.where, query.expr]))('%s', (where, expr) => {
    expect(missingFrom(scrape, where, expr)).toEqual([])
  })
})

const promtool = Bun.which('promtool')
if (!promtool) console.log('promtool not installed: `promtool check rules` skipped (apt-get install prometheus); the queries were still parsed above')

describe('promtool', () => {
  test.skipIf(!promtool)('promtool check rules accepts the rules, and the dashboard queries written as recording rules', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ofage-promtool-'))
    try {
      const recorded = queries().filter((query) => !query.where.startsWith('rule '))
      const file = join(dir, 'dashboard-queries.yml')
      writeFileSync(file, JSON.stringify({ groups: [{ name: 'dashboard', rules: recorded.map((query, i) => ({ record: `ofage:dashboard_query:${i}`, expr: query.expr })) }] }))
      const checked = Bun.spawnSync([promtool!, 'check', 'rules', RULES_FILE, file])
      expect({ exitCode: checked.exitCode, output: `${checked.stdout}${checked.stderr}` }).toMatchObject({ exitCode: 0 })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test.skipIf(!promtool)("the rules hold when a target's scrapes are answered by its workers in turn (promtool test rules)", () => {
    const expr = (alert: string) => rules.groups.flatMap((group) => group.rules).find((rule) => rule.alert === alert)!.expr
    const target = 'job="ofage",instance="a:3000",host="a"'
    const token = `${target},method="POST",route="/api/oauth/token"`
    // Each series present at its worker's scrapes (every other minute) and stale in between, as Prometheus
    // records a series that the last scrape did not return.
    const inTurn = (worker: 0 | 1, perMinute: number) =>
      Array.from({ length: 31 }, (_, t) => (t % 2 === worker ? String(perMinute * t) : t < worker ? '_' : 'stale')).join(' ')
    const tests = {
      rule_files: [RULES_FILE],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            // Worker 0 answers 1 call a second, 5% of them 500s; worker 1 as many, none: 2.5% of the route's calls.
            { series: `ofage_http_requests_total{${token},status="200",worker="0"}`, values: inTurn(0, 57) },
            { series: `ofage_http_requests_total{${token},status="500",worker="0"}`, values: inTurn(0, 3) },
            { series: `ofage_http_requests_total{${token},status="200",worker="1"}`, values: inTurn(1, 60) },
            // Each process far over the bound, seen only at its own scrapes.
            { series: `ofage_process_memory_bytes{${target},kind="rss",worker="0"}`, values: inTurn(0, 0).replaceAll(/\b0\b/g, '2e9') },
            { series: `ofage_process_memory_bytes{${target},kind="rss",worker="1"}`, values: inTurn(1, 0).replaceAll(/\b0\b/g, '2e9') },
            // The first dead letter of a process: from the 0 it exported at start to 1.
            { series: `ofage_webhook_attempts_total{${target},outcome="dead",worker="0"}`, values: '0x20 1x10' },
          ],
          promql_expr_test: [
            { expr: `sum by (route) (${expr('OfageServerErrors')})`, eval_time: '20m', exp_samples: [{ labels: '{route="/api/oauth/token"}', value: 0.025 }] },
            { expr: `count(${expr('OfageMemoryHigh')})`, eval_time: '21m', exp_samples: [{ labels: '{}', value: 2 }] },
            { expr: `count(${expr('OfageWebhookDeadLetters')})`, eval_time: '25m', exp_samples: [{ labels: '{}', value: 1 }] },
          ],
        },
      ],
    }
    const dir = mkdtempSync(join(tmpdir(), 'ofage-promtool-'))
    try {
      const file = join(dir, 'rules.test.yml')
      writeFileSync(file, JSON.stringify(tests))
      const tested = Bun.spawnSync([promtool!, 'test', 'rules', file])
      expect({ exitCode: tested.exitCode, output: `${tested.stdout}${tested.stderr}` }).toMatchObject({ exitCode: 0 })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
