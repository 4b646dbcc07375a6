import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy between a server under test and Postgres, to break the link the ways networks do:
 * - `close()`: refuses new connections and resets every open one, as a stopped database or a restart;
 * - `stall()`: holds every byte, in both directions, until `restore()` delivers them late;
 * - `blackhole()`: drops every byte, on open and new connections alike, without resetting anything, as a
 *   half-open link or a firewall that forgot the flow; after `restore()` the dropped bytes stay lost.
 */
export class PostgresProxy {
  private server: Server | undefined
  private accepting = false
  private mode: 'flowing' | 'stalled' | 'blackholed' = 'flowing'
  private readonly pairs = new Set<[Socket, Socket]>()
  /** Taken from the OS at the first open, and kept: a reopened proxy is the same address, as a restarted database. */
  port = 0
  constructor(private readonly target: { host: string; port: number }) {}

  /** A Postgres URL that goes through this proxy. */
  via(url: string): string {
    const proxied = new URL(url)
    proxied.hostname = '127.0.0.1'
    proxied.port = String(this.port)
    return proxied.toString()
  }

  async open() {
    this.accepting = true
    this.server = createServer((client) => {
      // A connection the old listener accepted while closing must not survive the outage.
      if (!this.accepting) return client.destroy()
      const upstream = connect(this.target.port, this.target.host)
      const pair: [Socket, Socket] = [client, upstream]
      this.pairs.add(pair)
      for (const socket of pair) {
        socket.on('error', () => {})
        socket.on('close', () => (client.destroy(), upstream.destroy(), this.pairs.delete(pair)))
      }
      this.wire(pair)
    })
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve))
    this.port = (this.server.address() as AddressInfo).port
  }

  stall() {
    this.rewire('stalled')
  }

  blackhole() {
    this.rewire('blackholed')
  }

  restore() {
    this.rewire('flowing')
  }

  async close() {
    this.accepting = false
    const closed = new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
    for (const [client, upstream] of this.pairs) client.destroy(), upstream.destroy()
    await closed
    this.mode = 'flowing'
  }

  private rewire(mode: PostgresProxy['mode']) {
    this.mode = mode
    for (const pair of this.pairs) this.wire(pair)
  }

  private wire([client, upstream]: [Socket, Socket]) {
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      from.unpipe()
      from.removeAllListeners('data')
      if (this.mode === 'flowing') from.pipe(to)
      else if (this.mode === 'stalled') from.pause()
      else from.on('data', () => {}).resume()
    }
  }
}
