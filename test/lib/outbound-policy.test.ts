import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { LookupAddress } from 'node:dns'
import { knownAddresses, refuseAddress } from '../../src/lib/address-policy.ts'
import { fetchBounded, postBounded, type OutboundFetchOptions } from '../../src/lib/outbound-fetch.ts'
import { listen, type Listener } from './tcp-listener.ts'

/**
 * Issue 30: one address policy for every outbound request. A webhook's POST and a list's GET go through the
 * same connect-time check, so every way of writing a loopback, private or metadata address is refused by
 * the same code, and a name is judged by what it resolves to. Each form is aimed at a real listener on this
 * machine's loopback: a refusal is proved by the listener never seeing a connection, not by a message.
 */
const PRODUCTION: OutboundFetchOptions = { allowLoopback: false, allowHttp: true, timeoutMs: 2_000 }
const get = (url: string, options: Partial<OutboundFetchOptions> = {}) => fetchBounded(url, { ...PRODUCTION, ...options, accept: '*/*' })
const post = (url: string, options: Partial<OutboundFetchOptions> = {}) => postBounded(url, { ...PRODUCTION, ...options, headers: { 'content-type': 'application/json' }, body: '{"type":"webhook.test"}' })
const answers = (...addresses: string[]) => async (): Promise<LookupAddress[]> => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))

let v4: Listener
let v6: Listener

beforeAll(async () => {
  v4 = await listen('127.0.0.1')
  v6 = await listen('::1')
})
beforeEach(() => {
  v4.connections = 0
  v6.connections = 0
})
afterAll(async () => {
  await v4.close()
  await v6.close()
})

/** Every way of writing this machine's loopback in a URL that the issue names, each at a real listener. */
const loopbackForms = () => [
  ...['localhost.', 'LOCALHOST', 'localhost', 'foo.localhost', 'FOO.LocalHost.', '127.1', '2130706433', '0x7f000001', '0177.0.0.1', '127.0.0.1.', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]'].map((host) => `https://${host}:${v4.port}/hook`),
  `https://[::1]:${v6.port}/hook`,
  `http://[::1]:${v6.port}/hook`,
  `http://localhost.:${v4.port}/hook`,
]

/** Private, link-local, unspecified and metadata addresses: nothing listens there, and nothing is tried. */
const privateForms = ['http://0.0.0.0/hook', 'http://0/hook', 'http://169.254.169.254/latest/meta-data/', 'http://2852039166/', 'https://10.0.0.7/hook', 'https://10.255.1.1/hook', 'https://192.168.1.1/hook', 'https://172.16.0.1/hook', 'https://100.64.0.1/hook', 'https://[fc00::1]/hook', 'https://[fd12:3456::1]/hook', 'https://[fe80::1]/hook', 'https://[febf::1]/hook', 'https://[::ffff:10.0.0.7]/hook', 'https://[::ffff:a9fe:a9fe]/hook', 'https://[::]/hook']

describe('the same code refuses every form, for a webhook POST and a list GET alike', () => {
  test('loopback written as a trailing-dot, upper-case or sub-domain localhost name, a short, decimal, hex or octal IPv4 address, or IPv4-mapped IPv6: refused, and the listener sees no connection', async () => {
    for (const url of loopbackForms()) {
      expect([url, await post(url)]).toEqual([url, { ok: false, failure: 'refused_address' }])
      expect([url, await get(url)]).toEqual([url, { ok: false, failure: 'refused_address' }])
    }
    expect([v4.connections, v6.connections]).toEqual([0, 0])
  })

  test('private, link-local, unique local, unspecified and cloud metadata addresses are refused at once, without asking DNS', async () => {
    let resolved = 0
    const resolveHost = async () => {
      resolved++
      return [{ address: '93.184.215.14', family: 4 }]
    }
    for (const url of privateForms) {
      const started = performance.now()
      expect([url, await post(url, { resolveHost })]).toEqual([url, { ok: false, failure: 'refused_address' }])
      expect([url, await get(url, { resolveHost })]).toEqual([url, { ok: false, failure: 'refused_address' }])
      // A connection to 10.0.0.7 or 169.254.169.254 would wait for the timeout (2 s): this answers at once.
      expect(performance.now() - started).toBeLessThan(500)
    }
    expect(resolved).toBe(0)
  })

  test('a name is judged by every address it resolves to when connecting: loopback, mapped, private or metadata answers are refused', async () => {
    const url = `https://hooks.shop.example:${v4.port}/hook`
    for (const resolveHost of [answers('127.0.0.1'), answers('::ffff:127.0.0.1'), answers('::1'), answers('0.0.0.0'), answers('169.254.169.254'), answers('10.0.0.7'), answers('192.168.0.10'), answers('fd00::7'), answers('fe80::7'), answers('93.184.215.14', '127.0.0.1'), answers()]) {
      expect(await post(url, { resolveHost })).toEqual({ ok: false, failure: 'refused_address' })
      expect(await get(url, { resolveHost })).toEqual({ ok: false, failure: 'refused_address' })
    }
    expect(v4.connections).toBe(0)
  })

  test('a localhost name is loopback whatever the resolver says: no DNS answer can make it public', async () => {
    let asked = 0
    const resolveHost = async () => {
      asked++
      return [{ address: '93.184.215.14', family: 4 }]
    }
    for (const host of ['localhost.', 'foo.localhost', 'a.b.LOCALHOST.']) expect([host, await post(`https://${host}:${v4.port}/hook`, { resolveHost })]).toEqual([host, { ok: false, failure: 'refused_address' }])
    expect(asked).toBe(0)
    expect(knownAddresses('notlocalhost.example')).toBeUndefined()
    expect(knownAddresses('localhost.example')).toBeUndefined()
  })
})

