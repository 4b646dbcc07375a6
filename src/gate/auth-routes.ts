import { Elysia, t } from 'elysia'
import type { Logger } from '../lib/log.ts'
import { security } from '../lib/openapi-security.ts'
import type { Metrics } from '../ops/metrics.ts'
import { checkGateRequest, type GateAnswer, type GateCheckDeps } from './gate-check.ts'
import { readGateRequest } from './gate-match.ts'
import { configurationNotices } from './configuration-notices.ts'

export type GateAuthDeps = GateCheckDeps & { metrics: Metrics; log: Logger }

const plain = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }

/**
 * `/gate/auth`, asked by a reverse proxy before each request to a gated site (nginx `auth_request`, Caddy
 * `forward_auth`, Traefik `ForwardAuth`), with the visitor's cookies and the host and URI it was for.
 * 200 lets the request through with `X-Age-Over` and `X-Verification-Id` for the site; 401 sends the visitor
 * to the check, or with `?redirect=1` (for proxies that pass an answer on: Caddy, Traefik) a 302 to the
 * host's `/.ofage/start`, as an absolute URL, for a GET or HEAD. 403 for a host the named client does not
 * gate, one that two entries could answer (gate-match.ts), or a suspended client; 503 when the gated hosts cannot be read. The three proxies ask with GET (Caddy and
 * Traefik name the visitor's method in `X-Forwarded-Method`), but any method is answered: Traefik's
 * `preserveRequestMethod` asks with the visitor's own.
 */
export function gateAuthRoutes(deps: GateAuthDeps) {
  const notice = configurationNotices(deps)
  return new Elysia({ name: 'gate-auth-routes' }).all(
    '/gate/auth',
    async ({ request, query }) => {
      const headers = request.headers
      // The client from the address the proxy is configured to call, never from a header: nginx's
      // auth_request passes the visitor's own headers on to us.
      const gateRequest = readGateRequest(headers, query.client)
      const answer = await checkGateRequest(deps, { ...gateRequest, cookie: headers.get('cookie') })
      deps.metrics.gateChecks.inc({ outcome: answer.outcome })
      notice(gateRequest, answer)
      return respond(answer, query.redirect === '1' || query.redirect === 'true' ? headers : undefined, request.method, deps.log)
    },
    {
      query: t.Object({ redirect: t.Optional(t.String({ maxLength: 8 })), client: t.Optional(t.String({ maxLength: 64 })) }),
      detail: {
        summary: 'Forward authentication for a gated host',
        description:
          'Called by a reverse proxy (docs/gate.md) with `client` set to the client its configuration names: 200 with X-Age-Over and X-Verification-Id for a valid gate cookie, else 401 (or 302 to /.ofage/start with ?redirect=1), 403 for an unknown, ambiguous or suspended host, 503 when the gate cannot read its configuration.',
        tags: ['Gate'],
        // The gate cookie is the visitor's, passed on by the proxy: no credential of an API caller.
        security: security.none,
      },
    },
  )
}

function respond(answer: GateAnswer, redirectFor: Headers | undefined, method: string, log: Logger): Response {
  switch (answer.outcome) {
    case 'pass':
      return new Response(null, {
        status: 200,
        headers: { 'cache-control': 'no-store', 'x-age-over': String(answer.pass.ageOver), 'x-verification-id': answer.pass.verificationId },
      })
    case 'unverified':
    case 'refused': {
      const originalMethod = redirectFor?.get('x-forwarded-method') ?? method
      if (redirectFor && (originalMethod === 'GET' || originalMethod === 'HEAD')) {
        const uri = redirectFor.get('x-forwarded-uri') ?? redirectFor.get('x-original-uri') ?? '/'
        // Absolute, on the gated origin as the directory holds it (never a header's): Traefik resolves a relative
        // Location against its auth server's address (traefik/traefik#11313), which is no page a visitor can reach.
        const location = `${answer.host.origin}/.ofage/start?rd=${encodeURIComponent(uri)}`
        return new Response(null, { status: 302, headers: { 'cache-control': 'no-store', location } })
      }
      return new Response('Age not verified for this site.\n', { status: 401, headers: plain })
    }
    case 'unknown_host':
      return new Response('This host is not gated by this age check service.\n', { status: 403, headers: plain })
    case 'ambiguous':
      return new Response('This host is not gated unambiguously: the operator must name its client in the proxy configuration.\n', { status: 403, headers: plain })
    case 'suspended':
      return new Response('This site is suspended from the age check service.\n', { status: 403, headers: plain })
    case 'unavailable':
      log.error('gate_unavailable', { message: 'the gated hosts could not be read from the database' })
      return new Response('The age check is not available right now.\n', { status: 503, headers: { ...plain, 'retry-after': '5' } })
  }
}
