import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../helpers.ts'

/**
 * nginx and Caddy as docs/gate.md configures them, run as child processes on loopback ports in a temporary
 * folder, each in front of a small upstream that records what reaches it. The configurations are the
 * documented snippets with only what a test must change: the host names, the ports, the certificate's
 * paths, and the wrapper each proxy needs to run unprivileged in a folder of its own.
 */

export const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx'
export const CADDY = process.env.CADDY_PATH ?? '/usr/bin/caddy'

const guide = readFileSync(join(import.meta.dir, '../../docs/gate.md'), 'utf8')

export type SnippetName = 'nginx-site' | 'nginx-path' | 'caddy-site' | 'caddy-path' | 'traefik'

/** The client id the snippets name, where a reader puts their own. */
export const SNIPPET_CLIENT_ID = 'cl_Wd4mQ8rT2vKx9bLe'

/** The code block of docs/gate.md that follows `<!-- snippet: name -->`, naming `clientId` where the reader's own goes. */
export function gateSnippet(name: SnippetName, clientId: string): string {
  const match = new RegExp(`<!-- snippet: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(guide)
  if (!match) throw new Error(`docs/gate.md has no snippet "${name}"`)
  return substitute(match[1]!, [[SNIPPET_CLIENT_ID, clientId]])
}

/** Replaces each `from` with its `to`, and fails when a snippet no longer holds what a test replaces. */
function substitute(text: string, replacements: [from: string, to: string][]): string {
  let result = text
  for (const [from, to] of replacements) {
    if (!result.includes(from)) throw new Error(`the snippet no longer contains ${JSON.stringify(from)}:\n${text}`)
    result = result.replaceAll(from, to)
  }
  return result
}

/** What the upstream got: the path with its query, and the headers as it received them. */
export type SeenRequest = { path: string; headers: Record<string, string> }

export type Upstream = { port: number; seen: SeenRequest[]; stop(): Promise<void> }

/** The site behind a proxy: records every request and answers a page naming its path and the X-Age-Over it got. */
export async function startUpstream(): Promise<Upstream> {
  const seen: SeenRequest[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      const url = new URL(request.url)
      const path = `${url.pathname}${url.search}`
      seen.push({ path, headers: Object.fromEntries(request.headers) })
      const escape = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)
      const body = `<!doctype html><title>Upstream</title><h1>Upstream page ${escape(path)}</h1><p id="age">X-Age-Over: ${escape(request.headers.get('x-age-over') ?? 'none')}</p>`
      return new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8' } })
    },
  })
  return { port: server.port!, seen, stop: () => server.stop(true) }
}

/** A self-signed certificate for `hosts`, made with openssl in `dir`. */
export async function makeCertificate(dir: string, hosts: string[]): Promise<{ cert: string; key: string; pem: string }> {
  const cert = join(dir, 'site.crt')
  const key = join(dir, 'site.key')
  const child = Bun.spawn(
    ['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', `/CN=${hosts[0]}`, '-addext', `subjectAltName=${hosts.map((h) => `DNS:${h}`).join(',')}`, '-keyout', key, '-out', cert],
    { stdout: 'ignore', stderr: 'pipe' },
  )
  const [status, err] = await Promise.all([child.exited, new Response(child.stderr).text()])
  if (status !== 0) throw new Error(`openssl failed: ${err}`)
  return { cert, key, pem: readFileSync(cert, 'utf8') }
}

/** One gated host of a running proxy: the snippet it runs, its origin, and the upstream behind it. */
export type ProxySite = { snippet: SnippetName; host: string; origin: string; upstream: Upstream }

export type RunningProxy = {
  name: 'nginx' | 'caddy'
  port: number
  /** The whole site gated, and one path (`/adults/`) gated with the rest open. */
  sites: { site: ProxySite; path: ProxySite }
  /** The proxy's own log so far, for a failure's message. */
  log(): string
  stop(): Promise<void>
}

/** `clientId`: the client both gated hosts' configuration names (docs/gate.md, "Who a host belongs to"). */
export type ProxyOptions = { dir: string; ofagePort: number; clientId: string; certificate: { cert: string; key: string; pem: string }; hosts: { site: string; path: string } }

type Spawned = ReturnType<typeof Bun.spawn>

/**
 * Every proxy process still running, stopped if the test process exits without its afterAll. Each runs in
 * the checkout's folder (its working directory), where `.ci/run` looks for processes left behind.
 */
const running = new Set<Spawned>()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

async function startSites(names: { site: SnippetName; path: SnippetName }, options: ProxyOptions) {
  const port = await freePort()
  const [site, path] = await Promise.all([startUpstream(), startUpstream()])
  const sites = {
    site: { snippet: names.site, host: options.hosts.site, origin: `https://${options.hosts.site}:${port}`, upstream: site },
    path: { snippet: names.path, host: options.hosts.path, origin: `https://${options.hosts.path}:${port}`, upstream: path },
  }
  return { port, sites }
}

