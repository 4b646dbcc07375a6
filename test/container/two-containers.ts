import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose'
import postgres from 'postgres'
import { basic, freePort, freshDatabaseUrl, REDIRECT_URI } from '../helpers.ts'
import { callback, readPage, testBrowser } from '../verification/browser.ts'

/**
 * The container image (Containerfile) as an operator runs it: two containers of it on one Postgres database,
 * as two replicas behind a balancer, each with a read-only root, /tmp on a tmpfs, the image's non-root user
 * and no capability. A client made by the image's own CLI; a verification whose steps alternate between the
 * two; then one container stopped (SIGTERM, `docker stop`) while visitors post to it, and nothing lost: every
 * code it answered is redeemed on the other, and the usage count equals the audit rows.
 *
 * Not a `*.test.ts` file, so `npm test` never runs it: `.ci/container.sh` starts the engine, builds the image
 * and runs `bun test ./test/container/two-containers.ts` with OFAGE_IMAGE (the tag it built) and
 * DATABASE_URL (a Postgres server where the user may create databases). The containers use the host's
 * network: the host's Postgres listens on loopback only, and nothing leaves 127.0.0.1.
 */
const DOCKER = process.env.DOCKER ?? 'docker'
const IMAGE = process.env.OFAGE_IMAGE
const LABEL = process.env.OFAGE_CI_LABEL ?? `ofage-ci=${process.pid}`
if (!IMAGE || !process.env.DATABASE_URL) throw new Error('run through .ci/container.sh: it sets OFAGE_IMAGE and DATABASE_URL')

type Container = { name: string; url: string; readyMs: number }
type Client = { client_id: string; client_secret: string }
let database: Awaited<ReturnType<typeof freshDatabaseUrl>>
let publicUrl: string
let a: Container
let b: Container
// What each step leaves to the next: the scenario runs in order, as one operator's day.
let client: Client
let firstToken: string

async function docker(...args: string[]): Promise<string> {
  const child = Bun.spawn([DOCKER, ...args], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err, status] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  if (status !== 0) throw new Error(`docker ${args.join(' ')}: exit ${status}: ${err.trim()}`)
  return out
}

/** The flags an operator's `docker run` would have (docs/deploy.md, "Container"), plus this run's label. */
function runFlags(env: Record<string, string>): string[] {
  const flags = ['--label', LABEL, '--network', 'host', '--read-only', '--tmpfs', '/tmp:exec', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges']
  for (const [name, value] of Object.entries(env)) flags.push('-e', `${name}=${value}`)
  return flags
}

/** `docker run`, then /readyz until 200: the time from the command to ready is what an orchestrator waits. */
async function startContainer(name: string, port: number): Promise<Container> {
  const started = performance.now()
  await docker('run', '-d', '--name', name, ...runFlags({ DATABASE_URL: database.url, PORT: String(port), PUBLIC_URL: publicUrl }), IMAGE!)
  const url = `http://127.0.0.1:${port}`
  return { name, url, readyMs: await readyAfter(name, url, started) }
}

async function readyAfter(name: string, url: string, started: number): Promise<number> {
  while (!(await fetch(`${url}/readyz`).then((r) => r.ok, () => false))) {
    if (performance.now() - started > 60_000) throw new Error(`${name} not ready after 60 s:\n${await docker('logs', '--tail', '20', name)}`)
    await Bun.sleep(50)
  }
  return Math.round(performance.now() - started)
}

/** The YAML block after `<!-- snippet: kubernetes -->` in docs/deploy.md: its documents, parsed. */
function kubernetesExample(): any[] {
  const text = readFileSync(join(import.meta.dir, '..', '..', 'docs', 'deploy.md'), 'utf8')
  const block = /<!-- snippet: kubernetes -->\n```yaml\n([\s\S]*?)```/.exec(text)
  if (!block) throw new Error('docs/deploy.md has no snippet "kubernetes"')
  return Bun.YAML.parse(block[1]!) as any[]
}

/** A visitor at A's page for this client, before the check. */
async function visit(state: string) {
  const browser = testBrowser({ baseUrl: a.url })
  const { page } = await browser.open({ client_id: client.client_id, state })
  return { browser, page, state }
}

const SANDBOX_CHECK = { age: '30', method_class: 'age_only' }

async function exchange(url: string, code: string, state: string) {
  const response = await fetch(`${url}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: basic(client.client_id, client.client_secret) },
    body: JSON.stringify({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, state }),
  })
  return { status: response.status, body: (await response.json()) as { access_token: string } }
}

beforeAll(async () => {
  database = await freshDatabaseUrl()
  const ports = [await freePort(), await freePort()]
  // Replicas share one public address (the balancer's), so tokens from either carry the same issuer.
  publicUrl = `http://127.0.0.1:${ports[0]}`
  // Started together: both migrate the empty database, one behind the other's advisory lock.
  ;[a, b] = await Promise.all(ports.map((port, i) => startContainer(`ofage-ci-${process.pid}-${'ab'[i]}`, port))) as [Container, Container]
  console.log(`container timings: ready ${[a, b].map((c) => `${c.name} ${c.readyMs} ms`).join(', ')} (docker run to /readyz 200, both at once, on an empty database)`)
}, 120_000)

afterAll(async () => {
  await Promise.all([a, b].filter(Boolean).map((c) => docker('rm', '-f', c.name).catch(() => {})))
  await database?.drop()
}, 60_000)

test('both run as the image\'s user 10001 on a read-only root', async () => {
  for (const c of [a, b]) {
    const [seen] = JSON.parse(await docker('inspect', c.name)) as [{ Config: { User: string }; HostConfig: { ReadonlyRootfs: boolean } }]
    expect([seen.Config.User, seen.HostConfig.ReadonlyRootfs]).toEqual(['10001:10001', true])
  }
})

test('the age model runs in onnxruntime, loaded from the tmpfs', async () => {
  for (const c of [a, b]) {
    const child = Bun.spawn([DOCKER, 'logs', c.name], { stdout: 'pipe', stderr: 'pipe' })
    const lines = (await new Response(child.stderr).text()).split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines.find((line) => line.event === 'face_check_ready')).toMatchObject({ model_runtime: 'onnxruntime' })
  }
})