describe('redirects', () => {
  test('a webhook POST follows no redirect: the 3xx is the answer, and the address it points to sees nothing', async () => {
    const redirecting = await listen('127.0.0.1', `HTTP/1.1 307 Temporary Redirect\r\nlocation: http://localhost.:${v4.port}/hook\r\nconnection: close\r\n\r\n`)
    try {
      // The receiver itself is allowed here (an operator's own network), its redirect's target is not followed anyway.
      expect(await post(`http://127.0.0.1:${redirecting.port}/hook`, { allowedNetworks: [`127.0.0.1/32`] })).toEqual({ ok: true, status: 307 })
      expect([redirecting.connections, v4.connections]).toEqual([1, 0])
    } finally {
      await redirecting.close()
    }
  })

  test('a list GET redirected from an allowed address to a refused one is refused: to another origin, or to the same name once it resolves elsewhere', async () => {
    const redirecting = await listen('127.0.0.1', `HTTP/1.1 302 Found\r\nlocation: http://localhost.:${v4.port}/list\r\nconnection: close\r\n\r\n`)
    const sameOrigin = await listen('127.0.0.1', 'HTTP/1.1 302 Found\r\nlocation: /next\r\nconnection: close\r\n\r\n')
    try {
      const allowed = { allowedNetworks: ['127.0.0.1/32'] }
      expect(await get(`http://127.0.0.1:${redirecting.port}/list`, allowed)).toEqual({ ok: false, failure: 'refused_url' })
      // DNS rebinding between hops: the name answered the allowed address, then the metadata service's.
      const rebinding = [answers('127.0.0.1'), answers('169.254.169.254')]
      const resolveHost = async () => rebinding.shift()!()
      expect(await get(`http://lists.example:${sameOrigin.port}/list`, { ...allowed, resolveHost })).toEqual({ ok: false, failure: 'refused_address' })
      expect([redirecting.connections, sameOrigin.connections, v4.connections]).toEqual([1, 1, 0])
    } finally {
      await redirecting.close()
      await sameOrigin.close()
    }
  })
})

describe("the operator's allowances", () => {
  test('loopback outside production reaches the listener, in every form of the address', async () => {
    for (const host of ['localhost.', '127.1', '2130706433', '[::ffff:127.0.0.1]']) expect([host, await post(`http://${host}:${v4.port}/hook`, { allowLoopback: true })]).toEqual([host, { ok: true, status: 204 }])
    expect(v4.connections).toBe(4)
  })

  test('OUTBOUND_ALLOWED_NETWORKS opens exactly the networks named, whatever form the address is written in', async () => {
    const allowedNetworks = ['127.0.0.1/32', '10.0.5.0/24']
    expect(await post(`http://127.1:${v4.port}/hook`, { allowedNetworks })).toEqual({ ok: true, status: 204 })
    expect(await post(`http://[::ffff:127.0.0.1]:${v4.port}/hook`, { allowedNetworks })).toEqual({ ok: true, status: 204 })
    expect(await post(`http://[::1]:${v6.port}/hook`, { allowedNetworks })).toEqual({ ok: false, failure: 'refused_address' })
    expect(refuseAddress('127.0.0.2', { allowLoopback: false, allowedNetworks })).toBe('loopback_address')
    expect(refuseAddress('10.0.5.9', { allowLoopback: false, allowedNetworks })).toBeUndefined()
    expect(refuseAddress('::ffff:10.0.5.9', { allowLoopback: false, allowedNetworks })).toBeUndefined()
    expect(refuseAddress('10.0.6.1', { allowLoopback: false, allowedNetworks })).toBe('private_address')
    expect(refuseAddress('169.254.169.254', { allowLoopback: true, allowedNetworks })).toBe('private_address')
  })
})
