import { withEngineOptions } from './ops/engine-options.ts'

// Before the server's modules load: this may start the process again (src/ops/engine-options.ts).
withEngineOptions()
const { main } = await import('./cli.ts')

/** `bun start`: configuration → database → migrations → keys → HTTP server. */
await main(['serve'])