test('the image\'s CLI creates a client; a verification whose every step goes to the other container passes', async () => {
  client = JSON.parse(
    await docker('run', '--rm', ...runFlags({ DATABASE_URL: database.url }), IMAGE!, 'clients', 'create', '--name', 'Container shop', '--redirect-uri', REDIRECT_URI, '--sandbox', '--json'),
  ) as Client
  // docs/integration.md's walk: pushed on A, the page on A, the check posted to B (the session is in the
  // database, not in A), the code exchanged on B, the token checked on A, and locally with A's key set.
  const pushed = await fetch(`${a.url}/api/oauth/par`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, client.client_secret) },
    body: new URLSearchParams({ response_type: 'code', redirect_uri: REDIRECT_URI, state: 'across', age_required: '21' }).toString(),
  })
  expect(pushed.status).toBe(201)
  const { request_uri } = (await pushed.json()) as { request_uri: string }
  const onA = testBrowser({ baseUrl: a.url })
  const page = await readPage(await onA.request(`/?${new URLSearchParams({ client_id: client.client_id, request_uri })}`))
  const onB = testBrowser({ baseUrl: b.url })
  for (const [name, value] of onA.jar) onB.jar.set(name, value)
  const back = callback(await onB.post(page.action('/methods/sandbox'), { csrf: page.csrf!, ...SANDBOX_CHECK }))!
  expect([back.state, back.url.searchParams.get('iss')]).toEqual(['across', publicUrl])
  const token = await exchange(b.url, back.code, 'across')
  expect(token.status).toBe(200)
  firstToken = token.body.access_token
  expect(await (await fetch(`${a.url}/api/verify/token/${firstToken}`)).json()).toMatchObject({ valid: true, age_over: 21, sandbox: true })
  const keySet = (await (await fetch(`${a.url}/api/.well-known/jwks.json`)).json()) as { keys: JWK[] }
  expect((await jwtVerify(firstToken, createLocalJWKSet(keySet), { issuer: publicUrl, audience: client.client_id })).payload.age_over).toBe(21)
}, 60_000)