/** Waits until the proxy answers TLS on its port for `host`, or fails with its log. */
async function waitForProxy(child: Spawned, port: number, host: string, pem: string, log: () => string): Promise<void> {
  const deadline = performance.now() + 30_000
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the proxy exited (${child.exitCode}):\n${log()}`)
    const answered = await fetch(`https://127.0.0.1:${port}/.ofage/ofage.css`, { headers: { host: `${host}:${port}` }, tls: { ca: pem, serverName: host } }).then(
      (response) => response.status < 500,
      () => false,
    )
    if (answered) return
    await Bun.sleep(100)
  }
  throw new Error(`the proxy did not answer on port ${port} within 30 s:\n${log()}`)
}

/**
 * A port found free can be taken before the proxy binds it: an outgoing connection of another test in the
 * process gets it as its local port (seen once in CI: Caddy's "bind: address already in use"). Such a start
 * is tried again on fresh ports, three times in all; any other failure is the test's.
 */
async function onFreshPorts(start: () => Promise<RunningProxy>): Promise<RunningProxy> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start()
    } catch (error) {
      if (attempt >= 3 || !/address already in use/i.test(error instanceof Error ? error.message : String(error))) throw error
    }
  }
}

/** nginx with the `nginx-site` and `nginx-path` snippets, one server block each, on one free port. */
export const startNginx = (options: ProxyOptions) => onFreshPorts(() => startNginxOnce(options))

