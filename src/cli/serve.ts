import { withEngineOptions } from '../ops/engine-options.ts'
import { runServer } from '../server.ts'
import type { ServerCommand } from './command.ts'

/** `ofage serve` (and `ofage` alone): the server, until SIGTERM or SIGINT (src/server.ts). */
export const serve: ServerCommand = {
  kind: 'server',
  name: 'serve',
  usage: 'serve                                   run the server (the default)',
  subcommands: [],
  options: {},
  run: (config, commands) => {
    // `bun start` made sure of it before loading anything; `ofage serve` of the binary and `bun run cli` do it here.
    withEngineOptions()
    return runServer(config, { commands })
  },
}
