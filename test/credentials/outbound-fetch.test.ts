import 'reflect-metadata'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import * as x509 from '@peculiar/x509'
import { refuseAddress } from '../../src/lib/address-policy.ts'
import { fetchBounded, type OutboundFetchOptions } from '../../src/lib/outbound-fetch.ts'
import { startStatusServer, type StatusServer } from './status-fixtures.ts'

/**
 * The one way ofage fetches an address a credential named. The address is the issuer's choice, so the rules
 * are about where we refuse to go (RFC 6890's special-purpose ranges, cloud metadata) and how long we wait.
 */
const LOCAL: OutboundFetchOptions = { allowLoopback: true, timeoutMs: 2_000 }
const get = (url: string, options: Partial<OutboundFetchOptions> = {}) => fetchBounded(url, { ...LOCAL, ...options, accept: 'application/statuslist+jwt' })

let server: StatusServer

beforeAll(() => {
  server = startStatusServer({
    '/list': 'the list',
    '/missing': new Response('gone', { status: 404 }),
    '/moved': () => Response.redirect(server.url('/list'), 302),
    '/loop': () => Response.redirect(server.url('/loop'), 302),
    '/elsewhere': () => Response.redirect(server.url('/list').replace('127.0.0.1', 'localhost'), 302),
    '/to-private': () => Response.redirect('http://10.0.0.1/list', 302),
    '/to-metadata': () => Response.redirect('http://169.254.169.254/latest/meta-data/', 302),
    '/huge': () => new Response(new Uint8Array(300_000)),
    '/huge-chunked': () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            controller.enqueue(new Uint8Array(64 * 1024))
          },
        }),
      ),
    // Headers at once, then a byte every 100 ms: only a bound on the whole body stops it.
    '/drip': () =>
      new Response(
        new ReadableStream({
          async pull(controller) {
            await Bun.sleep(100)
            controller.enqueue(new Uint8Array(1))
          },
        }),
      ),
  })
})
afterAll(() => server.stop())

