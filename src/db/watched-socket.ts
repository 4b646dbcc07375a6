import { connect, type Socket } from 'node:net'
import { Duplex } from 'node:stream'

/** What postgres.js passes to its `socket` option: the parsed connection target. */
type Target = { host: string[]; port: number[]; path?: string | false }

/**
 * The connections of the Postgres pool, given up when the server falls silent.
 *
 * A link that drops packets without resetting them (a half-open connection, a firewall that forgets the
 * flow, a proxy that blackholes) leaves a query waiting for an answer that never comes; TCP keepalive does
 * not probe while data is unacknowledged, so without this a pooled connection stays stuck for the minutes
 * TCP retransmission takes, and the pool with it (issue 10). Postgres answers every statement within
 * `statement_timeout`, if only with an error, so a connection that has sent something and heard nothing
 * for longer than `silenceMs` is dead: it is destroyed, its queries fail, and the pool opens a new one.
 *
 * The socket is a stream over the real one, so the same watch covers a TLS connection that postgres.js
 * negotiates over it. `silenceMs` must exceed the statement timeout set on the connection.
 */
export function watchedSockets(silenceMs: number): (target: Target) => Duplex {
  let next = 0
  return (target) => {
    const index = next++ % Math.max(1, target.host.length)
    const raw = target.path ? connect(target.path) : connect(target.port[index] ?? 5432, target.host[index] ?? 'localhost')
    return watch(raw, silenceMs, target.path ? undefined : target.host[index])
  }
}

function watch(raw: Socket, silenceMs: number, host: string | undefined): Duplex {
  // Runs while something sent has had no answer yet.
  let silence: ReturnType<typeof setTimeout> | undefined
  const heard = () => {
    clearTimeout(silence)
    silence = undefined
  }
  const socket = new Duplex({
    write(chunk, _encoding, done) {
      silence ??= setTimeout(() => socket.destroy(new Error(`Postgres sent nothing for ${silenceMs} ms after a query; the connection is dropped`)), silenceMs).unref()
      raw.write(chunk, done)
    },
    read() {
      raw.resume()
    },
    final(done) {
      raw.end(done)
    },
    destroy(cause, done) {
      heard()
      raw.destroy()
      done(cause)
    },
  })
  raw.on('data', (data) => {
    heard()
    if (!socket.push(data)) raw.pause()
  })
  raw.on('end', () => socket.push(null))
  raw.on('error', (cause) => socket.destroy(cause))
  raw.on('close', () => socket.destroy())
  // What postgres.js reads of a socket besides the stream: its state, keepalive, and the host for TLS SNI.
  Object.defineProperty(socket, 'readyState', { get: () => (socket.destroyed ? 'closed' : raw.readyState) })
  Object.assign(socket, { host, setKeepAlive: (enable: boolean, delay: number) => raw.setKeepAlive(enable, delay) })
  return socket
}