test('one stopped while visitors post to it: it exits 0, the other redeems every code it gave, usage equals the audit rows', async () => {
  // A code A gave before the stop, not yet redeemed.
  const pending = await visit('before-stop')
  const before = callback(await pending.browser.post(pending.page.action('/methods/sandbox'), { csrf: pending.page.csrf!, ...SANDBOX_CHECK }))!
  // Four visitors at a time post to A, each after the last answer; A is stopped once four have answered,
  // so the stop lands among posts in flight and posts still to come.
  const visitors = await Promise.all(Array.from({ length: 24 }, (_, i) => visit(`during-stop-${i}`)))
  const outcomes: { state: string; code: string | undefined; status: number }[] = []
  let fourAnswered = () => {}
  const underWay = new Promise<void>((resolve) => (fourAnswered = resolve))
  const lanes = Array.from({ length: 4 }, async (_, lane) => {
    for (let i = lane; i < visitors.length; i += 4) {
      const { browser, page, state } = visitors[i]!
      outcomes.push(
        await browser.post(page.action('/methods/sandbox'), { csrf: page.csrf!, ...SANDBOX_CHECK }).then(
          (response) => ({ state, code: callback(response)?.code, status: response.status }),
          () => ({ state, code: undefined, status: 0 }),
        ),
      )
      if (outcomes.length === 4) fourAnswered()
    }
  })
  await Promise.race([underWay, Promise.all(lanes)])
  const stopping = performance.now()
  await docker('stop', '--time', '30', a.name)
  const stopMs = Math.round(performance.now() - stopping)
  await Promise.all(lanes)
  const answered = outcomes.filter((o) => o.code !== undefined)
  console.log(`container timings: docker stop ${stopMs} ms; ${answered.length} of ${outcomes.length} posts around the stop answered with a code, the rest refused`)
  // A clean stop: SIGTERM handled, exit 0, not killed after the grace period.
  expect(JSON.parse(await docker('inspect', '--format', '{{json .State}}', a.name))).toMatchObject({ ExitCode: 0, OOMKilled: false })
  // Every post either got its code or never reached the server: none half-done (an error page, a 5xx).
  expect(outcomes.filter((o) => o.code === undefined && o.status !== 0)).toEqual([])

  for (const { code, state } of [{ code: before.code, state: 'before-stop' }, ...answered]) {
    const redeemed = await exchange(b.url, code!, state)
    expect(redeemed.status).toBe(200)
    expect(((await (await fetch(`${b.url}/api/verify/token/${redeemed.body.access_token}`)).json()) as { valid: boolean }).valid).toBe(true)
  }
  const usage = (await (await fetch(`${b.url}/api/oauth/usage`, { headers: { authorization: basic(client.client_id, client.client_secret) } })).json()) as { usage: { total_verifications: number } }
  const sql = postgres(database.url, { max: 1, onnotice: () => {} })
  const [audit] = await sql`select count(*)::int as rows from audit_logs where client_id = ${client.client_id}`
  await sql.end()
  expect([usage.usage.total_verifications, audit!.rows]).toEqual([2 + answered.length, 2 + answered.length])
  expect((await fetch(`${b.url}/readyz`)).status).toBe(200)
}, 60_000)

test('the stopped one started again (a new, empty /tmp) is ready and accepts a token signed before the stop', async () => {
  const restarting = performance.now()
  await docker('start', a.name)
  console.log(`container timings: ${a.name} started again, ready in ${await readyAfter(a.name, a.url, restarting)} ms (a migrated database)`)
  expect(((await (await fetch(`${a.url}/api/verify/token/${firstToken}`)).json()) as { valid: boolean }).valid).toBe(true)
}, 60_000)

test('the Kubernetes example of docs/deploy.md fits the image: port, user, read-only root, /tmp volume, probe paths', async () => {
  const [image] = JSON.parse(await docker('image', 'inspect', IMAGE!)) as [{ Config: { User: string; Env: string[]; ExposedPorts: Record<string, object> } }]
  const manifest = kubernetesExample()
  const pod = manifest.find((doc) => doc.kind === 'Deployment').spec.template.spec
  const container = pod.containers[0]
  const port = image.Config.Env.find((entry) => entry.startsWith('PORT='))!.slice('PORT='.length)
  expect([container.ports[0].containerPort, Object.keys(image.Config.ExposedPorts)]).toEqual([Number(port), [`${port}/tcp`]])
  expect(`${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`).toBe(image.Config.User)
  expect(container.securityContext.readOnlyRootFilesystem).toBe(true)
  const tmp = container.volumeMounts.find((mount: { mountPath: string }) => mount.mountPath === '/tmp')
  expect(pod.volumes.find((volume: { name: string }) => volume.name === tmp.name).emptyDir).toBeDefined()
  expect(manifest.find((doc) => doc.kind === 'Service').spec.ports[0].targetPort).toBe(container.ports[0].name)
  for (const probe of [container.startupProbe, container.readinessProbe, container.livenessProbe]) {
    expect([probe.httpGet.path, (await fetch(`${b.url}${probe.httpGet.path}`)).status]).toEqual([probe.httpGet.path, 200])
  }
})

test('Docker reports the image\'s HEALTHCHECK (bash to /readyz) healthy', async () => {
  // Its first probe comes 10 s after the start.
  for (let waited = 0; (await docker('inspect', '--format', '{{.State.Health.Status}}', b.name)).trim() !== 'healthy'; waited += 500) {
    if (waited > 30_000) throw new Error(`${b.name} not healthy: ${await docker('inspect', '--format', '{{json .State.Health}}', b.name)}`)
    await Bun.sleep(500)
  }
}, 60_000)
