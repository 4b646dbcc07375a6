import { describe, expect, test } from 'bun:test'
import { matchGateHost, readGateRequest, type GateClaim, type GateRequest } from '../../src/gate/gate-match.ts'

/**
 * Which gated origin a proxy's request is for (src/gate/gate-match.ts), as a table: the claims in the
 * database, what the proxy sends, and the origin that answers, or why none does. The expected answers
 * come from docs/gate.md ("Who a host belongs to") and RFC 9110 §7.2 (a Host without a port is the
 * scheme's default port), not from the code.
 */
const claims: GateClaim[] = [
  { origin: 'https://shop.example', clientId: 'cl_live', sandbox: false },
  { origin: 'https://shop.example:8443', clientId: 'cl_live', sandbox: false },
  { origin: 'http://shop.example', clientId: 'cl_test_tenant', sandbox: true },
  { origin: 'http://both.example', clientId: 'cl_both', sandbox: false },
  { origin: 'https://both.example', clientId: 'cl_both', sandbox: false },
  { origin: 'https://alone.example', clientId: 'cl_alone', sandbox: false },
  { origin: 'http://localhost:8081', clientId: 'cl_test_dev', sandbox: true },
  { origin: 'http://[::1]:8082', clientId: 'cl_test_dev', sandbox: true },
]

const ask = (host: string, proto: string | undefined, clientId: string | undefined): GateRequest => ({ host, proto, clientId })

const table: [what: string, request: GateRequest, answer: string][] = [
  ['nginx as documented, default port', ask('shop.example:443', 'https', 'cl_live'), 'https://shop.example'],
  ['nginx as documented, another port', ask('shop.example:8443', 'https', 'cl_live'), 'https://shop.example:8443'],
  ['Caddy: the browser leaves the default port out', ask('shop.example', 'https', 'cl_live'), 'https://shop.example'],
  ['host names compare without case', ask('SHOP.Example:443', 'HTTPS', 'cl_live'), 'https://shop.example'],
  ['a port the client does not gate', ask('shop.example:80', 'https', 'cl_live'), 'unknown_host'],
  ['a scheme the client does not gate', ask('shop.example:443', 'http', 'cl_live'), 'unknown_host'],
  ["the tenant's origin, asked for the live client", ask('shop.example:80', 'http', 'cl_live'), 'unknown_host'],
  ['a client that does not list the name', ask('alone.example', 'https', 'cl_live'), 'unknown_host'],
  ['a client that does not exist', ask('shop.example', 'https', 'cl_nobody'), 'unknown_host'],
  ['a sandbox client named where a live client gates the name', ask('shop.example', 'http', 'cl_test_tenant'), 'ambiguous'],
  ['no client named, the name listed by two clients', ask('shop.example', 'https', undefined), 'ambiguous'],
  ['no client named, two clients, a port', ask('shop.example:8443', 'https', undefined), 'ambiguous'],
  ['no client named, the name listed by one client', ask('alone.example', 'https', undefined), 'https://alone.example'],
  ['no client named, one client, no scheme said', ask('alone.example', undefined, undefined), 'https://alone.example'],
  ['both schemes of one client, no scheme said', ask('both.example', undefined, 'cl_both'), 'ambiguous'],
  ['both schemes of one client, https said', ask('both.example', 'https', 'cl_both'), 'https://both.example'],
  ['both schemes of one client, http on port 80', ask('both.example:80', undefined, 'cl_both'), 'http://both.example'],
  ['a list of schemes: the first proxy\'s', ask('both.example', 'https, http', 'cl_both'), 'https://both.example'],
  ['a scheme that is not one', ask('alone.example', 'ftp', 'cl_alone'), 'unknown_host'],
  ['loopback with its port', ask('localhost:8081', 'http', 'cl_test_dev'), 'http://localhost:8081'],
  ['loopback without its port is port 80', ask('localhost', 'http', 'cl_test_dev'), 'unknown_host'],
  ['IPv6 loopback with its port', ask('[::1]:8082', 'http', 'cl_test_dev'), 'http://[::1]:8082'],
  ['a trailing dot names no gated host', ask('alone.example.', 'https', 'cl_alone'), 'unknown_host'],
  ['a port with a leading zero is the same port', ask('shop.example:08443', 'https', 'cl_live'), 'https://shop.example:8443'],
  ['a host with a path', ask('alone.example/x', 'https', 'cl_alone'), 'unknown_host'],
  ['a host with credentials', ask('user@alone.example', 'https', 'cl_alone'), 'unknown_host'],
  ['an empty host', ask('', 'https', 'cl_alone'), 'unknown_host'],
  ['a port out of range', ask('alone.example:443443', 'https', 'cl_alone'), 'unknown_host'],
]

describe('the gated origin a request is for', () => {
  for (const [what, request, answer] of table) {
    test(`${what}: ${answer}`, () => {
      const match = matchGateHost(claims, request)
      expect(match.outcome === 'found' ? match.host.origin : match.outcome).toBe(answer)
    })
  }

  test('the order the claims were read in changes no answer', () => {
    const reversed = [...claims].reverse()
    for (const [what, request] of table) {
      const [a, b] = [matchGateHost(claims, request), matchGateHost(reversed, request)]
      expect(b.outcome === 'found' ? b.host.origin : b.outcome, what).toBe(a.outcome === 'found' ? a.host.origin : a.outcome)
    }
  })
})

describe('what a proxy says of a request', () => {
  test('X-Forwarded-Host before Host, the first of a list; the scheme from X-Forwarded-Proto; the client as the route read it', () => {
    const headers = new Headers({ host: '127.0.0.1:3000', 'x-forwarded-host': 'shop.example:443, evil.example', 'x-forwarded-proto': 'https' })
    expect(readGateRequest(headers, 'cl_live')).toEqual({ host: 'shop.example:443', proto: 'https', clientId: 'cl_live' })
    expect(readGateRequest(new Headers({ host: 'shop.example' }), undefined)).toEqual({ host: 'shop.example', proto: undefined, clientId: undefined })
  })
})