describe('refuseAddress', () => {
  test('private, shared, link-local, unspecified, multicast and documentation ranges are refused (RFC 6890)', () => {
    const refused = ['10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.254', '192.168.1.1', '169.254.169.254', '100.64.0.1', '100.127.255.254', '0.0.0.0', '0.1.2.3', '224.0.0.1', '255.255.255.255', '192.0.2.1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1', '::', '2001:db8::1']
    for (const address of refused) expect([address, refuseAddress(address, { allowLoopback: true })]).toEqual([address, 'private_address'])
  })

  test('an IPv6 address that carries a private IPv4 one is refused as that IPv4 address', () => {
    for (const address of ['::ffff:10.0.0.1', '::ffff:a00:1', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', '2002:c0a8:101::1', '::ffff:127.0.0.1']) {
      expect([address, refuseAddress(address, { allowLoopback: false })]).toEqual([address, address.includes('127.0.0.1') ? 'loopback_address' : 'private_address'])
    }
  })

  test('loopback only where allowed; public addresses, and the edges next to private ranges, always', () => {
    expect([refuseAddress('127.0.0.1', { allowLoopback: false }), refuseAddress('::1', { allowLoopback: false })]).toEqual(['loopback_address', 'loopback_address'])
    expect([refuseAddress('127.0.0.1', { allowLoopback: true }), refuseAddress('::1', { allowLoopback: true })]).toEqual([undefined, undefined])
    for (const address of ['8.8.8.8', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '169.253.255.255', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect([address, refuseAddress(address, { allowLoopback: false })]).toEqual([address, undefined])
    }
    expect(refuseAddress('status.example', { allowLoopback: true })).toBe('not_an_address')
  })
})

describe('fetchBounded', () => {
  test('fetches from a loopback server when allowed, and refuses it when not', async () => {
    expect(await get(server.url('/list'))).toMatchObject({ ok: true, body: new TextEncoder().encode('the list') })
    const before = server.hits.get('/list')
    expect(await get(server.url('/list'), { allowLoopback: false })).toEqual({ ok: false, failure: 'refused_address' })
    expect(server.hits.get('/list')).toBe(before)
  })

  test('plain http only to a loopback literal: not to a public or named host, whatever it resolves to', async () => {
    expect(await get('http://status.example/list', { resolveHost: async () => [{ address: '93.184.215.14', family: 4 }] })).toEqual({ ok: false, failure: 'refused_url' })
    expect(await get(server.url('/list').replace('127.0.0.1', 'localhost'))).toEqual({ ok: false, failure: 'refused_url' })
    for (const url of ['ftp://status.example/list', 'file:///etc/passwd', 'not a url', 'https://user:secret@status.example/list']) expect(await get(url)).toEqual({ ok: false, failure: 'refused_url' })
  })

  test('https to a private or metadata address is refused before any connection is tried', async () => {
    let resolved = 0
    const resolveHost = async () => {
      resolved++
      return [{ address: '8.8.8.8', family: 4 }]
    }
    for (const url of ['https://10.0.0.1/list', 'https://169.254.169.254/latest/meta-data/', 'http://169.254.169.254/', 'https://[::ffff:10.0.0.1]/list', 'https://[fd00::1]/list', 'https://0.0.0.0/']) {
      const started = performance.now()
      expect([url, await get(url, { resolveHost })]).toEqual([url, { ok: false, failure: 'refused_address' }])
      // A connection attempt to 10.0.0.1 would hang until the timeout (2 s): this answers at once.
      expect(performance.now() - started).toBeLessThan(200)
    }
    expect(resolved).toBe(0)
  })

  test('a name is refused when any address it resolves to is private, so the socket cannot fall back to it', async () => {
    const mixed = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ]
    expect(await get('https://status.example/list', { resolveHost: mixed })).toEqual({ ok: false, failure: 'refused_address' })
    expect(await get('https://status.example/list', { resolveHost: async () => [{ address: '169.254.169.254', family: 4 }] })).toEqual({ ok: false, failure: 'refused_address' })
    expect(await get('https://status.example/list', { resolveHost: async () => [] })).toEqual({ ok: false, failure: 'refused_address' })
    expect(await get('https://status.example/list', { resolveHost: async () => Promise.reject(new Error('NXDOMAIN')) })).toEqual({ ok: false, failure: 'unreachable' })
  })

  test('redirects are followed within the origin, at most three times', async () => {
    expect(await get(server.url('/moved'))).toMatchObject({ ok: true })
    const before = server.hits.get('/loop') ?? 0
    expect(await get(server.url('/loop'))).toEqual({ ok: false, failure: 'refused_url' })
    expect((server.hits.get('/loop') ?? 0) - before).toBe(4)
  })

  test('a redirect to another origin, a private address or the metadata service is refused, and not followed', async () => {
    expect(await get(server.url('/elsewhere'))).toEqual({ ok: false, failure: 'refused_url' })
    expect(await get(server.url('/to-private'))).toEqual({ ok: false, failure: 'refused_url' })
    expect(await get(server.url('/to-metadata'))).toEqual({ ok: false, failure: 'refused_url' })
  })

  test('a body past maxBytes is abandoned, whether announced by content-length or streamed', async () => {
    expect(await get(server.url('/huge'), { maxBytes: 100_000 })).toEqual({ ok: false, failure: 'too_large' })
    expect(await get(server.url('/huge-chunked'), { maxBytes: 100_000 })).toEqual({ ok: false, failure: 'too_large' })
    expect(await get(server.url('/huge'), { maxBytes: 400_000 })).toMatchObject({ ok: true })
  })

  test('a server that drips its body is cut off at the timeout, headers or not', async () => {
    const started = performance.now()
    expect(await get(server.url('/drip'), { timeoutMs: 400 })).toEqual({ ok: false, failure: 'timeout' })
    expect(performance.now() - started).toBeLessThan(1_000)
  })

  test('a non-2xx answer and a closed port are failures, not exceptions', async () => {
    expect(await get(server.url('/missing'))).toEqual({ ok: false, failure: 'http_status' })
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const url = `http://127.0.0.1:${closed.port}/list`
    await closed.stop(true)
    expect(await get(url)).toEqual({ ok: false, failure: 'unreachable' })
  })

  test('https connects to the address checked, and checks the certificate against the name asked for', async () => {
    const tls = await selfSignedTls('status.test')
    const https = Bun.serve({ hostname: '127.0.0.1', port: 0, tls: { cert: tls.cert, key: tls.key }, fetch: (request) => new Response(`host ${request.headers.get('host')}`) })
    try {
      const toLoopback = async () => [{ address: '127.0.0.1', family: 4 }]
      const url = (host: string) => `https://${host}:${https.port}/list`
      const fetched = await get(url('status.test'), { resolveHost: toLoopback, ca: [tls.cert] })
      expect(fetched.ok && new TextDecoder().decode(fetched.body)).toBe(`host status.test:${https.port}`)
      // Another name on the same address: the certificate does not name it.
      expect(await get(url('other.test'), { resolveHost: toLoopback, ca: [tls.cert] })).toEqual({ ok: false, failure: 'unreachable' })
      // A certificate no trusted authority issued.
      expect(await get(url('status.test'), { resolveHost: toLoopback })).toEqual({ ok: false, failure: 'unreachable' })
      // Loopback is the operator's to allow, over https too.
      expect(await get(url('status.test'), { resolveHost: toLoopback, ca: [tls.cert], allowLoopback: false })).toEqual({ ok: false, failure: 'refused_address' })
    } finally {
      await https.stop(true)
    }
  })
})

/** A self-signed certificate for `name` and its key, in PEM (made with @peculiar/x509 and WebCrypto). */
async function selfSignedTls(name: string): Promise<{ cert: string; key: string }> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' }
  const keys = await crypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${name}`,
    notBefore: new Date(Date.now() - 86_400_000),
    notAfter: new Date(Date.now() + 86_400_000),
    keys,
    signingAlgorithm: algorithm,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: name }])],
  })
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64')
  return { cert: certificate.toString('pem'), key: `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n` }
}
