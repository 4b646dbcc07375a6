/**
 * The address a request came from, for abuse limits: the socket's, read from the server only when a route
 * asks (read for every request, it was a `getpeername` system call each, and most never need it). Behind
 * a reverse proxy (TRUST_PROXY=1) the proxy's own entry in X-Forwarded-For, the last one, is the visitor's:
 * earlier entries are whatever the client wrote. A request with neither (an in-process test, the CLI) shares
 * the address "local", and so does one whose client hung up before its route asked: such a client never
 * reads the answer, and its hits still count, together, against that one address's limit.
 */
type Sockets = { requestIP(request: Request): { address: string } | null }

/** The server the requests come in on: set once by src/server.ts, absent in process (tests, the CLI). */
let sockets: Sockets | undefined

export function readPeersFrom(server: Sockets | undefined): void {
  sockets = server
}

export function peerAddress(request: Request, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim()
    if (forwarded && /^[0-9A-Fa-f.:]{2,45}$/.test(forwarded)) return forwarded
  }
  return sockets?.requestIP(request)?.address ?? 'local'
}
