import { createServer, type Server } from 'node:net'

/** A TCP listener on this machine that counts the connections it accepts and answers each with `response`. */
export type Listener = { port: number; connections: number; close(): Promise<void> }

/**
 * Starts a listener on `host` (`127.0.0.1`, `::1`), a free port. Raw TCP rather than an HTTP server: a
 * connection counts even when what arrives is not HTTP (a TLS hello to a plain port), so "nothing reached
 * it" means no connection at all, which is what a port probe needs.
 */
export async function listen(host: string, response = 'HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n'): Promise<Listener> {
  const listener = { port: 0, connections: 0, close: async () => {} }
  const server: Server = createServer((socket) => {
    listener.connections++
    socket.once('data', () => socket.end(response))
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  listener.port = (server.address() as { port: number }).port
  listener.close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return listener
}
