import { chmodSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Services } from './boot.ts'
import type { CommandRunner, Io } from './cli/command.ts'
import { upToDate } from './db/migrate.ts'

/**
 * The embedded store's admin socket. A server on PGlite owns the data directory, so CLI commands reach
 * it through a Unix socket in DATA_DIR instead of opening the store behind its back. The socket is
 * owner-only (0600): whoever may read the data directory may run commands, nobody else.
 */
export function adminSocketPath(dataDir: string): string {
  return join(dataDir, 'admin.sock')
}

type Reply = { status: number; out: string[]; err: string[] }

/** Serves the socket: each command line it is sent runs with `commands` (src/cli/run.ts) on the server's own services. */
export function serveAdminSocket(running: Services, dataDir: string, commands: CommandRunner): { stop(): Promise<void> } {
  const path = adminSocketPath(dataDir)
  // The server migrated when it started: `migrate` through its socket finds nothing left to apply.
  const services: Services = { ...running, migrations: upToDate() }
  rmSync(path, { force: true })
  const server = Bun.serve({
    unix: path,
    async fetch(request) {
      const { argv } = (await request.json()) as { argv?: unknown }
      if (!Array.isArray(argv) || !argv.every((arg) => typeof arg === 'string') || ['serve', 'help'].includes(String(argv[0]))) {
        return Response.json({ status: 2, out: [], err: ['ofage: not a command the server runs'] } satisfies Reply)
      }
      const reply: Reply = { status: 0, out: [], err: [] }
      reply.status = await commands(services, argv, { out: (text) => reply.out.push(text), err: (text) => reply.err.push(text) })
      return Response.json(reply)
    },
  })
  chmodSync(path, 0o600)
  return {
    async stop() {
      await server.stop()
      rmSync(path, { force: true })
    },
  }
}

/** Sends a command line to the running server and prints its answer as if it had run here. */
export async function forwardCommand(path: string, argv: string[], io: Io): Promise<number> {
  const response = await fetch('http://ofage/command', {
    unix: path,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ argv }),
  })
  const reply = (await response.json()) as Reply
  for (const line of reply.out) io.out(line)
  for (const line of reply.err) io.err(line)
  return reply.status
}