async function startNginxOnce(options: ProxyOptions): Promise<RunningProxy> {
  const dir = join(options.dir, 'nginx')
  mkdirSync(dir, { recursive: true })
  const { port, sites } = await startSites({ site: 'nginx-site', path: 'nginx-path' }, options)
  const server = (site: ProxySite) =>
    substitute(gateSnippet(site.snippet, options.clientId), [
      ['/etc/ssl/shop.example.crt', options.certificate.cert],
      ['/etc/ssl/shop.example.key', options.certificate.key],
      ['listen 443 ssl;', `listen 127.0.0.1:${port} ssl;`],
      ['server_name shop.example;', `server_name ${site.host};`],
      ['127.0.0.1:3000', `127.0.0.1:${options.ofagePort}`],
      ['127.0.0.1:8080', `127.0.0.1:${site.upstream.port}`],
    ])
  const temp = (name: string) => `${name}_temp_path ${join(dir, name)};`
  const conf = [
    // One process: no worker to outlive its master, and none that switches to another user.
    'master_process off;',
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} info;`,
    'events { worker_connections 256; }',
    'http {',
    `access_log ${join(dir, 'access.log')};`,
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp),
    server(sites.site),
    server(sites.path),
    '}',
  ].join('\n')
  const file = join(dir, 'nginx.conf')
  writeFileSync(file, conf)
  const argv = [NGINX, '-p', `${dir}/`, '-e', join(dir, 'error.log'), '-c', file, '-g', 'daemon off;']
  return launch('nginx', argv, { port, sites, pem: options.certificate.pem, logs: [join(dir, 'stderr.log'), join(dir, 'error.log')] })
}

/** Caddy with the `caddy-site` and `caddy-path` snippets, one site block each, on one free port. */
export const startCaddy = (options: ProxyOptions) => onFreshPorts(() => startCaddyOnce(options))

async function startCaddyOnce(options: ProxyOptions): Promise<RunningProxy> {
  const dir = join(options.dir, 'caddy')
  mkdirSync(dir, { recursive: true })
  const { port, sites } = await startSites({ site: 'caddy-site', path: 'caddy-path' }, options)
  const block = (site: ProxySite) =>
    substitute(gateSnippet(site.snippet, options.clientId), [
      // The docs let Caddy get a certificate; here it is the test's own.
      ['shop.example {', `https://${site.host}:${port} {\n\ttls ${options.certificate.cert} ${options.certificate.key}`],
      ['127.0.0.1:3000', `127.0.0.1:${options.ofagePort}`],
      ['127.0.0.1:8080', `127.0.0.1:${site.upstream.port}`],
    ])
  // No admin endpoint, and no listener on port 80 (a system nginx may hold it): only the test's port.
  const global = ['{', '\tadmin off', '\tauto_https disable_redirects', `\thttp_port ${await freePort()}`, `\tstorage file_system {\n\t\troot ${join(dir, 'data')}\n\t}`, '}'].join('\n')
  const file = join(dir, 'Caddyfile')
  writeFileSync(file, [global, block(sites.site), block(sites.path)].join('\n'))
  const env = { HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config'), PATH: process.env.PATH ?? '/usr/bin:/bin' }
  const argv = [CADDY, 'run', '--config', file, '--adapter', 'caddyfile']
  return launch('caddy', argv, { env, port, sites, pem: options.certificate.pem, logs: [join(dir, 'caddy.log')] })
}

/**
 * Starts a proxy (its standard error to the first of `logs`) and waits until it answers; stops it and its
 * upstreams again when it does not.
 */
async function launch(
  name: RunningProxy['name'],
  argv: string[],
  options: { env?: Record<string, string>; port: number; sites: RunningProxy['sites']; pem: string; logs: string[] },
): Promise<RunningProxy> {
  const { port, sites } = options
  const log = () => options.logs.map(readIfThere).join('\n')
  let child: Spawned | undefined
  const stop = async () => {
    if (child) {
      child.kill('SIGTERM')
      const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(10_000).then(() => false)])
      if (!exited) child.kill('SIGKILL')
      await child.exited
      running.delete(child)
    }
    await Promise.all([sites.site.upstream.stop(), sites.path.upstream.stop()])
  }
  try {
    child = Bun.spawn(argv, { env: options.env, stdout: 'ignore', stderr: Bun.file(options.logs[0]!) })
    running.add(child)
    await waitForProxy(child, port, sites.site.host, options.pem, log)
  } catch (cause) {
    await stop()
    throw cause
  }
  return { name, port, sites, log, stop }
}

function readIfThere(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8') : ''
}

/** A temporary folder for the proxies' files, removed by `remove()`. */
export function proxyFolder(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ofage-proxies-'))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * A request as a visitor sends it through a proxy to one of its hosts, without following redirects: the
 * name on TLS and in Host is the host's, the connection goes to loopback, the certificate is the test's.
 */
export function throughProxy(proxy: RunningProxy, site: ProxySite, path: string, init: { headers?: Record<string, string>; method?: string; pem: string }) {
  return fetch(`https://127.0.0.1:${proxy.port}${path}`, {
    method: init.method ?? 'GET',
    redirect: 'manual',
    headers: { host: `${site.host}:${proxy.port}`, ...init.headers },
    tls: { ca: init.pem, serverName: site.host },
  })
}
