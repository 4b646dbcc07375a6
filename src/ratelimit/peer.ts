/**
 * The address a request came from, for abuse limits. The server records the socket's address for each
 * request it hands to the app; behind a reverse proxy (TRUST_PROXY=1) the proxy's own entry in
 * X-Forwarded-For, the last one, is the visitor's: earlier entries are whatever the client wrote.
 * A request with neither (an in-process test, the CLI) shares the address "local".
 */
const peers = new WeakMap<Request, string>()

export function rememberPeer(request: Request, address: string | undefined): void {
  if (address) peers.set(request, address)
}

export function peerAddress(request: Request, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get('x-forwarded-for')?.split(',').at(-1)?.trim()
    if (forwarded && /^[0-9A-Fa-f.:]{2,45}$/.test(forwarded)) return forwarded
  }
  return peers.get(request) ?? 'local'
}
